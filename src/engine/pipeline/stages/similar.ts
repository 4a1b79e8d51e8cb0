// ProCC's similar-code stage: the request's mode (`auto` resolved per language and model), the
// perspectives run over the lent repository's windows (similar/chooseWindows.ts), and the chosen
// top-1 window(s) as candidates that join the reranked knowledge.
import type { ModelBackend } from '../../generate/types';
import type { Lang } from '../../kb/types';
import type { Candidate } from '../../retrieve/types';
import { errorMessage } from '../../util/errors';
import { similarStage, type SimilarMode, type SimilarOutcome } from '../../similar/chooseWindows';
import type { CodeWindow } from '../../similar/windowIndex';
import type { CompletionRequest, RequestContext } from '../types';
import { repoNow } from './context';
import { timed } from './timed';

/**
 * The mode a request runs. `auto` is the lexical window where it was measured to help: Java with the
 * in-process model (line ES and dot cases' next identifier, docs/BENCHMARKS.md "Similar code for Java").
 * Python gained nothing from any perspective, and a model server is left without it: its code
 * model was not measured with the window, and a window chosen from the last lines would change the
 * prompt's head at every keystroke, where the server's cache wants it stable.
 */
export function similarModeFor(mode: SimilarMode, lang: Lang, backend: ModelBackend | undefined): Exclude<SimilarMode, 'auto'> {
  if (mode !== 'auto') return mode;
  return lang === 'java' && backend === 'embedded' ? 'lexical' : 'off';
}

/** A similar-code window as a candidate: it enters the contexts and the prompt under ProCC's heading. */
export function windowCandidate(w: CodeWindow, arm: string): Candidate {
  return {
    snippet: {
      id: w.id,
      kind: 'window',
      path: w.path,
      name: (w.text.split('\n').find((l) => l.trim() !== '') ?? '').trim().slice(0, 60),
      qualifiedName: `${w.path}:${w.startLine + 1}-${w.endLine + 1}`,
      range: { startLine: w.startLine, endLine: w.endLine },
      text: w.text,
    },
    paths: [],
    scores: {},
    ranks: {},
    origin: { kind: 'similar', arm },
  };
}

/** ProCC's similar code: the chosen top-1 window(s) as candidates; none when the stage is off or the host lends no code windows. */
export async function similarCodeStage(context: RequestContext, request: CompletionRequest): Promise<Candidate[]> {
  const { env, parts, options, signal, recorder } = context;
  // `auto` asks which model writes the answer: a request without one (retrieval only) gets none.
  const mode = similarModeFor(options.similar.mode, request.lang, options.similar.mode === 'auto' ? env.model?.backend : undefined);
  // A host that offers similar code runs the stage even before a repository lends windows (its perspectives are recorded as skipped).
  if (mode === 'off' || !(parts.offersSimilar || repoNow(context)?.similar)) return [];
  const similarOptions = { ...options.similar, mode };
  const outcome = await timed<SimilarOutcome | undefined>(
    recorder,
    'similar',
    signal,
    () =>
      similarStage(
        { filePath: request.filePath, lang: request.lang, prefix: request.prefix, suffix: request.suffix },
        repoNow(context)?.similar,
        env.bandit,
        similarOptions,
        signal,
      ),
    (e) => ({ value: undefined, status: 'degraded', message: errorMessage(e) }),
    parts.yieldTurn,
  );
  if (!outcome) return [];
  recorder.record({ stage: 'similar', outcome: outcome.trace });
  return outcome.windows.map((w) => windowCandidate(w, outcome.trace.arm));
}
