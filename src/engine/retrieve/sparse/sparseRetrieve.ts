// Sparse retrieval path (CodeRAG section 2.2.1): TF-IDF cosine top-j over knowledge-base items,
// functions (function, classFunction) and variables (classVariable, globalVariable) indexed
// separately as in CodeRAG; kept current through the knowledge base's change events.
import type { KbItem } from '../../kb/types';
import type { KnowledgeBase } from '../../kb/KnowledgeBase';
import { snippetOfItem, type PathResult, type RetrievalRequest, type Retriever, type ScoredSnippet } from '../types';
import { TfIdfIndex } from './TfIdfIndex';
import type { TermOptions } from './codeTerms';
import type { Disposable } from '../../util/disposable';
import { ChangeScheduler } from '../../kb/changeScheduler';
import { errorMessage, throwIfAborted } from '../../util/errors';
import { getLogger } from '../../util/logger';
import { eventLoopYielder } from '../../util/yielder';

const log = getLogger('retrieve');

/** The knowledge-base surface the sparse path needs. */
type SparseSource = Pick<KnowledgeBase, 'paths' | 'file' | 'onDidChange'>;

function isFunction(item: KbItem): boolean {
  return item.kind === 'function' || item.kind === 'classFunction';
}

export class SparseRetriever implements Retriever, Disposable {
  readonly name = 'sparse' as const;
  private readonly functions: TfIdfIndex<KbItem>;
  private readonly variables: TfIdfIndex<KbItem>;
  /** Re-indexes changed files soon after a change, so that the next query does not pay for it. */
  private readonly changes: ChangeScheduler;
  private loaded = false;

  constructor(
    private readonly kb: SparseSource,
    options: TermOptions = {},
  ) {
    this.functions = new TfIdfIndex<KbItem>((i) => i.text, options);
    this.variables = new TfIdfIndex<KbItem>((i) => i.text, options);
    this.changes = new ChangeScheduler(kb, {
      built: () => this.loaded,
      refresh: (signal) => this.prepare(signal),
      onError: (e) => log.warn(`sparse re-index failed: ${errorMessage(e)}`),
    });
  }

  /**
   * Tokenise every item (first call) or the files changed since; postings rebuild lazily. Hands the
   * event loop back every ~25 ms: the first call on the JDK's java.base tokenises for about a second.
   * One run at a time.
   */
  prepare(signal: AbortSignal): Promise<void> {
    return this.changes.exclusive(() => this.run(signal));
  }

  private async run(signal: AbortSignal): Promise<void> {
    const changed = this.changes.take();
    const paths = this.loaded ? changed : this.kb.paths();
    this.loaded = true;
    const pause = eventLoopYielder();
    for (let i = 0; i < paths.length; i++) {
      await pause();
      if (signal.aborted) {
        // Keep what is left for the next call.
        this.changes.putBack(paths.slice(i));
        throwIfAborted(signal);
      }
      const path = paths[i]!;
      const items = this.kb.file(path)?.items ?? [];
      this.functions.setGroup(path, items.filter(isFunction));
      this.variables.setGroup(
        path,
        items.filter((i) => !isFunction(i)),
      );
    }
    await this.functions.refreshPaced(pause);
    await this.variables.refreshPaced(pause);
  }

  async retrieve(request: RetrievalRequest, signal: AbortSignal): Promise<PathResult> {
    if (!this.loaded || this.changes.hasPending) await this.prepare(signal);
    throwIfAborted(signal);
    const j = request.topJ;
    const exclude = request.file.path;
    const functions = this.functions.query(request.query.text, j, exclude);
    const variables = this.variables.query(request.query.text, j, exclude);
    // The families are separate vector spaces (short variable stubs score higher): take turns.
    const results: ScoredSnippet[] = [];
    for (let i = 0; i < Math.max(functions.length, variables.length); i++) {
      for (const hit of [functions[i], variables[i]]) if (hit) results.push({ snippet: snippetOfItem(hit.doc), score: hit.score });
    }
    return { results, notes: [`${this.functions.size} functions, ${this.variables.size} variables indexed`] };
  }

  dispose(): void {
    this.changes.dispose();
  }
}
