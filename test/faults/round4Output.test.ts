// Fault matrix: what the model writes is cleaned before it is shown, a model server's untrusted TLS
// certificate is named as such, and the learned state's saves leave no temp file. Observed as a
// user would: the ghost text and the status of the real language server over stdio, against the
// Ollama-compatible test server (over https with certificates made here by openssl), and the files
// the learned state leaves in the cache folder.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fixturesDir, tempDir } from '../helpers/paths';
import { startOllamaTestServer, type OllamaTestServer } from '../helpers/ollamaServer';
import { makeTestCertificates, type KeyAndCert, type TestCertificates } from '../helpers/tls';
import { startLsp, type LspSession } from '../server/lspHarness';
import { CompletionOutcomeNotification, type StatusParams } from '../../src/protocol/protocol';

const MODEL = 'coderag-lm:test';
// pyshop's app/main.py line 19 (0-based 18), after `    service = CheckoutService(`; `cart, gateway)` follows the cursor.
const LINE = 18;
const COL = '    service = CheckoutService('.length;

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    work,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms).unref()),
  ]);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Every special token of the families the project knows, as a model writes them, and the bidi controls. */
const SPECIAL = /<\|[a-z_]+\|>|<(?:fim|file|repo)_[a-z]+>|<｜[^｜]+｜>|<\|EOT\|>/;
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** A session against the test server, whose answer to each prompt `reply` gives. */
async function modelSession(
  family: string,
  reply: { current: (prompt: string) => string },
): Promise<{ server: OllamaTestServer; lsp: LspSession; uri: string }> {
  const server = await startOllamaTestServer((prompt) => Promise.resolve({ text: reply.current(prompt) }), { models: [MODEL] });
  const lsp = await startLsp(join(fixturesDir, 'pyshop'), {
    debounceMs: 0,
    model: { provider: 'openai', family, timeoutMs: 5000 },
    openai: { baseUrl: server.url, model: MODEL },
    rerank: { kind: 'none' },
    suggestions: { show: 'all' },
    experimental: { model: { maxNewTokens: 24 }, query: { strategy: 'last10' }, cache: { size: 0 } },
  });
  await lsp.waitForStatus((s) => s.folders.length > 0 && s.folders.every((f) => f.state === 'ready'));
  return { server, lsp, uri: lsp.open(join(fixturesDir, 'pyshop', 'app', 'main.py'), 'python') };
}

/** The prompt of the last completion request the server received. */
function lastPrompt(server: OllamaTestServer): string {
  const body = server.requests.filter((r) => r.path === '/v1/completions').at(-1)?.body as { prompt?: unknown } | undefined;
  return String(body?.prompt ?? '');
}

void describe('item 6: the ghost text holds no special token of the model family, no bidi control, no echo of the prompt', () => {
  const reply = { current: (_prompt: string): string => 'cart, gateway, gateway=gateway' };
  let session: Awaited<ReturnType<typeof modelSession>>;

  before(async () => {
    session = await modelSession('qwen2.5-coder', reply);
  });
  after(async () => {
    await session?.lsp.close();
    await session?.server.close();
  });

  async function ghostText(answer: (prompt: string) => string): Promise<string[]> {
    reply.current = answer;
    const items = await withTimeout(session.lsp.complete(session.uri, LINE, COL), 20_000, 'the completion');
    return items.map((i) => String(i.insertText));
  }

  void test("an answer with special tokens (Qwen `<|fim_pad|>`, `<|repo_name|>`, other families' markers) is cut at the first one", async () => {
    for (const token of ['<|fim_pad|><|fim_pad|>', '<|repo_name|>ws0', '<|im_start|>assistant', '<fim_pad>', '<｜fim▁hole｜>', '<|EOT|>']) {
      const shown = await ghostText(() => `cart, gateway, gateway=gateway${token}\n    receipt = service.checkout()`);
      assert.deepEqual(shown, ['cart, gateway, gateway=gateway'], `after ${token}`);
    }
  });

  void test("a model that echoes the prompt (Qwen's `<|repo_name|>ws0` head, or that head without its tokens) gives no suggestion", async () => {
    assert.deepEqual(
      await ghostText(() => 'cart, gateway, gateway=gateway'),
      ['cart, gateway, gateway=gateway'],
      'an answer of its own is shown',
    );
    const prompt = lastPrompt(session.server);
    assert.ok(prompt.startsWith('<|repo_name|>'), `the prompt has the repository head: ${JSON.stringify(prompt.slice(0, 80))}`);
    for (const echo of [(p: string) => p, (p: string) => p.replace(new RegExp(SPECIAL.source, 'g'), '')]) {
      const shown = await ghostText(echo);
      const explained = await session.lsp.explain();
      const raw = explained?.trace.model?.raw ?? '';
      assert.ok(raw.startsWith(echo(prompt).slice(0, 10)), `the model wrote the prompt's head: ${JSON.stringify(raw.slice(0, 60))}`);
      assert.deepEqual(shown, [], `nothing is shown (the model wrote ${JSON.stringify(explained?.trace.model?.raw.slice(0, 60))})`);
    }
  });

  void test('the directional marks LRM, RLM and ALM, and the embeddings, overrides and isolates, never reach the ghost text', async () => {
    const shown = await ghostText(() => 'cart,\u200f gateway\u200e, \u061cgateway\u202b=\u2067gateway\u2069\u202c');
    assert.deepEqual(shown, ['cart, gateway, gateway=gateway']);
    for (const text of shown) {
      assert.doesNotMatch(text, BIDI);
      assert.doesNotMatch(text, SPECIAL);
    }
  });
});

void describe('item 6: a model without fill-in-the-middle (`plain`, the comment form) that echoes the prompt gives no suggestion', () => {
  const reply = { current: (_prompt: string): string => 'cart, gateway, gateway=gateway' };
  let session: Awaited<ReturnType<typeof modelSession>>;

  before(async () => {
    session = await modelSession('plain', reply);
  });
  after(async () => {
    await session?.lsp.close();
    await session?.server.close();
  });

  void test("the prompt again, or the current file's path comment the prompt writes, is not shown", async () => {
    const first = await withTimeout(session.lsp.complete(session.uri, LINE, COL), 20_000, 'the completion');
    assert.deepEqual(
      first.map((i) => i.insertText),
      ['cart, gateway, gateway=gateway'],
      'an answer of its own is shown',
    );
    const prompt = lastPrompt(session.server);
    assert.match(prompt, /^'''\n# pyshop\//, 'the prompt starts with its snippet block and path headings');
    assert.match(prompt, /^# app\/main\.py$/m, "the prompt names the current file's path");
    for (const answer of [(p: string) => p, () => '# app/main.py\n    receipt = service.checkout()']) {
      reply.current = answer;
      const items = await withTimeout(session.lsp.complete(session.uri, LINE, COL), 20_000, 'the echo');
      assert.deepEqual(
        items.map((i) => i.insertText),
        [],
        `the answer ${JSON.stringify(answer(prompt).slice(0, 40))} is not shown`,
      );
    }
  });
});

void describe("item 6: an https model server whose certificate is not trusted: the status names the certificate, not 'not reachable'", () => {
  let certs: TestCertificates;
  const servers: OllamaTestServer[] = [];
  before(() => {
    certs = makeTestCertificates();
  });
  after(async () => {
    for (const s of servers) await s.close();
    certs?.cleanup();
  });

  async function https(tls: KeyAndCert): Promise<OllamaTestServer> {
    const server = await startOllamaTestServer(() => Promise.resolve({ text: 'cart, gateway, gateway=gateway' }), { models: [MODEL], tls });
    servers.push(server);
    return server;
  }

  void test('self-signed, another host name, expired, an unknown root: each named with its code; a trusted one answers', async () => {
    const selfSigned = await https(certs.selfSigned);
    const settings = (provider: 'ollama' | 'openai', url: string): Record<string, unknown> => ({
      debounceMs: 0,
      model: { provider, family: 'plain', timeoutMs: 5000 },
      ollama: { host: url, completionModel: MODEL },
      openai: { baseUrl: url, model: MODEL },
      rerank: { kind: 'none' },
    });
    // The test authority is trusted as an organisation's own would be, so a leaf it signed reaches the host name and date checks.
    const before = process.env.NODE_EXTRA_CA_CERTS;
    process.env.NODE_EXTRA_CA_CERTS = certs.caFile;
    let lsp: LspSession;
    try {
      lsp = await startLsp(join(fixturesDir, 'pyshop'), settings('ollama', selfSigned.url));
    } finally {
      if (before === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
      else process.env.NODE_EXTRA_CA_CERTS = before;
    }
    try {
      const statusFor = (url: string): Promise<StatusParams> =>
        lsp.waitForStatus((s) => s.model.endpoint.startsWith(url) && s.model.state !== 'unknown', 30_000);
      const first = await statusFor(selfSigned.url);
      assert.equal(first.model.state, 'certificate');
      assert.equal(first.state, 'modelProblem');
      assert.match(
        first.message,
        /the TLS certificate of Ollama at https:\/\/127\.0\.0\.1:\d+ is not trusted \(DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate\)/,
      );
      assert.doesNotMatch(first.message, /not reachable/);
      assert.match(first.model.action ?? '', /certificate/);
      const cases: Array<[KeyAndCert, RegExp]> = [
        [certs.otherHost, /ERR_TLS_CERT_ALTNAME_INVALID/],
        [certs.expired, /CERT_HAS_EXPIRED/],
        [certs.untrustedChain, /SELF_SIGNED_CERT_IN_CHAIN/],
      ];
      for (const [tls, code] of cases) {
        const server = await https(tls);
        lsp.configure(settings('openai', server.url));
        const status = await statusFor(server.url);
        assert.equal(status.model.state, 'certificate', status.message);
        assert.match(status.message, /the TLS certificate of the completion server at https:\/\/127\.0\.0\.1:\d+\/v1 is not trusted/);
        assert.match(status.message, code);
        assert.doesNotMatch(status.message, /not reachable/);
      }
      const trusted = await https(certs.trusted);
      lsp.configure(settings('openai', trusted.url));
      const ok = await statusFor(trusted.url);
      assert.equal(ok.model.state, 'ok', `a certificate the machine trusts is used: ${ok.message}`);
    } finally {
      await lsp.close();
    }
  });
});

/** Mount a tmpfs of `options` at `path`; false where this process may not. */
function mountTmpfs(path: string, options: string): boolean {
  mkdirSync(path, { recursive: true });
  return spawnSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', path]).status === 0;
}

/** Fill the file system `folder` is on: write until it has no room left. */
function fillDisk(folder: string): void {
  const fd = openSync(join(folder, 'filler'), 'w');
  const chunk = Buffer.alloc(4096, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
  } finally {
    closeSync(fd);
  }
}

const temps = (folder: string): string[] => (existsSync(folder) ? readdirSync(folder).filter((n) => n.endsWith('.tmp')) : []);

void describe('item 7: saves of the learned state leave no temp file', () => {
  void test('a learned-state save on a full disk (a tmpfs) leaves no temp file, and the log says the disk is full', async (t) => {
    const dir = tempDir();
    const cache = join(dir.path, 'cache');
    const server = await startOllamaTestServer(() => Promise.resolve({ text: 'cart, gateway, gateway=gateway' }), { models: [MODEL] });
    let mounted = false;
    let lsp: LspSession | undefined;
    try {
      if (!(mounted = mountTmpfs(cache, 'size=4m'))) return t.skip('mount -t tmpfs is not allowed here');
      lsp = await startLsp(
        join(fixturesDir, 'pyshop'),
        {
          debounceMs: 0,
          model: { provider: 'ollama', family: 'plain', timeoutMs: 5000 },
          ollama: { host: server.url, completionModel: MODEL },
          rerank: { kind: 'none' },
          experimental: { model: { maxNewTokens: 24 }, query: { strategy: 'last10' }, cache: { size: 0 } },
        },
        { cacheDir: cache },
      );
      await lsp.waitForStatus((s) => s.folders.length > 0 && s.folders.every((f) => f.state === 'ready'));
      const uri = lsp.open(join(fixturesDir, 'pyshop', 'app', 'main.py'), 'python');
      const items = await withTimeout(lsp.complete(uri, LINE, COL), 20_000, 'the completion');
      assert.equal(items.length, 1, 'the gate shows the suggestion (its outcome teaches the gate)');
      fillDisk(cache);
      // Every outcome is a save a second later: each one failed, and each left its temp file.
      for (let i = 0; i < 2; i++) {
        const shown = i === 0 ? items : await withTimeout(lsp.complete(uri, LINE, COL), 20_000, 'the completion');
        await lsp.connection.sendNotification(CompletionOutcomeNotification.method, {
          traceId: shown[0]?.traceId,
          outcome: 'accepted',
          acceptedChars: 5,
          shownChars: 5,
        });
        const failed = (): number => lsp!.logs.filter((l) => /saving the learned state failed/.test(l)).length;
        await lsp.waitForLogs(() => failed() > i, 10_000);
      }
      assert.deepEqual(temps(join(cache, 'learning')), [], 'no temp file left to keep the disk full');
      assert.ok(
        lsp.logs.some((l) => /saving the learned state failed: cannot write .*: the disk is full \(ENOSPC\)/.test(l)),
        lsp.logs.filter((l) => /learned state/.test(l)).join('\n'),
      );
    } finally {
      await lsp?.close();
      await server.close();
      if (mounted) spawnSync('umount', [cache]);
      dir.cleanup();
    }
  });

  void test("a crashed run's leftover temp file in the learning folder is gone after the server starts (no completion asked)", async () => {
    const cache = tempDir();
    const server = await startOllamaTestServer(() => Promise.resolve({ text: 'cart, gateway, gateway=gateway' }), { models: [MODEL] });
    let lsp: LspSession | undefined;
    try {
      const learning = join(cache.path, 'learning');
      mkdirSync(learning, { recursive: true });
      const leftover = join(learning, 'pyshop-0123456789ab.gate.json.4242.0badc0de.tmp');
      writeFileSync(leftover, '{"half a save');
      const hourAgo = new Date(Date.now() - 3600_000);
      utimesSync(leftover, hourAgo, hourAgo);
      lsp = await startLsp(
        join(fixturesDir, 'pyshop'),
        {
          debounceMs: 0,
          model: { provider: 'ollama', family: 'plain', timeoutMs: 5000 },
          ollama: { host: server.url, completionModel: MODEL },
          rerank: { kind: 'none' },
        },
        { cacheDir: cache.path },
      );
      await lsp.waitForStatus((s) => s.folders.length > 0 && s.folders.every((f) => f.state === 'ready'));
      for (let waited = 0; existsSync(leftover) && waited < 5000; waited += 100) await sleep(100);
      assert.equal(existsSync(leftover), false, `left: ${temps(learning).join(', ')}`);
      assert.ok(
        lsp.logs.some((l) => /removed 1 temp file\(s\) of interrupted saves: pyshop-0123456789ab\.gate\.json\.4242\.0badc0de\.tmp/.test(l)),
        'the log names what was removed',
      );
    } finally {
      await lsp?.close();
      await server.close();
      cache.cleanup();
    }
  });
});
