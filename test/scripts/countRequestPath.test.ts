// The counting rules of scripts/countRequestPath.ts (docs/ARCHITECTURE.md "One request's path
// through the files") on a hand-made list of function entries, and the probe's view of which
// calls only hand their result on; no server is started.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { formatPath, requestPath, type Frame, type PathEvent } from '../../scripts/pathCount/path';
import { callSpans, probed, tailAt, PROBE } from '../../scripts/pathCount/probe';

const frame = (file: string, name: string, tail = false): Frame => ({
  file: `src/${file}`,
  fn: `${file}:${name}`,
  name,
  ...(tail ? { tail } : {}),
});
const provide = frame('server/CompletionFeature.ts', 'provide');
const cursor = frame('server/positions.ts', 'cursorAt');
// createPipeline's complete returns complete.ts's answer as it is.
const pipeline = frame('engine/pipeline/createPipeline.ts', 'complete', true);
const compose = frame('engine/pipeline/complete.ts', 'complete');
const slot = frame('engine/pipeline/stages/context.ts', 'slot');
const target = frame('engine/pipeline/bodyMode.ts', 'compute');
const retrieve = frame('engine/retrieve/multiPathRetrieve.ts', 'multiPathRetrieve');
const sparse = frame('engine/retrieve/sparse/bm25.ts', 'score');
const embed = frame('server/Server.ts', 'embed');
const timed = frame('engine/pipeline/stages/timed.ts', 'timed');
const abort = frame('engine/util/abort.ts', 'withTimeout');
const snippet = frame('engine/prompt/snippetForPrompt.ts', 'snippetForPrompt');
const at = (...frames: Frame[]): PathEvent => ({ frames });

const events: PathEvent[] = [
  at(provide),
  at(provide, cursor),
  at(provide, pipeline),
  at(provide, pipeline, compose),
  // The slot machinery is bookkeeping: the slot's computation is entered from complete.ts.
  at(provide, pipeline, compose, slot, target),
  at(provide, pipeline, compose, retrieve),
  // The retriever's internals stay inside multiPathRetrieve; a callback into the server does not.
  at(provide, pipeline, compose, retrieve, sparse),
  at(provide, pipeline, compose, retrieve, sparse, embed),
  // Background work: no completion handler below it.
  at(frame('server/WorkspaceIndexer.ts', 'indexFolder'), embed),
  // The stage timer and the abort helper are shared bookkeeping; a loop of three rounds.
  at(provide, pipeline, compose, timed, abort, snippet),
  at(provide, pipeline, compose, timed, abort, snippet),
  at(provide, pipeline, compose, timed, abort, snippet),
];

void describe('the request path from recorded function entries', () => {
  test('files are entered in order; control coming back to a file is a return; a pass-through return, bookkeeping and internals are not steps', () => {
    const path = requestPath(events);
    assert.equal(
      formatPath(path),
      [
        'client/extension.ts',
        'server/CompletionFeature.ts',
        'server/positions.ts',
        '↩ server/CompletionFeature.ts',
        'engine/pipeline/createPipeline.ts',
        'engine/pipeline/complete.ts',
        'engine/pipeline/bodyMode.ts',
        '↩ engine/pipeline/complete.ts',
        'engine/retrieve/multiPathRetrieve.ts',
        'server/Server.ts',
        '↩ engine/retrieve/multiPathRetrieve.ts',
        '↩ engine/pipeline/complete.ts',
        'engine/prompt/snippetForPrompt.ts',
        '↩ engine/pipeline/complete.ts',
        // createPipeline.ts only hands complete.ts's result on: no return into it.
        '↩ server/CompletionFeature.ts',
        '↩ client/extension.ts',
      ].join(' → '),
    );
    assert.equal(path.files, 9);
    assert.equal(path.returns, 7);
    // The loop's three rounds are one step folded, three unfolded (two more returns into complete.ts and two into snippetForPrompt.ts).
    assert.deepEqual(path.unfolded, { steps: 20, returns: 11 });
    assert.deepEqual(path.perFile['src/server/CompletionFeature.ts'], { steps: 3, returns: 2 });
    assert.deepEqual(path.perFile['src/server/Server.ts'], { steps: 1, returns: 0 });
  });

  test('a return into a frame that was not at a pass-through call is a step', () => {
    const untail = { ...pipeline, tail: false };
    const path = requestPath(
      events.slice(0, 4).map((e) => at(...e.frames.map((f) => (f === pipeline ? untail : f)))),
      { client: false },
    );
    assert.equal(
      formatPath(path),
      'server/CompletionFeature.ts → server/positions.ts → ↩ server/CompletionFeature.ts → engine/pipeline/createPipeline.ts → engine/pipeline/complete.ts → ↩ engine/pipeline/createPipeline.ts → ↩ server/CompletionFeature.ts',
    );
    assert.equal(path.returns, 3);
  });

  test('a frame that only vanished below a running one (a synchronous caller that returned its callee’s promise) ends without a step', () => {
    const caller = frame('engine/pipeline/stages/model.ts', 'runModelStages');
    const sync = frame('engine/generate/modelSlot.ts', 'run');
    const generate = frame('engine/pipeline/stages/check.ts', 'generate');
    const after = frame('engine/pipeline/stages/check.ts', 'repair');
    const path = requestPath([at(provide, caller, sync, generate), at(provide, caller, generate, after)], { client: false });
    assert.equal(
      formatPath(path),
      'server/CompletionFeature.ts → engine/pipeline/stages/model.ts → engine/generate/modelSlot.ts → engine/pipeline/stages/check.ts → ↩ engine/pipeline/stages/model.ts → ↩ server/CompletionFeature.ts',
    );
  });
});

void describe('the probe', () => {
  const code = [
    'function a(x) { return b(x); }',
    'async function c() { const v = await d(); return e(v); }',
    'const f = (y) => g(h(y));',
    'var __export = (t, all) => { for (var n in all) t[n] = all[n]; };',
    '__export(exports, { a: () => a });',
  ].join('\n');
  const out = probed(code, 'x.js');
  const spans = { rel: 'x.js', ...callSpans(out, 'x.js') };
  const column = (line: number, text: string): number => out.split('\n')[line - 1]!.indexOf(text) + 1;

  test('every function of the code gets a probe on its own line, esbuild’s module scaffolding none', () => {
    assert.equal(out.split('\n').length, 5);
    assert.equal(out.split(PROBE).length - 1, 3);
    assert.doesNotMatch(out.split('\n')[3]!, new RegExp(PROBE));
    assert.doesNotMatch(out.split('\n')[4]!, new RegExp(PROBE));
  });

  test('a call whose result the function returns as it is hands it on; a call whose result the function uses does not', () => {
    assert.equal(tailAt(spans, 1, column(1, 'b(x)')), true);
    assert.equal(tailAt(spans, 2, column(2, 'await d()')), false);
    assert.equal(tailAt(spans, 2, column(2, 'e(v)')), true);
    assert.equal(tailAt(spans, 3, column(3, 'g(h')), true);
    assert.equal(tailAt(spans, 3, column(3, 'h(y)')), false);
  });
});
