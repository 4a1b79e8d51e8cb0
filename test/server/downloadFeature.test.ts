// The local model's download through the real language server: the editor asks what would be
// downloaded, then downloads it from a real HTTP server on 127.0.0.1 into the models folder it
// named, with work-done progress; a wrong digest is refused with a message and leaves nothing.
import test, { after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { CancellationTokenSource } from 'vscode-jsonrpc';
import { join } from 'node:path';
import {
  DownloadLocalModelRequest,
  LocalModelDownloadInfoRequest,
  type DownloadLocalModelResult,
  type LocalModelDownloadInfo,
} from '../../src/protocol/protocol';
import { startFileServer } from '../helpers/fileServer';
import { tempDir } from '../helpers/paths';
import { startLsp, type LspSession } from './lspHarness';

const FILE = 'tiny-coder-q8_0.gguf';
const BODY = Buffer.concat([Buffer.from('GGUF'), Buffer.from([3, 0, 0, 0]), randomBytes(512 * 1024)]);
const SHA256 = createHash('sha256').update(BODY).digest('hex');

const tmp = tempDir('coderag-download-lsp-');
after(() => tmp.cleanup());

/** The language server on an empty workspace `name`, its models folder `modelsDir`, downloading `url` (checked against SHA256) when given. */
async function serverFor(name: string, modelsDir: string, url?: string): Promise<LspSession> {
  const workspace = join(tmp.path, name);
  mkdirSync(workspace, { recursive: true });
  const settings = { model: { provider: 'embedded' }, ...(url ? { local: { downloadUrl: url, downloadSha256: SHA256 } } : {}) };
  return startLsp(workspace, settings, { initializationOptions: { modelsDir } });
}

void test('coderag/downloadLocalModel downloads the settings’ GGUF file into the models folder, with progress', async () => {
  const server = await startFileServer(BODY, FILE);
  const modelsDir = join(tmp.path, 'globalStorage', 'models');
  const lsp = await serverFor('workspace', modelsDir, server.url);
  try {
    const info = (await lsp.connection.sendRequest(LocalModelDownloadInfoRequest.method, {})) as LocalModelDownloadInfo;
    assert.deepEqual(info, { ok: true, host: new URL(server.url).host, fileName: FILE, totalBytes: BODY.length });

    const result = (await lsp.connection.sendRequest(DownloadLocalModelRequest.method, {
      workDoneToken: 'dl-1',
    })) as DownloadLocalModelResult;
    assert.deepEqual(result, { ok: true, path: join(modelsDir, FILE) });
    assert.ok(readFileSync(join(modelsDir, FILE)).equals(BODY));
    assert.deepEqual(readdirSync(modelsDir).sort(), [FILE, `${FILE}.sha256`]);
    const mine = lsp.progress.filter((p) => p.token === 'dl-1').map((p) => p.value);
    assert.equal(mine[0]?.kind, 'begin');
    assert.equal(mine[0]?.title, `Downloading ${FILE}`);
    const reports = mine.filter((v) => v.kind === 'report');
    assert.equal(reports.at(-1)?.percentage, 100);
    assert.equal(reports.at(-1)?.message, '0.5 MB of 0.5 MB');
    assert.equal(mine.at(-1)?.kind, 'end');
    // Downloaded: the next question says so.
    const again = (await lsp.connection.sendRequest(LocalModelDownloadInfoRequest.method, {})) as LocalModelDownloadInfo;
    assert.equal(again.downloadedPath, join(modelsDir, FILE));

    const wrong = (await lsp.connection.sendRequest(DownloadLocalModelRequest.method, {
      url: server.url.replace(FILE, 'other.gguf'),
      sha256: '0'.repeat(64),
    })) as DownloadLocalModelResult;
    assert.equal(wrong.ok, false);
    assert.match(wrong.message ?? '', /other\.gguf is not the file expected: SHA-256 mismatch \(expected 0{64}, got [0-9a-f]{64}\)/);
    assert.deepEqual(readdirSync(modelsDir).sort(), [FILE, `${FILE}.sha256`]);
    assert.ok(
      lsp.logs.every((l) => !l.includes('secret-in-query')),
      'the logs name the host and file, never the query string',
    );
  } finally {
    await lsp.close();
    await server.close();
  }
});

void test('without the settings the server says both are needed and downloads nothing', async () => {
  const lsp = await serverFor('workspace2', join(tmp.path, 'm2'));
  try {
    const result = (await lsp.connection.sendRequest(DownloadLocalModelRequest.method, {})) as DownloadLocalModelResult;
    assert.equal(result.ok, false);
    assert.match(result.message ?? '', /set both coderag\.local\.downloadUrl .* and coderag\.local\.downloadSha256/);
  } finally {
    await lsp.close();
  }
});

void test('cancelling the request (the notification’s Cancel) stops the download and keeps only the partial file', async () => {
  const server = await startFileServer(BODY, FILE);
  server.behaviour.hangAfter = 200_000;
  const modelsDir = join(tmp.path, 'm3');
  const lsp = await serverFor('workspace3', modelsDir, server.url);
  try {
    const cancel = new CancellationTokenSource();
    const pending = lsp.connection.sendRequest(DownloadLocalModelRequest.method, { workDoneToken: 'dl-3' }, cancel.token);
    const part = join(modelsDir, `${FILE}.part`);
    for (let i = 0; i < 200 && !(existsSync(part) && statSync(part).size >= 200_000); i++) await new Promise((r) => setTimeout(r, 25));
    cancel.cancel();
    const result = (await pending) as DownloadLocalModelResult;
    assert.equal(result.ok, false);
    assert.equal(result.cancelled, true);
    assert.deepEqual(readdirSync(modelsDir), [`${FILE}.part`]);
    assert.equal(lsp.progress.filter((p) => p.token === 'dl-3').at(-1)?.value.kind, 'end');
  } finally {
    await lsp.close();
    await server.close();
  }
});
