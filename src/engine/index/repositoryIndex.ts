// What a host builds over one knowledge base at index time, for every request of that repository to
// read: CodeRAG's retrieval paths (2.2.1), receiver typing, ProCC's code windows and perspectives and
// the body mode's method table. The pipeline (pipeline/createPipeline.ts) only borrows them.
import type { KnowledgeBase } from '../kb/KnowledgeBase';
import type { Parsers } from '../kb/parsers';
import { RepoMethods } from '../body/RepoMethods';
import type { Tokenize } from '../body/tokens';
import { ReceiverTyper } from '../check/receiverMembers';
import { redactingNextLine } from '../generate/redactBoundary';
import { DataflowRetriever } from '../retrieve/dataflow/dataflowRetrieve';
import { DenseRetriever, type DenseEncoder, type DenseRetrieverOptions } from '../retrieve/dense/denseRetrieve';
import { SparseRetriever } from '../retrieve/sparse/sparseRetrieve';
import type { PathName, Retriever } from '../retrieve/types';
import { SimilarRetriever, type NextLineModel, type SimilarRetrieval, type SimilarRetrieverOptions } from '../similar/perspectives';
import { CodeWindowIndex, type WindowIndexOptions } from '../similar/windowIndex';

export interface RepositoryIndex {
  /** Every path built, by name. */
  byName: ReadonlyMap<PathName, Retriever>;
  /** The paths ready once prepared without a model: sparse, dataflow. */
  retrievers: Retriever[];
  /**
   * The dense path, when an encoder is given: it embeds every item first, so a host may prepare it in the background and add it when ready.
   */
  dense?: DenseRetriever;
  /** Receiver typing over the same knowledge base, for checked completions (PipelineOptions.check). */
  receivers: ReceiverTyper;
  /** ProCC's code-window index, when an encoder is given for it: a host prepares it in the background. */
  windows?: CodeWindowIndex;
  /** ProCC's perspectives over those windows (not ready until the windows are prepared). */
  similar?: SimilarRetrieval;
  /**
   * The body mode's view of the repository: its methods and the identifier -> using-methods index,
   * built on first use and kept current per file.
   */
  methods: RepoMethods;
  dispose(): void;
}

interface RepositoryIndexOptions {
  /** The paths to build (default CodeRAG's: sparse, dataflow and, with an encoder, dense); other names are the host's to build. */
  paths?: readonly PathName[];
  dense?: { encoder: DenseEncoder } & DenseRetrieverOptions;
  /** ProCC's windows and perspectives: the encoder (the dense path's), the causal LM's next line when loaded. */
  similar?: { encoder: DenseEncoder; nextLine?: () => NextLineModel | undefined } & WindowIndexOptions & SimilarRetrieverOptions;
  /** The model's tokenizer for the method table's signature keys (absent: word tokens). */
  tokenize?: Tokenize;
}

/** CodeRAG's retrieval paths over one knowledge base (2.2.1), with what else its requests read of the repository. */
export function createRepositoryIndex(kb: KnowledgeBase, parsers: Parsers, options: RepositoryIndexOptions = {}): RepositoryIndex {
  const wanted = new Set<PathName>(options.paths ?? ['sparse', 'dataflow', 'dense']);
  const byName = new Map<PathName, Retriever & { dispose(): void }>();
  if (wanted.has('sparse')) byName.set('sparse', new SparseRetriever(kb));
  if (wanted.has('dataflow')) byName.set('dataflow', new DataflowRetriever(kb, parsers));
  let dense: DenseRetriever | undefined;
  if (wanted.has('dense') && options.dense) {
    const { encoder, ...denseOptions } = options.dense;
    dense = new DenseRetriever(kb, encoder, denseOptions);
    byName.set('dense', dense);
  }
  const receivers = new ReceiverTyper(kb, parsers);
  let windows: CodeWindowIndex | undefined;
  let similar: SimilarRetriever | undefined;
  if (options.similar) {
    const { encoder, nextLine, queryLines, hypotheticalMatch, hypotheticalTokens, hypotheticalContextChars, ...windowOptions } =
      options.similar;
    windows = new CodeWindowIndex(kb, encoder, windowOptions);
    // The hypothetical line's prompt leaves through the redaction boundary too.
    const redactedLine = nextLine
      ? () => {
          const lm = nextLine();
          return lm ? redactingNextLine(lm) : undefined;
        }
      : undefined;
    similar = new SimilarRetriever(windows, kb, redactedLine, {
      ...(queryLines ? { queryLines } : {}),
      ...(hypotheticalMatch ? { hypotheticalMatch } : {}),
      ...(hypotheticalTokens ? { hypotheticalTokens } : {}),
      ...(hypotheticalContextChars ? { hypotheticalContextChars } : {}),
    });
  }
  const methods = new RepoMethods(kb, options.tokenize);
  return {
    byName,
    retrievers: [...byName.values()].filter((r) => r !== dense),
    ...(dense ? { dense } : {}),
    receivers,
    ...(windows && similar ? { windows, similar } : {}),
    methods,
    dispose: () => {
      windows?.dispose();
      receivers.dispose();
      for (const r of byName.values()) r.dispose();
      methods.dispose();
    },
  };
}
