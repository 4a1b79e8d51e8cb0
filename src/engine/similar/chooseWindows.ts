// ProCC's choice of similar code (ProCC, Tan et al. 2024 section 3): run the perspectives, each
// under its own time budget and the request's signal, build the bandit's context from their top-1
// windows, and choose what enters the prompt: the bandit's arm, a fixed perspective, or the union.
// The stage only chooses; the host rewards the chosen arm later (the server from the user's answer,
// the bench from the case's score). A perspective that fails or runs late is recorded, never thrown.
import { wordSet, jaccard } from '../query/bagOfWords';
import { raceDeadline } from '../util/abort';
import { CancellationError, errorMessage, isCancellationError, isDeadlineError, throwIfAborted } from '../util/errors';
import type { LinUcb } from './linUcb';
import { similarFeatures } from './bandit';
import type { PerspectiveResult, SimilarRequest, SimilarRetrieval } from './perspectives';
import { PERSPECTIVES, type Perspective, type SimilarArm, type SimilarTrace } from './types';
import type { CodeWindow, WindowHit } from './windowIndex';
import type { Lang } from '../kb/types';

/** `auto`: the product's choice per language and model (pipeline/stages/similar.ts); the others as ProCC names them, or `off`. */
export type SimilarMode = 'off' | 'auto' | 'bandit' | 'union' | Perspective;
export const SIMILAR_MODES: readonly SimilarMode[] = ['auto', 'off', 'bandit', 'union', ...PERSPECTIVES];

/** Whether a mode reads every window's word sets and summary: the summary perspective does (alone, or among all three). */
export function readsWordSets(mode: SimilarMode): boolean {
  return mode === 'summary' || mode === 'bandit' || mode === 'union';
}

export interface SimilarStageOptions {
  /** The mode the stage runs: `auto` is resolved before it (pipeline/stages/similar.ts). */
  mode: Exclude<SimilarMode, 'auto'>;
  /** Time budget of each perspective (ms). */
  budgetsMs: Record<Perspective, number>;
  /** The perspective used in `bandit` mode when the host lends no bandit. */
  fallback: Perspective;
  /** Windows each perspective returns (the trace shows the top-1; only top-1 enters the prompt, as in ProCC). */
  topK: number;
  /**
   * Share of the prompt budget the similar windows may take when knowledge snippets join them
   * (they are budgeted first, up to this share; alone they may take the snippets' whole part).
   * 0: they only fill what the knowledge leaves.
   */
  promptShare?: number;
}

export interface SimilarOutcome {
  trace: SimilarTrace;
  /** The windows that enter the prompt, in order. */
  windows: CodeWindow[];
}

/** The perspectives a mode runs: all of them to choose or unite, else the one asked for. */
function perspectivesOf(mode: SimilarStageOptions['mode']): readonly Perspective[] {
  return mode === 'bandit' || mode === 'union' ? PERSPECTIVES : mode === 'off' ? [] : [mode];
}

export async function similarStage(
  request: SimilarRequest,
  retrieval: SimilarRetrieval | undefined,
  bandit: LinUcb<SimilarArm> | undefined,
  options: SimilarStageOptions,
  signal: AbortSignal,
): Promise<SimilarOutcome> {
  const chosenBy: SimilarTrace['chosenBy'] = options.mode === 'bandit' && bandit ? 'bandit' : options.mode === 'union' ? 'union' : 'fixed';
  const fixed: Perspective | undefined =
    options.mode === 'bandit'
      ? bandit
        ? undefined
        : options.fallback
      : options.mode === 'union' || options.mode === 'off'
        ? undefined
        : options.mode;
  const wanted = chosenBy === 'fixed' && fixed ? [fixed] : perspectivesOf(options.mode);
  const found: SimilarTrace = { arm: 'none', chosenBy, features: [], perspectives: [], snippets: [] };
  if (!retrieval || !retrieval.ready) {
    const message = retrieval?.notReady ?? 'no code-window index in this host';
    for (const name of wanted) found.perspectives.push({ name, status: 'skipped', elapsedMs: 0, message });
    found.features = similarFeatures({});
    return { trace: found, windows: [] };
  }
  const queryWords = wordSet(retrieval.queryWindow(request));
  const results = await Promise.all(wanted.map((name) => runPerspective(name, request, retrieval, options, signal)));
  throwIfAborted(signal);
  const tops: Partial<Record<Perspective, { hit: WindowHit; jaccard: number }>> = {};
  results.forEach(({ name, result, status, elapsedMs, message }) => {
    const hit = result?.hits[0];
    if (hit) tops[name] = { hit, jaccard: jaccard(queryWords, hit.window.words) };
    found.perspectives.push({
      name,
      status,
      elapsedMs,
      ...(message ? { message } : {}),
      ...(result && name !== 'lexical' ? { query: result.query } : {}),
      ...(hit
        ? {
            top: {
              id: hit.window.id,
              path: hit.window.path,
              startLine: hit.window.startLine,
              endLine: hit.window.endLine,
              score: hit.score,
            },
          }
        : {}),
    });
  });
  found.features = similarFeatures(
    Object.fromEntries(Object.entries(tops).map(([k, t]) => [k, { score: t.hit.score, jaccard: t.jaccard }])),
  );
  let windows: CodeWindow[] = [];
  if (chosenBy === 'union') {
    const seen = new Set<string>();
    for (const p of PERSPECTIVES) {
      const w = tops[p]?.hit.window;
      if (w && !seen.has(w.id)) {
        seen.add(w.id);
        windows.push(w);
      }
    }
    found.arm = windows.length > 0 ? (PERSPECTIVES.find((p) => tops[p]) ?? 'none') : 'none';
  } else if (chosenBy === 'bandit' && bandit) {
    // Arms whose perspective found nothing cannot be pulled; 'none' always can.
    const allowed = bandit.arms.filter((a) => a === 'none' || tops[a]);
    const choice = bandit.choose(found.features, allowed.length > 0 ? allowed : bandit.arms);
    found.scores = choice.scores;
    found.arm = choice.arm === 'none' || tops[choice.arm] ? choice.arm : 'none';
    if (found.arm !== 'none') windows = [tops[found.arm]!.hit.window];
  } else if (fixed) {
    const t = tops[fixed];
    found.arm = t ? fixed : 'none';
    if (t) windows = [t.hit.window];
  }
  found.snippets = windows.map((w) => w.id);
  return { trace: found, windows };
}

async function runPerspective(
  name: Perspective,
  request: SimilarRequest,
  retrieval: SimilarRetrieval,
  options: SimilarStageOptions,
  signal: AbortSignal,
): Promise<{
  name: Perspective;
  result?: PerspectiveResult;
  status: SimilarTrace['perspectives'][number]['status'];
  elapsedMs: number;
  message?: string;
}> {
  await new Promise((resolve) => setImmediate(resolve));
  const start = performance.now();
  const budget = options.budgetsMs[name];
  try {
    throwIfAborted(signal);
    const result = await raceDeadline((s) => retrieval.search(name, request, options.topK, s), budget, signal);
    const elapsedMs = performance.now() - start;
    // Synchronous work cannot be pre-empted: a late result still counts as a timeout.
    if (elapsedMs > budget) return { name, status: 'timeout', elapsedMs, message: `took ${elapsedMs.toFixed(1)} ms, budget ${budget} ms` };
    return { name, result, status: 'ok', elapsedMs, ...(result.notes ? { message: result.notes.join('; ') } : {}) };
  } catch (e) {
    const elapsedMs = performance.now() - start;
    if (signal.aborted) throw new CancellationError();
    if (isDeadlineError(e) || isCancellationError(e))
      return { name, status: 'timeout', elapsedMs, message: `exceeded its ${budget} ms budget` };
    return { name, status: 'error', elapsedMs, message: errorMessage(e) };
  }
}
