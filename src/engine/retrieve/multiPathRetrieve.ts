// Multi-path code retrieval (CodeRAG section 2.2.1): the paths run concurrently, each under its
// own time budget and the request's AbortSignal; a path that fails or runs out of time is
// recorded in the trace and the others still return (CONTRIBUTING.md "Code rules", rule 8).
import { mergeCandidates } from './mergeCandidates';
import type { CodeRagPath, PathName, PathTrace, RetrievalRequest, RetrievalTrace, Retriever } from './types';
import { CancellationError, errorMessage, isCancellationError, isDeadlineError, throwIfAborted } from '../util/errors';
import { getLogger } from '../util/logger';
import { raceDeadline } from '../util/abort';

const log = getLogger('retrieve');

interface MultiPathOptions {
  /** Per-path time budget in ms (default DEFAULT_BUDGET_MS). */
  budgetsMs?: Partial<Record<PathName, number>>;
  /** Cap of the merged list (default 2j+1). */
  maxCandidates?: number;
}

const DEFAULT_BUDGET_MS: Readonly<Record<CodeRagPath, number>> = { sparse: 200, dense: 300, dataflow: 200 };

/** The budget of a path a host adds (not CodeRAG's) when the options set none. */
const OTHER_PATH_BUDGET_MS = 500;

function defaultBudgetMs(path: PathName): number {
  return (DEFAULT_BUDGET_MS as Readonly<Partial<Record<PathName, number>>>)[path] ?? OTHER_PATH_BUDGET_MS;
}

/** Yield to the event loop, so a path's synchronous work is timed on its own. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Run one path; never rejects except on the request's own cancellation. */
async function runPath(retriever: Retriever, request: RetrievalRequest, budgetMs: number, signal: AbortSignal): Promise<PathTrace> {
  // Each path starts in its own turn: microtasks drain between turns, so a synchronous path's
  // time is not charged to the paths started before it.
  await nextTurn();
  const start = performance.now();
  const base = { path: retriever.name, budgetMs };
  try {
    throwIfAborted(signal);
    // A path that ignores its signal keeps running; only its late result is dropped.
    const result = await raceDeadline((s) => retriever.retrieve(request, s), budgetMs, signal);
    const elapsedMs = performance.now() - start;
    // Synchronous work cannot be pre-empted: a result that arrives late still counts as a timeout.
    if (elapsedMs > budgetMs)
      return { ...base, status: 'timeout', elapsedMs, message: `took ${elapsedMs.toFixed(1)} ms, budget ${budgetMs} ms`, results: [] };
    if (result.skipped !== undefined) return { ...base, status: 'skipped', elapsedMs, message: result.skipped, results: [] };
    return { ...base, status: 'ok', elapsedMs, ...(result.notes ? { notes: result.notes } : {}), results: result.results };
  } catch (e) {
    const elapsedMs = performance.now() - start;
    if (signal.aborted) throw new CancellationError();
    if (isDeadlineError(e)) return { ...base, status: 'timeout', elapsedMs, message: `exceeded its ${budgetMs} ms budget`, results: [] };
    if (isCancellationError(e)) return { ...base, status: 'timeout', elapsedMs, message: 'cancelled by its budget', results: [] };
    log.warn(`${retriever.name} retrieval failed: ${errorMessage(e)}`);
    return { ...base, status: 'error', elapsedMs, message: errorMessage(e), results: [] };
  }
}

/** All paths concurrently, then the merge. Rejects only with CancellationError when `signal` aborts. */
export async function multiPathRetrieve(
  retrievers: readonly Retriever[],
  request: RetrievalRequest,
  options: MultiPathOptions,
  signal: AbortSignal,
): Promise<RetrievalTrace> {
  const start = performance.now();
  throwIfAborted(signal);
  const traces = await Promise.all(
    retrievers.map((r) => runPath(r, request, options.budgetsMs?.[r.name] ?? defaultBudgetMs(r.name), signal)),
  );
  throwIfAborted(signal);
  const candidates = mergeCandidates(traces, options.maxCandidates ?? 2 * request.topJ + 1, request.file.path);
  return { query: request.query, paths: traces, candidates, elapsedMs: performance.now() - start };
}
