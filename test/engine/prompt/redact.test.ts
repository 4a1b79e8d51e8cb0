// Credential-looking values are redacted; ordinary code (hex digests, URLs, names like `tokenizer`) is kept.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isSecretName, redactSecrets, REDACTED, shannonEntropy } from '../../../src/engine/prompt/redact';
import { fixturesDir } from '../../helpers/paths';

const SECRETS = [
  'AKIAQ7XK2M4N6P8R0T3V',
  'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Tr2Lm9Q',
  'hunter2-Orchid-77',
  'ghp_Zx8Qv3LmN7pR2sT9wY4kB6cD1fG5hJ0aE3uI',
  'xoxb-2048-113355-QwErTyUiOpAsDfGh',
  'sk-proj-T4aB9cD2eF7gH1iJ6kL3mN8oP5qR0sTu',
  'Zq3#vL9!mX2@pR7$tW5^yB8&nC4*kD6%',
  'MIIEowIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi8pjmUq5lq4F0jT4mYgQnS7pHd',
];

void test('every credential in the settings fixture is redacted; the hex digest, region and limits are kept', async () => {
  const text = readFileSync(join(fixturesDir, 'secretshop', 'shop', 'settings.py'), 'utf8');
  const { text: out, count } = await redactSecrets(text);
  for (const s of SECRETS) assert.ok(!out.includes(s), `still present: ${s}`);
  assert.equal(count, SECRETS.length);
  assert.ok(out.includes('9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'), 'a sha256 hex literal is not a credential');
  assert.ok(out.includes('DEFAULT_REGION = "eu-west-1"') && out.includes('MAX_TOKENS = 48'));
  assert.ok(out.includes(`DATABASE_PASSWORD = "${REDACTED}"`), 'the literal stays a string for the model');
  assert.match(out, /-----BEGIN RSA PRIVATE KEY-----\n<redacted>\n-----END RSA PRIVATE KEY-----/);
  // The functions that use the settings are untouched.
  assert.ok(out.includes('return {"key": AWS_ACCESS_KEY_ID, "secret": AWS_SECRET_ACCESS_KEY, "region": region}'));
});

void test('assignments in Java, .properties, YAML and JSON; code that reads a secret is kept', async () => {
  const cases: Array<[string, string]> = [
    ['String password = "s3cr3t-Value";', `String password = "${REDACTED}";`],
    ['db.password=hunter', `db.password=${REDACTED}`],
    ['  api_key: abc123XYZ', `  api_key: ${REDACTED}`],
    ['{"apiKey": "k-12345678"}', `{"apiKey": "${REDACTED}"}`],
    ['conn = connect(passwd="letmein99")', `conn = connect(passwd="${REDACTED}")`],
    ['export ACCESS_KEY=Zm9vYmFyYmF6', `export ACCESS_KEY=${REDACTED}`],
  ];
  for (const [input, expected] of cases) assert.equal((await redactSecrets(input)).text, expected, input);
  const kept = [
    'token = settings.SLACK_WEBHOOK_TOKEN',
    'password: str',
    'this.password = password;',
    'api_key = os.environ["API_KEY"]',
    'tokenizer = "bert-base-uncased"',
    'max_tokens = 48',
    'password = ""',
    'password = "${DB_PASSWORD}"',
    'url = "https://example.com/api/v1/Items?id=42&sort=Name"',
    'digest = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"',
    'if password == "guess":',
  ];
  for (const line of kept) assert.deepEqual(await redactSecrets(line), { text: line, count: 0 }, line);
});

void test('a cut private-key block is redacted to the end of the text; names and entropy are judged as documented', async () => {
  const cut = await redactSecrets('key = """-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC');
  assert.equal(cut.count, 1);
  assert.ok(!cut.text.includes('MIIEvQ'));
  assert.ok(isSecretName('AWS_SECRET_ACCESS_KEY') && isSecretName('apiKey') && isSecretName('db.password'));
  assert.ok(!isSecretName('tokenizer') && !isSecretName('max_tokens') && !isSecretName('keyboard'));
  assert.ok(shannonEntropy('9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08') <= 4.0);
});

void test('placeholder values are not credentials (the e2e fixture\'s api_key="demo" reached the model as "<redacted>" and came back as ghost text)', async () => {
  const line = '    gateway = make_gateway(config.DEFAULT_GATEWAY, api_key="demo")';
  assert.deepEqual(await redactSecrets(line), { text: line, count: 0 });
  const main = readFileSync(join(fixturesDir, 'pyshop', 'app', 'main.py'), 'utf8');
  assert.equal((await redactSecrets(main)).count, 0, 'nothing in the e2e fixture is a credential');
});
