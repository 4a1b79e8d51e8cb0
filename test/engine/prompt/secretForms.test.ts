// Credential forms the detector of the file being completed reads since the third corpus's held-out
// part was scored: values in pieces read whole, prose in another language (inflected words, the
// English word in a foreign sentence, a comment's next line), test rows named by a tuple, key bodies
// as a list's items, known drivers' password positions, a key-named random value in a YAML list;
// and the look-alikes that stay (a pinned image digest, ASCII code beside the English word).
import test from 'node:test';
import assert from 'node:assert/strict';
import { maskStrings } from '../../../src/engine/prompt/maskStrings';
import { redactSecrets } from '../../../src/engine/prompt/redact';

async function sent(code: string): Promise<string> {
  return (await redactSecrets(code)).text;
}

function gone(out: string, ...values: string[]): void {
  for (const v of values) assert.ok(!out.includes(v), `${v} reached the model:\n${out}`);
}

void test('a DSN, a user:password pair and a JWT in joined pieces are found as they are whole; the rest of the line stays', async () => {
  const dsn = await sent('String url = "jdbc:oracle:thin:billing/" + "Tq8!vWz3Lp" + "@//" + host + ":1521/BILLPDB";\n');
  gone(dsn, 'Tq8!vWz3Lp');
  assert.match(dsn, /:1521\/BILLPDB/);
  const basic = await sent(
    'String auth = Base64.getEncoder().encodeToString(("svc-sync" + ":" + "m4#Rk9pQ2zXv").getBytes(StandardCharsets.UTF_8));\n',
  );
  gone(basic, 'm4#Rk9pQ2zXv');
  const jwt = await sent(
    [
      'static String deviceToken() {',
      '    StringBuilder sb = new StringBuilder();',
      '    sb.append("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJkZXZpY2Ut");',
      '    sb.append("NDQyIiwiaWF0IjoxNzE2OTAwMDAwLCJleHAiOjE3NDg0MzYwMDB9.Qm");',
      '    sb.append("Zx7kP2vN9wR4tY6uI8oA1sD3fG5hJ0lKzXcVbNmQw");',
      '    return sb.toString();',
      '}',
      '',
    ].join('\n'),
  );
  gone(jwt, 'NDQyIiwiaWF0IjoxNzE2OTAwMDAwLCJleHAiOjE3NDg0MzYwMDB9', 'Zx7kP2vN9wR4tY6uI8oA1sD3fG5hJ0lKzXcVbNmQw');
});

void test("a builder's appends bound to a key are the key; a log message's pieces stay", async () => {
  const out = await sent(
    [
      'StringBuilder sb = new StringBuilder();',
      'sb.append("Hq3vT8xLm2").append("Pw7Zc4Rk9N");',
      'sb.append("Jd5Fy1Gs6B");',
      'this.signingKey = sb.toString().getBytes(StandardCharsets.UTF_8);',
      'log.info("Connected to " + "ledger" + " in " + ms + " ms");',
      '',
    ].join('\n'),
  );
  gone(out, 'Hq3vT8xLm2', 'Pw7Zc4Rk9N', 'Jd5Fy1Gs6B');
  assert.match(out, /"Connected to " \+ "ledger" \+ " in "/);
});

void test('prose in another language: an inflected word, the English word in a foreign sentence, a value on the next comment line', async () => {
  const turkish = await sent('// Test sunucusundaki servis kullanıcısının şifresi Vb7#qL2!xR9m olarak ayarlandı.\nint x = 1;\n');
  gone(turkish, 'Vb7#qL2!xR9m');
  const italian = await sent("# La password dell'utente di prova del magazzino è Gq4$Tn8wZe2, scade a marzo.\nx = 1\n");
  gone(italian, 'Gq4$Tn8wZe2');
  const spanish = await sent(
    '/*\n * El servicio de facturas del entorno de pruebas acepta la clave de acceso\n * 7hKq2LmZ9xVb3NcR8sTd4FgY6pWj1QeA en la cabecera.\n */\n',
  );
  gone(spanish, '7hKq2LmZ9xVb3NcR8sTd4FgY6pWj1QeA');
  // Two credentials in one window: the second word starts its own reading.
  const russian = await sent(
    '/**\n * Пароль от стенда — Kp8*Wz2!Lq, не менять.\n * Токен доступа к API, вот он: Rt5Yu7Io9Pa1Sd3Fg5Hj7Kl9Zx2Cv4Bn6\n */\n',
  );
  gone(russian, 'Kp8*Wz2!Lq', 'Rt5Yu7Io9Pa1Sd3Fg5Hj7Kl9Zx2Cv4Bn6');
});

void test('an identifier that starts like an inflected word is no prose: `hasLocale`, `hasLog4jBeenShutDown` (haslo); `kennwortDb` is', async () => {
  const code = '        if (!hasLocale && !hasTZ && !asString) {\n    private boolean hasLog4jBeenShutDown(final Disruptor<Event> d) {\n';
  assert.equal(await sent(code), code);
  gone(await sent('// kennwortDb ist Xk8#pL2qWz\n'), 'Xk8#pL2qWz');
});

void test('ASCII code beside the English word is no foreign prose (a class of accented letters under `i` takes `s`)', async () => {
  const code =
    '    HfApi(token=HF_TOKEN).upload_folder(folder_path=local_dir, repo_id="acme/churn", path_in_repo="models/churn")\n# Übersicht\n';
  assert.equal(await sent(code), code);
});

void test('test rows named by a tuple, as pytest.param calls or lists: the password column', async () => {
  const out = await sent(
    [
      '@pytest.mark.parametrize(',
      '    ("login", "password", "ok"),',
      '    [',
      '        pytest.param("admin", "Zr8!kW2qLp", True, id="admin"),',
      '        ["viewer", "blue_heron_2021", False],',
      '    ],',
      ')',
      'def test_login(login, password, ok): ...',
      '',
    ].join('\n'),
  );
  gone(out, 'Zr8!kW2qLp', 'blue_heron_2021');
  assert.match(out, /"admin"/);
  assert.match(out, /"viewer"/);
});

void test("an OpenSSH key body as a list's items, its last line shorter, is gone whole", async () => {
  const lines = [
    'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW',
    'QyNTUxOQAAACDq7Yb2Lx9Rk4Mw8Nc3Vd5Fe1Gh6Jt0Ks2Lp4Qr9Sx3Tv7Uy1WzAAAAJD4aKLo',
    'AAAAQGpZ3Xk8Lm2Nq7Rs4Tv9Wx1Yz6Ab3Cd8Ef0Gh5Ij2Kl7Mn4Op9Qr1St6Uv3Wx8Yz0',
    'Hq5Jt2Lw9Ny4Pb7Rd1TfAAAACWRlcGxveUBjaQE=',
  ];
  const out = await sent(`KEY_LINES = [\n${lines.map((l) => `    "${l}",`).join('\n')}\n]\n`);
  gone(out, ...lines);
});

void test("known drivers' password positions: pymssql's third, ldap3.Connection's third", async () => {
  const out = await sent(
    [
      'conn = pymssql.connect("sql-hr01", "hr_export", "Nv6#pQ2wLz8!", "HR")',
      'ldap = ldap3.Connection(server, "CN=svc-hr,DC=corp,DC=example", "Yt4!mK9xRb2&", auto_bind=True)',
      '',
    ].join('\n'),
  );
  gone(out, 'Nv6#pQ2wLz8!', 'Yt4!mK9xRb2&');
  assert.match(out, /"HR"/);
});

void test("a YAML list's key-named value of random shape goes; a key-named word and a pinned image digest stay", async () => {
  const yaml = await sent(
    'receivers:\n  - name: pager\n    configs:\n      - service_key: Jq7Rm2Xw9Lp4Tz6Nb3Vc8Ks5\n      - sort_key: created_at\n',
  );
  gone(yaml, 'Jq7Rm2Xw9Lp4Tz6Nb3Vc8Ks5');
  assert.match(yaml, /sort_key: created_at/);
  const image = 'IMAGES = {"redis": "redis@sha256:4a1c0e8f92b7d63e5a0f1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6a7"}\n';
  assert.equal(await sent(image), image);
});

void test('an API key beside its secret in one object goes with it; a lookup key beside a flag stays', async () => {
  const out = await sent('CFG = \'{"registry": {"key": "Qm7Wx2Lp9Rz4Tk", "secret": "Vb3Nc8Xz1Lk5Jh7Gf2Ds9Aq4Wer6Ty0"}}\'\n');
  gone(out, 'Qm7Wx2Lp9Rz4Tk', 'Vb3Nc8Xz1Lk5Jh7Gf2Ds9Aq4Wer6Ty0');
  const flag = 'OPTIONS = {"key": "display_name", "secret": False}\n';
  assert.equal(await sent(flag), flag);
});

void test("another file's char array is a string written a character at a time: its characters are masked, a pair of chars stays", () => {
  const java = "static final char[] STORE_PASS = {'q', '7', 'X', 'm', '2', '!', 'z'};\nchar[] pair = {'a', 'b'};\n";
  const out = maskStrings(java, 'java').text;
  assert.ok(!/'q', '7', 'X'/.test(out), out);
  assert.match(out, /\{'a', 'b'\}/);
});

void test('the fourth round developed on: schemes with `_`, placeholder defaults under a key, dotted random values, char arrays under a secret name', async () => {
  const out = await sent(
    [
      'String bus = "kafka+sasl_ssl://producer:Hq7!mZ2pLx9Wv@kafka-3.corp.local:9093";',
      '@Value("${ingest.hmac-key:Qx8vT2mLp9Rz4Wk6Nc3Bh7Jd5Fs1Gy0A+bC=}")',
      'String xml = "<password>zR8mQ2vLx9Tp4.k</password>";',
      "static final char[] TRUST_PASSWORD = {'v', '7', 'Q', 'm', '2', 'x'};",
      'static final String ARCHIVE_KEY = "Lm3Qr8Tz2Wx"',
      '        + "Vb7Nc4Kp9Jh";',
      '',
    ].join('\n'),
  );
  gone(out, 'Hq7!mZ2pLx9Wv', 'Qx8vT2mLp9Rz4Wk6Nc3Bh7Jd5Fs1Gy0A+bC=', 'zR8mQ2vLx9Tp4.k', "'v', '7', 'Q'", 'Lm3Qr8Tz2Wx', 'Vb7Nc4Kp9Jh');
  const digits = "static final char[] DIGITS = {'0', '1', '2', '3'};\n";
  assert.equal(await sent(digits), digits);
});

void test("the fourth round developed on: ftplib's, UnboundID's and JavaMail's password positions, a session cookie as an entry", async () => {
  const out = await sent(
    [
      'ftp = ftplib.FTP(HOST, "edi_in", "Tz4!qW8mLp2x", timeout=30)',
      'return new LDAPConnection("ldap.corp.lan", 636, "cn=agent,dc=corp", "Rk9_pZ3-mQ7x");',
      'transport.connect("smtp.corp.lan", "reports", "Wq5Nz.8vKm3.Lp");',
      'client = httpx.Client(cookies={"sessionid": "7k2m9q4x8v1z6c3b5n0p"})',
      '',
    ].join('\n'),
  );
  gone(out, 'Tz4!qW8mLp2x', 'Rk9_pZ3-mQ7x', 'Wq5Nz.8vKm3.Lp', '7k2m9q4x8v1z6c3b5n0p');
  assert.match(out, /"smtp\.corp\.lan"/);
});

void test("the fourth round developed on: JUnit's value and method sources, a key returned decoded, Korean, Hindi and Vietnamese words", async () => {
  const out = await sent(
    [
      'class VerifierTest {',
      '    @ParameterizedTest',
      '    @ValueSource(strings = {"Pq7Wz2Lm9Xk4Rv8Tn3Bc"})',
      '    void acceptsToken(String token) { }',
      '    static Stream<Arguments> rotated() {',
      '        return Stream.of(Arguments.of("billing", "Jd4~Kp9!Lx2q"));',
      '    }',
      '    @ParameterizedTest',
      '    @MethodSource("rotated")',
      '    void rejects(String user, String oldSecret) { }',
      '    static byte[] transitKey() {',
      '        return HexFormat.of().parseHex("9f2c4e6a8b0d1f3e5a7c9b1d3f5e7a9c");',
      '    }',
      '}',
      '// 게이트웨이 API 키: Vx8Qm2Lz7Rk4Tp9Wn3Bc6Jd (스테이징 전용)',
      '// कृपया ध्यान दें: परीक्षण खाते का पासवर्ड Hm4!qZ8x है।',
      'extra = {"mật_khẩu": "Nc7-Rz2-Lq9x"}',
      '',
    ].join('\n'),
  );
  gone(
    out,
    'Pq7Wz2Lm9Xk4Rv8Tn3Bc',
    'Jd4~Kp9!Lx2q',
    '9f2c4e6a8b0d1f3e5a7c9b1d3f5e7a9c',
    'Vx8Qm2Lz7Rk4Tp9Wn3Bc6Jd',
    'Hm4!qZ8x',
    'Nc7-Rz2-Lq9x',
  );
  assert.match(out, /"billing"/);
});

void test("another file's value written a character or a byte at a time, its array cut short by a snippet, or a byte list: masked; a short byte list stays", () => {
  const cut = maskStrings("    private static final char[] STORE_PW = {'K', 'r', '7', 'q', 'Z', '2', 'x' ...\n", 'java').text;
  assert.ok(!/'K', 'r', '7'/.test(cut), cut);
  const py = maskStrings('API_SECRET = bytes([0x4d, 0x71, 0x39, 0x5a, 0x6b, 0x32, 0x77, 0x58, 0x70]).decode("ascii")\n', 'python').text;
  assert.ok(!/0x4d, 0x71, 0x39/.test(py), py);
  const java = maskStrings('byte[] k = new byte[] {(byte) 0x1f, 0x2e, 0x3d, 0x4c, 0x5b, 0x6a, 0x79, 0x08};\n', 'java').text;
  assert.ok(!/0x1f, 0x2e, 0x3d/.test(java), java);
  const magic = 'PNG = bytes([137, 80, 78, 71])\n';
  assert.equal(maskStrings(magic, 'python').text, magic);
});
