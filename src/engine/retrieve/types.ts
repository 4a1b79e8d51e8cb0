// Multi-path code retrieval (CodeRAG section 2.2.1): what every retrieval path receives and returns.
import type { UnfinishedAnalyses } from '../flow/unfinished';
import type { ItemKind, KbItem, LineRange } from '../kb/types';
import type { UnfinishedFile } from '../query/unfinishedFile';
import type { RetrievalQuery } from '../query/types';

/** CodeRAG's paths. */
export type CodeRagPath = 'sparse' | 'dense' | 'dataflow';

/** A retrieval path's name: CodeRAG's, or the name of a path a host adds beside them (an evaluation's baseline). */
export type PathName = CodeRagPath | (string & {});

/** One piece of repository code a path found: a knowledge-base item, a class or module summary, or a window. */
export interface Snippet {
  /**
   * The KbItem id; `path#class:Qualified` for a class summary; `path#module` for a module summary;
   * `path#window:start-end` for a window of a file's lines.
   */
  id: string;
  kind: ItemKind | 'class' | 'module' | 'window';
  path: string;
  /** Simple name (the window's first line for a window). */
  name: string;
  qualifiedName: string;
  range: LineRange;
  /** Self-contained text, headed by its path comment. */
  text: string;
  item?: KbItem;
}

export interface ScoredSnippet {
  snippet: Snippet;
  score: number;
  /** Why the path picked it (dataflow: the edge chain, e.g. `repo <- make_repo (import)`). */
  reason?: string;
  /** A direct dependency of the unfinished line (dataflow): placed ahead of the turn-taking merge. */
  lead?: boolean;
}

export interface RetrievalRequest {
  file: UnfinishedFile;
  query: RetrievalQuery;
  /** Results per item family (functions, variables); CodeRAG j=15. */
  topJ: number;
  /** The request's analyses of the unfinished file, shared with the other stages (absent: the path parses its own). */
  analyses?: UnfinishedAnalyses;
}

export interface PathResult {
  /** Best first. */
  results: ScoredSnippet[];
  /** Short path-specific notes for the trace (e.g. `graph: 42 nodes, 3 seeds`). */
  notes?: string[];
  /** Why the path did not search (it is not ready yet): the trace shows it as skipped with this message. */
  skipped?: string;
}

/** A retrieval path (sparse, dense, dataflow, RG-1); one whose index is not built yet says so in `skipped`. */
export interface Retriever {
  readonly name: PathName;
  /** Build or refresh the path's index (outside any request's time budget). */
  prepare?(signal: AbortSignal): Promise<void>;
  retrieve(request: RetrievalRequest, signal: AbortSignal): Promise<PathResult>;
}

export type PathStatus = 'ok' | 'timeout' | 'error' | 'skipped';

export interface PathTrace {
  path: PathName;
  status: PathStatus;
  elapsedMs: number;
  budgetMs: number;
  message?: string;
  notes?: string[];
  results: ScoredSnippet[];
}

export interface Candidate {
  snippet: Snippet;
  /** Paths that found it, in the order they rank it. */
  paths: PathName[];
  scores: Partial<Record<PathName, number>>;
  ranks: Partial<Record<PathName, number>>;
  reasons?: string[];
  /** Found by a stage other than the retrieval paths (absent: the paths in `paths` found it). */
  origin?: CandidateOrigin;
}

/**
 * Which stage put a candidate into the list: ProCC's similar-code stage (with the perspective that
 * chose the window), the body mode's lists (Rambo's usages, element definitions, signature hits),
 * or CodeRAG's reranked knowledge items joining those lists.
 */
type CandidateOrigin =
  { kind: 'similar'; arm: string } | { kind: 'usage' } | { kind: 'definition' } | { kind: 'signature' } | { kind: 'knowledge' };

/**
 * The candidate's origin as traces, predictions and the CLI name it (`similar:lexical`, `usage`, `coderag:sparse+dense`); undefined for a
 * plain retrieval hit.
 */
export function originLabel(c: Pick<Candidate, 'origin' | 'paths'>): string | undefined {
  const o = c.origin;
  if (!o) return undefined;
  if (o.kind === 'similar') return `similar:${o.arm}`;
  if (o.kind === 'knowledge') return `coderag:${c.paths.join('+')}`;
  return o.kind;
}

export interface RetrievalTrace {
  query: RetrievalQuery;
  paths: PathTrace[];
  candidates: Candidate[];
  elapsedMs: number;
}

/**
 * The item's text is read on first use: most of a request's candidates are ranked and dropped
 * unread, and an item's text is inflated from its file's block when read (kb/packedText.ts).
 */
export function snippetOfItem(item: KbItem): Snippet {
  let text: string | undefined;
  return {
    id: item.id,
    kind: item.kind,
    path: item.path,
    name: item.name,
    qualifiedName: item.qualifiedName,
    range: item.range,
    get text(): string {
      return (text ??= item.text);
    },
    item,
  };
}

/** The retrieval stage's slice of the pipeline options. */
export interface RetrievalStageOptions {
  /** Results per path and item family (CodeRAG j=15). */
  topJ: number;
  /** Per-path time budgets in ms (the defaults of multiPathRetrieve where absent). */
  budgetsMs: Partial<Record<PathName, number>>;
  /** Cap of the merged list (default 2j+1). */
  maxCandidates?: number;
}

/** The retrieval stage: runs the retrieval paths and merges their results. */
export interface RetrievalStage {
  retrieve(request: RetrievalRequest, options: RetrievalStageOptions, signal: AbortSignal): Promise<RetrievalTrace>;
}
