// Learning from what the user accepts (ProCC's bandit) over the real language server: each shown
// suggestion's outcome rewards the arm that produced it (accepted 1, dismissed 0), once; learning
// turned off learns nothing; what was learned survives a server restart and "Reset Learned
// Preferences" forgets it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { copyFixture, tempDir } from '../helpers/paths';
import { startLsp, startModelServerThread, type LspSession, type RemoteModelServer } from './lspHarness';
import {
  CompletionOutcomeNotification,
  ResetLearningRequest,
  type CompletionOutcomeParams,
  type ResetLearningResult,
} from '../../src/protocol/protocol';
import type { CompletionTrace } from '../../src/engine/pipeline';

const MODEL = 'coderag-lm:test';

function settings(url: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    debounceMs: 0,
    model: { provider: 'ollama', family: 'plain', timeoutMs: 5000 },
    ollama: { host: url, completionModel: MODEL },
    rerank: { kind: 'none' },
    similar: { mode: 'bandit' },
    experimental: { model: { maxNewTokens: 12 }, ollama: { keepAlive: '5m' } },
    ...extra,
  };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

void describe('learning from suggestion outcomes over the language server', () => {
  let model: RemoteModelServer;
  let repo: { path: string; cleanup: () => void };
  const cache = tempDir('coderag-learning-');

  before(async () => {
    repo = copyFixture('pyshop');
    model = await startModelServerThread([MODEL]);
  });
  after(async () => {
    await model?.close();
    repo?.cleanup();
    cache.cleanup();
  });

  async function start(cacheDir = cache.path): Promise<{ lsp: LspSession; uri: string }> {
    const lsp = await startLsp(repo.path, settings(model.url), { initializationOptions: { cacheDir } });
    await lsp.waitForStatus((s) => s.folders.length > 0 && s.folders.every((f) => f.state === 'ready'), 120_000);
    const built = await lsp.waitForBuild('similar', 180_000);
    assert.ok(
      built.folders.every((f) => f.similar?.state === 'ready'),
      `the code windows did not build: ${JSON.stringify(built.folders)}`,
    );
    return { lsp, uri: lsp.open(join(repo.path, 'app', 'main.py'), 'python') };
  }

  /** One completion's trace (the item's, or the last one when the model left no item). */
  async function traceAt(lsp: LspSession, uri: string, line: number, col: number): Promise<CompletionTrace> {
    const items = await lsp.complete(uri, line, col);
    const trace = (await lsp.explain(items[0]?.traceId))?.trace as CompletionTrace | undefined;
    assert.ok(trace?.similar, `the similar-code stage ran: ${JSON.stringify(trace?.error)}`);
    return trace;
  }

  async function outcome(lsp: LspSession, params: CompletionOutcomeParams): Promise<CompletionTrace> {
    await lsp.connection.sendNotification(CompletionOutcomeNotification.method, params);
    await sleep(300);
    return (await lsp.explain(params.traceId))!.trace as CompletionTrace;
  }

  const savedPulls = (cacheDir = cache.path): Record<string, number> => {
    const dir = join(cacheDir, 'learning');
    // The show gate keeps its own state beside the bandit's (`<folder>.gate.json`) when a suggestion it judged had an outcome.
    const files = (existsSync(dir) ? readdirSync(dir) : []).filter((f) => !f.endsWith('.gate.json'));
    assert.equal(files.length, 1, `one saved bandit state for the one folder: ${files.join(', ')}`);
    return (JSON.parse(readFileSync(join(dir, files[0]!), 'utf8')) as { pulls: Record<string, number> }).pulls;
  };
  const allEqual = (scores: Partial<Record<string, number>> | undefined): boolean =>
    new Set(Object.values(scores ?? {}).map((v) => v!.toFixed(9))).size === 1;

  void test('accepted rewards 1 and dismissed 0 for the arm chosen, once each; off learns nothing; restart keeps it; reset forgets it', async () => {
    let { lsp, uri } = await start();
    try {
      // app/main.py: `    service = CheckoutService(` and `    receipt = service.` (0-based lines 18, 19).
      const first = await traceAt(lsp, uri, 18, '    service = CheckoutService('.length);
      assert.equal(first.similar!.chosenBy, 'bandit');
      assert.ok(allEqual(first.similar!.scores), `a fresh bandit scores every arm alike: ${JSON.stringify(first.similar!.scores)}`);
      const accepted = await outcome(lsp, { traceId: first.id, outcome: 'accepted', acceptedChars: 5, shownChars: 5 });
      assert.equal(accepted.similar!.reward, 1, 'the trace shows the reward');
      // The same suggestion reported again is not learned twice.
      await outcome(lsp, { traceId: first.id, outcome: 'accepted', acceptedChars: 5, shownChars: 5 });

      const second = await traceAt(lsp, uri, 19, '    receipt = service.'.length);
      assert.equal((await outcome(lsp, { traceId: second.id, outcome: 'rejected', acceptedChars: 0, shownChars: 7 })).similar!.reward, 0);

      lsp.configure(settings(model.url, { similar: { mode: 'lexical' } }));
      await sleep(200);
      const third = await traceAt(lsp, uri, 20, '    print('.length);
      assert.equal(
        (await outcome(lsp, { traceId: third.id, outcome: 'accepted', acceptedChars: 3, shownChars: 3 })).similar!.reward,
        undefined,
        'a fixed perspective: nothing learned',
      );
      lsp.configure(settings(model.url));
      await sleep(200);
      await lsp.close();

      const pulls = savedPulls();
      assert.equal(
        Object.values(pulls).reduce((a, b) => a + b, 0),
        2,
        `two rewards saved: ${JSON.stringify(pulls)}`,
      );
      assert.ok((pulls[first.similar!.arm] ?? 0) >= 1, `the accepted arm ${first.similar!.arm} was rewarded: ${JSON.stringify(pulls)}`);

      // A new server over the same storage chooses with what was learned.
      ({ lsp, uri } = await start());
      const again = await traceAt(lsp, uri, 18, '    service = CheckoutService('.length);
      assert.ok(!allEqual(again.similar!.scores), `after a restart the learned scores differ: ${JSON.stringify(again.similar!.scores)}`);

      const reset = (await lsp.connection.sendRequest(ResetLearningRequest.method)) as ResetLearningResult;
      assert.equal(reset.folders, 1);
      assert.equal(existsSync(join(cache.path, 'learning')), false, 'the saved state is removed');
      const fresh = await traceAt(lsp, uri, 19, '    receipt = service.'.length);
      assert.ok(allEqual(fresh.similar!.scores), `after the reset every arm scores alike again: ${JSON.stringify(fresh.similar!.scores)}`);
    } finally {
      await lsp.close();
    }
  });

  void test('a suggestion accepted after more than 100 newer completions (gone from Explain) still rewards the arm chosen', async () => {
    const own = tempDir('coderag-learning-late-');
    const { lsp, uri } = await start(own.path);
    try {
      const first = await traceAt(lsp, uri, 18, '    service = CheckoutService('.length);
      assert.equal(first.similar!.chosenBy, 'bandit');
      // 110 newer completions, each at its own place in app/main.py (so none is the typing-through cache's).
      const lines = readFileSync(join(repo.path, 'app', 'main.py'), 'utf8').split('\n');
      const places = lines.flatMap((text, line) =>
        Array.from({ length: Math.floor(text.length / 3) + 1 }, (_, i) => [line, i * 3] as const),
      );
      const newer = places.filter(([line, col]) => line !== 18 || col !== '    service = CheckoutService('.length).slice(0, 110);
      assert.equal(newer.length, 110);
      for (const [line, col] of newer) await lsp.complete(uri, line, col);
      assert.equal(await lsp.explain(first.id), null, 'the first suggestion is no longer among the traces Explain keeps');

      await lsp.connection.sendNotification(CompletionOutcomeNotification.method, {
        traceId: first.id,
        outcome: 'accepted',
        acceptedChars: 5,
        shownChars: 5,
      } satisfies CompletionOutcomeParams);
      await sleep(300);
      // The next choice at the first place is made with what was learned: the arms no longer score alike.
      const next = await traceAt(lsp, uri, 18, '    service = CheckoutService('.length);
      assert.ok(!allEqual(next.similar!.scores), `the accepted suggestion taught the bandit: ${JSON.stringify(next.similar!.scores)}`);
      await lsp.close();
      assert.deepEqual(
        Object.entries(savedPulls(own.path)).filter(([, n]) => n > 0),
        [[first.similar!.arm, 1]],
        'one reward, for the arm the first suggestion was made with',
      );
    } finally {
      await lsp.close();
      own.cleanup();
    }
  });
});
