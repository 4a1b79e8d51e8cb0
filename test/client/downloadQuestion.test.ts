// The consent question before the local model's download names the host, the file and its size,
// and says where the file goes and that it is checked.
import test from 'node:test';
import assert from 'node:assert/strict';
import { downloadQuestion, sizeWords } from '../../src/client/downloadQuestion';

void test('the question names the size and host, the detail the file, the digest check and the storage', () => {
  const q = downloadQuestion({ ok: true, host: 'huggingface.co', fileName: 'qwen2.5-coder-1.5b-q8_0.gguf', totalBytes: 1_646_572_448 });
  assert.equal(q.message, "Download 1.6 GB from huggingface.co into VS Code's storage?");
  assert.match(q.detail, /^qwen2\.5-coder-1\.5b-q8_0\.gguf \(coderag\.local\.downloadUrl\) is downloaded once/);
  assert.match(q.detail, /only if its SHA-256 matches coderag\.local\.downloadSha256/);
  assert.equal(
    downloadQuestion({ ok: true, host: 'example.com', fileName: 'm.gguf' }).message,
    "Download a file of unknown size from example.com into VS Code's storage?",
  );
});

void test('sizes read as a download dialog writes them', () => {
  assert.equal(sizeWords(1_646_572_448), '1.6 GB');
  assert.equal(sizeWords(512_000_000), '512 MB');
  assert.equal(sizeWords(524_296), '0.5 MB');
});
