// The local model's download against a real HTTP server on 127.0.0.1: the file lands whole and
// verified or not at all; an interrupted download keeps only its part, which the next one resumes
// with a Range request; a server that ignores the range, a wrong digest, a stale part and
// cancellation each end the way a user would expect.
import test, { after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  downloadedModelPath,
  downloadedModels,
  downloadGguf,
  ggufDownloadInfo,
  ggufFileName,
  ggufSourceProblem,
} from '../../../src/engine/models/ggufDownload';
import { isModelError } from '../../../src/engine/models';
import { isCancellationError } from '../../../src/engine/util/errors';
import { startFileServer, type FileServer } from '../../helpers/fileServer';
import { tempDir } from '../../helpers/paths';

const FILE = 'tiny-coder-q8_0.gguf';
// GGUF's magic and version, then random bytes: the download does not read the file.
const BODY = Buffer.concat([Buffer.from('GGUF'), Buffer.from([3, 0, 0, 0]), randomBytes(384 * 1024)]);
const SHA256 = createHash('sha256').update(BODY).digest('hex');

const tmp = tempDir('coderag-gguf-');
const servers: FileServer[] = [];
after(async () => {
  for (const s of servers) await s.close();
  tmp.cleanup();
});

let n = 0;
async function setUp(): Promise<{ dir: string; server: FileServer; source: { url: string; sha256: string } }> {
  const dir = join(tmp.path, `models-${n++}`);
  const server = await startFileServer(BODY, FILE);
  servers.push(server);
  return { dir, server, source: { url: server.url, sha256: SHA256 } };
}

const fast = { stallTimeoutMs: 5_000 };

void test('a download lands as <name>.gguf only once whole and verified, and the finder returns it', async () => {
  const { dir, source } = await setUp();
  const seen: Array<[number, number | undefined]> = [];
  let ggufDuring = false;
  const done = await downloadGguf(dir, source, {
    ...fast,
    onProgress: (loaded, total) => {
      seen.push([loaded, total]);
      ggufDuring ||= existsSync(join(dir, FILE));
    },
  });
  assert.equal(done.path, join(dir, FILE));
  assert.equal(done.alreadyThere, false);
  assert.ok(readFileSync(done.path).equals(BODY));
  assert.equal(ggufDuring, false, 'no .gguf while the bytes arrive');
  assert.deepEqual(readdirSync(dir).sort(), [FILE, `${FILE}.sha256`]);
  assert.equal(readFileSync(join(dir, `${FILE}.sha256`), 'utf8'), `${SHA256}  ${FILE}\n`);
  assert.deepEqual(seen.at(-1), [BODY.length, BODY.length]);
  assert.ok(seen.length > 1, 'progress as the bytes arrive');
  assert.equal(await downloadedModelPath(dir, source), done.path);
  assert.deepEqual(await downloadedModels(dir), [{ path: done.path, sha256: SHA256, bytes: BODY.length }]);
  // A second run finds the file and asks the server nothing.
  const again = await downloadGguf(dir, source, fast);
  assert.equal(again.alreadyThere, true);
});

void test('the finder returns nothing for another digest, and the size comes from a HEAD request', async () => {
  const { dir, source, server } = await setUp();
  await downloadGguf(dir, source, fast);
  assert.equal(await downloadedModelPath(dir, { url: source.url, sha256: 'a'.repeat(64) }), undefined);
  assert.deepEqual(await ggufDownloadInfo(source), { host: new URL(server.url).host, fileName: FILE, totalBytes: BODY.length });
  assert.equal(server.requests.at(-1)?.method, 'HEAD');
});

void test('an interrupted download leaves only the .part, the finder returns nothing, and the next one resumes with Range', async () => {
  const { dir, server, source } = await setUp();
  server.behaviour.cutAfter = 150_000;
  await assert.rejects(downloadGguf(dir, source, fast), (e: unknown) => {
    assert.ok(isModelError(e));
    assert.match(e.message, /Could not download 127\.0\.0\.1:\d+\/tiny-coder-q8_0\.gguf/);
    assert.match(e.message, /the partial file is kept/);
    assert.doesNotMatch(e.message, /secret-in-query/, 'no query string (a token) in the message');
    return true;
  });
  assert.deepEqual(readdirSync(dir), [`${FILE}.part`]);
  const partBytes = readFileSync(join(dir, `${FILE}.part`)).length;
  assert.ok(partBytes > 0 && partBytes <= 150_000, `${partBytes} bytes kept`);
  assert.equal(await downloadedModelPath(dir, source), undefined);
  assert.deepEqual(await downloadedModels(dir), []);

  server.behaviour.cutAfter = undefined;
  const done = await downloadGguf(dir, source, fast);
  assert.equal(server.requests.at(-1)?.range, `bytes=${partBytes}-`);
  assert.equal(done.resumedFrom, partBytes);
  assert.ok(readFileSync(done.path).equals(BODY));
  assert.deepEqual(readdirSync(dir).sort(), [FILE, `${FILE}.sha256`]);
});

void test('a server that ignores Range (200) has the file written again from the start', async () => {
  const { dir, server, source } = await setUp();
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${FILE}.part`), BODY.subarray(0, 100_000));
  server.behaviour.honourRange = false;
  const done = await downloadGguf(dir, source, fast);
  assert.equal(server.requests.length, 1);
  assert.equal(server.requests[0]?.range, 'bytes=100000-');
  assert.equal(done.resumedFrom, 0);
  assert.ok(readFileSync(done.path).equals(BODY));
  assert.deepEqual(readdirSync(dir).sort(), [FILE, `${FILE}.sha256`]);
});

void test('a part that is already the whole file (416) is verified and renamed without a body', async () => {
  const { dir, server, source } = await setUp();
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${FILE}.part`), BODY);
  const done = await downloadGguf(dir, source, fast);
  assert.deepEqual(server.requests, [{ method: 'GET', range: `bytes=${BODY.length}-` }]);
  assert.ok(readFileSync(done.path).equals(BODY));
});

void test("a stale part (another file's bytes) is found out by the digest and the download starts over once", async () => {
  const { dir, server, source } = await setUp();
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${FILE}.part`), randomBytes(100_000));
  const done = await downloadGguf(dir, source, fast);
  assert.deepEqual(
    server.requests.map((r) => r.range),
    ['bytes=100000-', undefined],
  );
  assert.ok(readFileSync(done.path).equals(BODY));
});

void test('a wrong checksum deletes the bytes and fails with a message naming both digests', async () => {
  const { dir, source } = await setUp();
  const wrong = 'b'.repeat(64);
  await assert.rejects(downloadGguf(dir, { url: source.url, sha256: wrong }, fast), (e: unknown) => {
    assert.ok(isModelError(e));
    assert.match(e.message, /SHA-256 mismatch/);
    assert.ok(e.message.includes(`expected ${wrong}`) && e.message.includes(`got ${SHA256}`), e.message);
    assert.match(e.message, /deleted/);
    return true;
  });
  assert.deepEqual(readdirSync(dir), []);
  assert.equal(await downloadedModelPath(dir, { url: source.url, sha256: wrong }), undefined);
});

void test('cancelling through the signal ends as a cancellation and keeps only the part', async () => {
  const { dir, server, source } = await setUp();
  server.behaviour.hangAfter = 200_000;
  const controller = new AbortController();
  const run = downloadGguf(
    dir,
    source,
    { ...fast, onProgress: (loaded) => (loaded >= 200_000 ? controller.abort() : undefined) },
    controller.signal,
  );
  await assert.rejects(run, (e: unknown) => isCancellationError(e));
  assert.deepEqual(readdirSync(dir), [`${FILE}.part`]);
  assert.equal(readFileSync(join(dir, `${FILE}.part`)).length, 200_000);
  assert.equal(await downloadedModelPath(dir, source), undefined);
});

void test('a file over the size limit is refused before a byte is written', async () => {
  const { dir, source } = await setUp();
  await assert.rejects(downloadGguf(dir, source, { ...fast, maxBytes: 1000 }), /over the .* a download may be; nothing was written/);
  assert.deepEqual(readdirSync(dir), []);
});

void test('sources the settings could hold: both needed, http(s) only, no credentials, 64 hex digits; safe file names', () => {
  assert.match(ggufSourceProblem({ url: '', sha256: '' }) ?? '', /set both coderag\.local\.downloadUrl/);
  assert.match(ggufSourceProblem({ url: 'file:///etc/passwd', sha256: SHA256 }) ?? '', /only http and https/i);
  assert.match(ggufSourceProblem({ url: 'https://u:p@example.com/a.gguf', sha256: SHA256 }) ?? '', /user name or password/);
  assert.match(ggufSourceProblem({ url: 'https://example.com/a.gguf', sha256: 'abc' }) ?? '', /64 hex digits/);
  const notUrl = ggufSourceProblem({ url: 'hf_token=hf_abc123 not a url', sha256: SHA256 }) ?? '';
  assert.match(notUrl, /not a valid URL/);
  assert.doesNotMatch(notUrl, /hf_abc123/, 'what the setting holds is not echoed');
  assert.equal(ggufSourceProblem({ url: 'https://example.com/a.gguf', sha256: SHA256.toUpperCase() }), undefined);
  assert.equal(
    ggufFileName('https://huggingface.co/O/R/resolve/main/qwen2.5-coder-1.5b-q8_0.gguf?download=true'),
    'qwen2.5-coder-1.5b-q8_0.gguf',
  );
  assert.equal(ggufFileName('https://example.com/dl/..%2F..%2Fevil'), '_.._evil.gguf');
  assert.equal(ggufFileName('https://example.com/'), 'model.gguf');
});
