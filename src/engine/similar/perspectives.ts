// ProCC's three perspectives over the code-window index (ProCC, Tan et al. 2024 section 3):
// lexical (the encoder's embedding of the query window), hypothetical line (the causal LM's likely
// next line, greedy, one non-empty line of at most 20 tokens, then matched against the windows) and
// summary (signatures and docstrings of what the query window uses, against each window's
// summary). Each returns ranked windows with scores; the stage runs them under time budgets.
import type { KbItem, Lang } from '../kb/types';
import type { NextLineModel } from '../generate/types';
import { wordSet } from '../query/bagOfWords';
import { throwIfAborted } from '../util/errors';
import type { Perspective } from './types';
import { summarizeCode, type CodeWindowIndex, type WindowHit, type WindowSource } from './windowIndex';

export interface SimilarRequest {
  filePath: string;
  lang: Lang;
  prefix: string;
  suffix: string;
}

export interface PerspectiveResult {
  hits: WindowHit[];
  /** The text this perspective searched with (the query window, the generated line, the summary). */
  query: string;
  notes?: string[];
}

/** The perspectives a host lends to a pipeline, with what is ready now. */
export interface SimilarRetrieval {
  /** Whether the window index is built (a pipeline does not wait for it). */
  readonly ready: boolean;
  /** Why it is not ready (the trace says so). */
  readonly notReady?: string;
  /** The query window (ProCC's 10 lines around the cursor). */
  queryWindow(request: SimilarRequest): string;
  search(perspective: Perspective, request: SimilarRequest, k: number, signal: AbortSignal): Promise<PerspectiveResult>;
}

// Declared with the model clients (the generate layer wraps it at the redaction boundary); its hosts import it from here too.
export type { NextLineModel };

export interface SimilarRetrieverOptions {
  /** Lines of the query window (ProCC: 10). */
  queryLines?: number;
  /** How the hypothetical line is matched: its embedding against the window vectors, or its words (Jaccard). */
  hypotheticalMatch?: 'embed' | 'lexical';
  /** Tokens the hypothetical line may have (ProCC at query time: 20). */
  hypotheticalTokens?: number;
  /** Characters of the prefix the hypothetical-line prompt keeps (the small LM's context). */
  hypotheticalContextChars?: number;
}

/** The first non-empty line of generated text, trimmed at the end. */
function firstNonEmptyLine(text: string): string {
  return (text.split('\n').find((l) => l.trim() !== '') ?? '').trimEnd();
}

/** The perspectives over one repository's window index. */
export class SimilarRetriever implements SimilarRetrieval {
  constructor(
    private readonly index: CodeWindowIndex,
    private readonly kb: Pick<WindowSource, 'itemsNamed'>,
    private readonly nextLine: (() => NextLineModel | undefined) | undefined,
    private readonly options: SimilarRetrieverOptions = {},
  ) {}

  get ready(): boolean {
    return this.index.ready;
  }

  get notReady(): string | undefined {
    return this.index.ready ? undefined : 'the code-window index is being built';
  }

  queryWindow(request: SimilarRequest): string {
    const n = this.options.queryLines ?? 10;
    const lines = request.prefix.split('\n');
    return lines.slice(Math.max(0, lines.length - n)).join('\n');
  }

  async search(perspective: Perspective, request: SimilarRequest, k: number, signal: AbortSignal): Promise<PerspectiveResult> {
    throwIfAborted(signal);
    const window = this.queryWindow(request);
    if (perspective === 'lexical') {
      if (window.trim() === '') return { hits: [], query: window, notes: ['empty query window'] };
      const [v] = await this.index.encoder.embed([window], signal);
      throwIfAborted(signal);
      if (!v) throw new Error('the encoder returned no query vector');
      return { hits: this.index.searchVector(v, k, request.filePath), query: window };
    }
    if (perspective === 'summary') {
      const defined: KbItem[] = [];
      const summary = summarizeCode(
        window,
        defined,
        (n) => this.kb.itemsNamed(n),
        (i) => i.path === request.filePath,
        24,
      );
      // The query window's own declarations join what it uses.
      const own = window
        .split('\n')
        .filter((l) => /^\s*(def |class |async def |public |private |protected |static |interface |@)/.test(l))
        .map((l) => l.trim());
      const text = [...own, summary].filter((t) => t !== '').join('\n');
      return { hits: this.index.searchWords(wordSet(text), k, request.filePath, 'summaryWords'), query: text };
    }
    const lm = this.nextLine?.();
    if (!lm) throw new Error('no causal LM loaded for the hypothetical line');
    const context = this.options.hypotheticalContextChars ?? 3000;
    const prompt =
      request.prefix.length > context
        ? request.prefix.slice(request.prefix.indexOf('\n', request.prefix.length - context) + 1)
        : request.prefix;
    // At the start of a line the small LM tends to leave the block (a newline, a new `def`): prime
    // it with the last code line's indentation so it writes the line the cursor is on.
    const lead =
      prompt.endsWith('\n') || prompt === ''
        ? (/^[ \t]*/.exec(
            prompt
              .split('\n')
              .filter((l) => l.trim() !== '')
              .pop() ?? '',
          )?.[0] ?? '')
        : '';
    const raw = await lm(prompt + lead, this.options.hypotheticalTokens ?? 20, signal);
    throwIfAborted(signal);
    const line = firstNonEmptyLine(lead + raw);
    if (line.trim() === '') return { hits: [], query: '', notes: ['the model wrote no line'] };
    if ((this.options.hypotheticalMatch ?? 'embed') === 'lexical')
      return { hits: this.index.searchWords(wordSet(line), k, request.filePath), query: line };
    const [v] = await this.index.encoder.embed([line.trim()], signal);
    throwIfAborted(signal);
    if (!v) throw new Error('the encoder returned no vector for the hypothetical line');
    return { hits: this.index.searchVector(v, k, request.filePath), query: line };
  }
}
