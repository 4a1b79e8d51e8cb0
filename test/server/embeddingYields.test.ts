// Index-time embedding never stalls the server: with the shipped ONNX encoder embedding
// a repository's items on its thread, a completion request sent meanwhile is answered (its trace
// lists the dense path as skipped, not ready, with the progress), and embedding goes on after it
// until the dense path is ready. Nothing is timed.
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/paths';
import { startLsp } from './lspHarness';

/** A Python repository of `files` modules with `perFile` distinct functions each (thousands of items to embed). */
function syntheticRepo(root: string, files: number, perFile: number): void {
  const words = ['account', 'ledger', 'invoice', 'payment', 'customer', 'order', 'stock', 'report', 'balance', 'refund', 'tax', 'discount'];
  for (let f = 0; f < files; f++) {
    const dir = join(root, `pkg${f % 10}`);
    mkdirSync(dir, { recursive: true });
    const lines: string[] = [`"""Module ${f}."""`, 'import math', ''];
    for (let k = 0; k < perFile; k++) {
      const a = words[(f + k) % words.length]!;
      const b = words[(f * 7 + k * 3) % words.length]!;
      lines.push(
        `def ${a}_${b}_${f}_${k}(value, rate=${k + 1}):`,
        `    """Return the ${a} ${b} of value at rate ${k}."""`,
        `    total = value * rate + ${f}`,
        `    return math.floor(total / ${k + 2})`,
        '',
      );
    }
    writeFileSync(join(dir, `mod${f}.py`), lines.join('\n'));
  }
}

void test('a completion request during embedding is answered, and embedding continues after it', async () => {
  const repo = tempDir('coderag-embed-yield-');
  syntheticRepo(repo.path, 120, 30);
  const lsp = await startLsp(repo.path, {
    debounceMs: 0,
    model: { provider: 'embedded' },
    rerank: { kind: 'none' },
    experimental: { model: { maxNewTokens: 4 }, query: { strategy: 'last10' } },
  });
  try {
    // Embedding has started and has items left.
    const during = await lsp.waitForStatus((s) => !!s.indexing?.dense && s.indexing.dense.done < s.indexing.dense.total, 300_000);
    assert.match(during.message, /% · dense [\d,]+\/[\d,]+/);
    const file = join(repo.path, 'pkg3', 'mod3.py');
    const uri = lsp.open(file, 'python', 'import math\n\ndef use_it(value):\n    return account_');
    const answer = await lsp.complete(uri, 3, 19);
    const explained = await lsp.explain(answer[0]?.traceId);
    assert.ok(explained, 'the request has a trace');
    const densePath = explained.trace.retrieval?.paths.find((p) => p.path === 'dense');
    // Made while embedding ran (thousands of items left): the dense path was not searched, and said why.
    assert.equal(densePath?.status, 'skipped', JSON.stringify(explained.trace.retrieval?.paths));
    assert.match(densePath.message ?? '', /not ready: embedding [\d,]+\/[\d,]+ items/);
    assert.ok(
      explained.trace.retrieval!.paths.some((p) => p.path === 'sparse' && p.status === 'ok'),
      'the ready paths ran',
    );
    const doneAtRequest = Number(/embedding ([\d,]+)\//.exec(densePath.message ?? '')![1]!.replace(/,/g, ''));
    // Embedding goes on after the answer: more items embedded, then the dense path is ready.
    const ready = await lsp.waitForDense(600_000);
    const dense = ready.folders[0]?.dense;
    assert.equal(dense?.state, 'ready', JSON.stringify(ready.folders));
    const items = dense.items;
    assert.ok(items > doneAtRequest, `${items} items embedded in all, ${doneAtRequest} when the request came`);
    assert.ok(!lsp.logs.some((l) => /items are embedded on the main thread/.test(l)), 'the encoder thread embedded the items');
    // After it the dense path answers in the trace.
    lsp.change(uri, 'import math\n\ndef use_it(value):\n    total = 2\n    return account_', 100);
    const after = await lsp.complete(uri, 4, 19);
    const afterTrace = await lsp.explain(after[0]?.traceId);
    assert.equal(afterTrace?.trace.retrieval?.paths.find((p) => p.path === 'dense')?.status, 'ok');
  } finally {
    await lsp.close();
    repo.cleanup();
  }
});
