// coderag.similar.mode's default (`auto`) in the language server: a Java folder completed by the embedded model
// gets ProCC's lexical window, its code windows built in the background the first time a request wants them;
// until then the status says when they will be built, and no window is built before that request.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { copyFixture } from '../helpers/paths';
import { startLsp } from './lspHarness';

void test('similar code on auto: a Java line with the embedded model builds the code windows once asked, then the lexical window enters the prompt', async () => {
  const repo = copyFixture('javashop');
  const lsp = await startLsp(repo.path, {
    model: { provider: 'embedded' },
    rerank: { kind: 'none' },
    experimental: { model: { maxNewTokens: 8 }, query: { strategy: 'last10' } },
  });
  try {
    await lsp.waitForDense();
    await new Promise((r) => setTimeout(r, 300));
    const idle = (await lsp.status()).folders[0]?.similar;
    assert.equal(idle?.state, 'off', JSON.stringify(idle));
    assert.match(idle.message ?? '', /auto/);
    assert.ok(!lsp.logs.some((l) => /similar code ready/.test(l)), 'no code windows before a request wants them');

    const path = join(repo.path, 'src/main/java/com/example/shop/App.java');
    const lines = readFileSync(path, 'utf8').split('\n');
    // Line 20 (0-based 19) cut after `service.`: the cursor in a Java method, the embedded model answering.
    const head = '        CheckoutService.Receipt receipt = service.';
    const text = [...lines.slice(0, 19), head, ...lines.slice(20)].join('\n');
    const uri = lsp.open(path, 'java', text);
    const first = await lsp.complete(uri, 19, head.length);
    const firstTrace = (await lsp.explain(first[0]?.traceId))?.trace;
    // The first request finds no windows yet: the perspective is skipped and says why.
    assert.equal(firstTrace?.similar?.perspectives[0]?.status, 'skipped', JSON.stringify(firstTrace?.similar));

    const built = await lsp.waitForStatus(
      (s) => s.folders.every((f) => f.similar?.state === 'ready' || f.similar?.state === 'failed'),
      60_000,
    );
    const windows = built.folders[0]?.similar;
    assert.equal(windows?.state, 'ready', JSON.stringify(windows));
    assert.ok(windows.windows > 0);

    // A new place of work (the one above keeps the block it laid out before the windows were ready): another file.
    const servicePath = join(repo.path, 'src/main/java/com/example/shop/service/CheckoutService.java');
    const service = readFileSync(servicePath, 'utf8').split('\n');
    // Line 31 (0-based 30) cut after `gateway.`.
    const at = '            String transactionId = gateway.';
    const serviceUri = lsp.open(servicePath, 'java', [...service.slice(0, 30), at, ...service.slice(31)].join('\n'));
    const next = await lsp.complete(serviceUri, 30, at.length);
    const trace = (await lsp.explain(next[0]?.traceId))?.trace;
    const similar = trace?.similar;
    assert.equal(similar?.chosenBy, 'fixed', JSON.stringify(similar));
    assert.deepEqual(
      similar.perspectives.map((p) => p.name),
      ['lexical'],
    );
    if (similar.perspectives[0]?.status === 'ok') {
      assert.equal(similar.arm, 'lexical');
      // The window comes from another file of the folder, under ProCC's heading.
      assert.match(
        trace?.prompt?.text ?? '',
        /Compare this snippet from src\/main\/java\/com\/example\/shop\/(?!service\/CheckoutService\.java)/,
      );
    } else {
      // On a loaded machine the perspective's 300 ms can run out: reported, and no window enters.
      assert.equal(similar.arm, 'none', JSON.stringify(similar.perspectives));
    }
  } finally {
    await lsp.close();
    repo.cleanup();
  }
});
