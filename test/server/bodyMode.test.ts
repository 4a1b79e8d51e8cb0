// The body mode in the editor: through the real language server, an empty Java method
// gets a multi-line suggestion (one inline item) whose trace lists usages from other files, and
// the explain command shows the sketch, the elements and the usages; typing through the body keeps the cache.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { copyFixture } from '../helpers/paths';
import { startLsp, startModelServerThread, type LspSession, type RemoteModelServer } from './lspHarness';

const MODEL = 'coderag-lm:test';
const REL = 'src/main/java/com/example/shop/service/CheckoutService.java';
// A method whose body is several statements. The shipped model, answering through the test's
// Ollama server (plain greedy decoding), writes it on several lines; for Gateways.create(String)
// it writes one statement (`return factory.get(name);`), for create(String, String) nothing.
const HEADER = 'public Receipt checkout(Cart cart) {';

void describe('body mode over the language server', () => {
  let model: RemoteModelServer;
  let lsp: LspSession;
  let repo: { path: string; cleanup: () => void };
  let uri = '';
  let line = 0;
  let edited = '';

  before(async () => {
    repo = copyFixture('javashop');
    // The method's body emptied on disk, so the index holds the file as the developer has it.
    const abs = join(repo.path, REL);
    const text = readFileSync(abs, 'utf8');
    const start = text.indexOf(HEADER) + HEADER.length;
    const end = text.indexOf('\n    }\n', start);
    edited = `${text.slice(0, start)}\n        \n    }\n${text.slice(end + 7)}`;
    writeFileSync(abs, edited);
    line = edited.slice(0, start).split('\n').length;
    model = await startModelServerThread([MODEL]);
    lsp = await startLsp(repo.path, {
      debounceMs: 0,
      model: { provider: 'ollama', family: 'plain', timeoutMs: 30_000 },
      ollama: { host: model.url, completionModel: MODEL },
      rerank: { kind: 'none' },
      // The small model's window: 512 positions less the body's 128 new tokens.
      experimental: { model: { maxNewTokens: 24 }, ollama: { keepAlive: '5m' }, prompt: { budgetTokens: 384 } },
    });
    await lsp.waitForStatus((s) => s.folders.length > 0 && s.folders.every((f) => f.state === 'ready'));
    uri = lsp.open(abs, 'java');
  });

  after(async () => {
    await lsp?.close();
    await model?.close();
    repo?.cleanup();
  });

  void test("an empty Java method: the shipped model's loop is not shown (one copy at most); the trace is a body trace with usages from other files", async () => {
    const items = await lsp.complete(uri, line, 8);
    const explained = await lsp.explain(items[0]?.traceId);
    assert.ok(explained, 'explain returns the trace');
    const trace = explained.trace;
    assert.equal(trace.mode, 'body');
    // Greedy decoding of the shipped model loops here (one statement written again and again):
    // the junk filters keep one copy at most, and Explain names the rule.
    const raw = trace.model?.raw ?? '';
    const loop = /^[ \t]*(\S[^\n]*)\n(?:[ \t]*\1\n){2,}/m.exec(raw);
    assert.ok(loop, `the model's answer loops: ${JSON.stringify(raw.slice(0, 200))}`);
    const shown = typeof items[0]?.insertText === 'string' ? items[0].insertText : '';
    const copies = shown.split('\n').filter((l) => l.trim() === loop[1]!.trim()).length;
    assert.ok(copies <= 1, `the looped line shown ${copies} times: ${JSON.stringify(shown)}`);
    assert.match(explained.markdown, /## Junk filters[^]*repeat: a line written \d+ times in a row/);
    const usages = trace.body?.usages ?? [];
    assert.ok(
      usages.some((u) => u.path !== REL),
      `usages from another file: ${JSON.stringify(usages.map((u) => u.id))}`,
    );
    for (const stage of ['detect', 'signatures', 'sketch', 'elements', 'usages', 'prompt', 'generate', 'postprocess'])
      assert.ok(
        trace.stages.some((s) => s.stage === stage),
        `stage ${stage} timed`,
      );
    assert.match(explained.markdown, /## Body \(Rambo\)/);
    assert.match(explained.markdown, /Sketch:|sketch: model/);
    assert.match(explained.markdown, /Elements found/);
    assert.match(explained.markdown, /Usages:\n\n- [\d.]+ `src\/main\/java\/com\/example\/shop\/(?!service\/CheckoutService)/);
  });

  void test('typing through a body suggestion, across its first line break, is served from the cache without a model request', async () => {
    // A sane body scripted at the model server (the shipped model's own here is junk, not shown: the test above).
    // A comment above the class: another document than the test above's, so its cached suggestion is not reused.
    const doc = `// checkout\n${edited}`;
    const at = line + 1;
    lsp.change(uri, doc, 2);
    await model.setFault({
      kind: 'garbage',
      text: 'String id = gateway.charge(cart.total(), cart.getCurrency());\n        return new Receipt(cart.getOwner(), cart.total(), id);',
    });
    const items = await lsp.complete(uri, at, 8);
    await model.setFault(undefined);
    const shown = typeof items[0]?.insertText === 'string' ? items[0].insertText : '';
    const firstBreak = shown.indexOf('\n');
    assert.ok(firstBreak > 0 && firstBreak < shown.length - 2, `a multi-line body to type through, got ${JSON.stringify(shown)}`);
    await model.resetCounters();
    const callsBefore = (await lsp.status()).stats.modelCalls;
    const lines = doc.split('\n');
    const head = lines.slice(0, at).join('\n') + '\n' + (lines[at] ?? '').slice(0, 8);
    const tail = doc.slice(head.length);
    // The first characters, then the whole first line and its line break, then a character of the second line.
    const typedLengths = [1, 2, firstBreak, firstBreak + 1, firstBreak + 2].filter((k, i, all) => all.indexOf(k) === i);
    let version = 10;
    for (const k of typedLengths) {
      const typed = shown.slice(0, k);
      lsp.change(uri, head + typed + tail, version++);
      const typedLines = typed.split('\n');
      const cursorLine = at + typedLines.length - 1;
      const cursorCol = (typedLines.length === 1 ? 8 : 0) + (typedLines.at(-1) ?? '').length;
      const next = await lsp.complete(uri, cursorLine, cursorCol);
      assert.equal(next[0]?.insertText, shown.slice(k), `after typing ${JSON.stringify(typed)} the rest of the body is shown`);
      assert.equal(next[0]?.fromCache, true, `typing ${k} characters through: a cache hit`);
    }
    assert.equal((await model.stats()).calls, 0, 'no model request while typing through the body');
    assert.equal((await lsp.status()).stats.modelCalls, callsBefore);
    lsp.change(uri, edited, version++);
  });
});
