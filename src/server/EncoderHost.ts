// The server's code encoder: loaded once for dense retrieval and ProCC's code windows, queries
// embedded in-process, items and windows on the encoder's thread (WorkerEncoder) paced behind the
// completion requests; and the repository index each workspace folder is given, built with it.
import type { ModelRegistry, ModelRegistryOptions } from '../engine/models';
import type { Encoder } from '../engine/models';
import { WorkerEncoder, encoderWorkerEntry, type WorkerEntry } from '../engine/models/WorkerEncoder';
import type { DenseEncoder } from '../engine/retrieve/dense/denseRetrieve';
import { createRepositoryIndex, type RepositoryIndex } from '../engine/index/repositoryIndex';
import type { KnowledgeBase } from '../engine/kb/KnowledgeBase';
import type { Parsers } from '../engine/kb/parsers';
import type { NextLineModel } from '../engine/similar/perspectives';
import { readsWordSets, type SimilarMode } from '../engine/similar/chooseWindows';
import { errorMessage } from '../engine/util/errors';
import { getLogger } from '../engine/util/logger';
import type { ForegroundActivity } from './ForegroundActivity';
import type { RetrieversContext } from './WorkspaceIndexer';

const log = getLogger('server');

/**
 * Background embedding in chunks of this many items, on the encoder's thread (WorkerEncoder), so
 * the main thread only waits; between chunks a completion request goes first (one chunk, about
 * 40 ms of the two cores with the 2-block encoder, may still finish beside it). Without the thread the ONNX runs are
 * synchronous on the main thread: chunks of at most DENSE_CHUNK_CHARS characters of item text hold
 * the event loop for 15-40 ms each instead of the 600 ms a 16-item batch of long items took.
 */
const DENSE_CHUNK_ITEMS = 32;
const DENSE_CHUNK_CHARS = 512;
const DENSE_CHUNK_ITEMS_IN_PROCESS = 16;
/**
 * ProCC's code windows (20 lines, about the encoder's 256 tokens each): 8 per run on the encoder's
 * thread; on the main thread one per run (a window is a DENSE_CHUNK_CHARS chunk or more).
 */
const WINDOW_CHUNK = 8;
const WINDOW_CHUNK_IN_PROCESS = 1;
/** The encoder's thread stops after this long without work (its ~50 MB come back); a save starts it again. */
const ENCODER_THREAD_IDLE_MS = 20_000;
/**
 * After a repository's first embedding run the thread stops sooner: with the ONNX arena it grew, it
 * held about 180 MB after the JDK's java.base (server RSS 637 MB when embedding ended, 460 MB five
 * seconds later; npm run bench:server).
 */
const ENCODER_THREAD_IDLE_AFTER_BULK_MS = 2_000;

interface EncoderHostDeps {
  /** Folder holding models/ and the encoder thread's entry (dist/ for the bundles). */
  assetsDir: string;
  /** The model registry, read when the encoder is first asked for (it is built once the client's settings are known). */
  registry: () => ModelRegistry;
  /** The registry's options as they are now (the encoder's thread opens its own registry with them). */
  registryOptions: () => ModelRegistryOptions;
  /** Aborted at shutdown: the encoder's load stops waiting then. */
  lifetime: AbortSignal;
  /** Completion requests being served: background embedding waits for them. */
  foreground: ForegroundActivity;
  /** coderag.similar.mode as it is now (whether the code windows keep word sets). */
  similarMode: () => SimilarMode;
  /** ProCC's hypothetical line, once the probing LM is loaded. */
  nextLine: () => NextLineModel | undefined;
  /** The encoder loaded: where it runs is worth showing. */
  onLoaded: () => void;
}

export class EncoderHost {
  private encoderPromise: Promise<Encoder | undefined> | undefined;
  private itemEncoderPromise: Promise<WorkerEncoder | undefined> | undefined;

  constructor(private readonly deps: EncoderHostDeps) {}

  /** The shipped code encoder for dense retrieval; undefined (dense off, logged once) when it does not load. */
  encoder(): Promise<Encoder | undefined> {
    this.encoderPromise ??= this.deps
      .registry()
      .encoder(undefined, this.deps.lifetime)
      .then(
        (encoder) => {
          log.info(`code encoder ${encoder.name} loaded (dim ${encoder.dim}) on ${encoder.placement?.provider ?? 'cpu'}`);
          this.deps.onLoaded();
          return encoder;
        },
        (e: unknown) => {
          log.warn(`the code encoder did not load (dense retrieval is off): ${errorMessage(e)}`);
          return undefined;
        },
      );
    return this.encoderPromise;
  }

  /**
   * The encoder's thread for index-time embedding (WorkerEncoder), started once; undefined (items
   * are embedded in-process, logged) when it cannot start or its build differs from `encoder`.
   */
  private itemEncoder(encoder: Encoder, entry: WorkerEntry): Promise<WorkerEncoder | undefined> {
    this.itemEncoderPromise ??= (async () => {
      try {
        const thread = await WorkerEncoder.start(
          entry,
          // It embeds batches of items and windows: no one-thread session for single texts.
          { registry: { ...this.deps.registryOptions(), singleRowSession: false } },
          { idleMs: ENCODER_THREAD_IDLE_MS, idleAfterBulkMs: ENCODER_THREAD_IDLE_AFTER_BULK_MS },
        );
        if (thread.fingerprint !== encoder.fingerprint || thread.dim !== encoder.dim) {
          log.warn('the encoder thread loaded another build of the encoder: items are embedded on the main thread');
          await thread.dispose();
          return undefined;
        }
        return thread;
      } catch (e) {
        log.warn(`the encoder thread did not start (items are embedded on the main thread): ${errorMessage(e)}`);
        return undefined;
      }
    })();
    return this.itemEncoderPromise;
  }

  /** A workspace folder's repository index: sparse, dataflow and, when the encoder loads, dense and ProCC's code windows. */
  readonly repositoryIndex = async (kb: KnowledgeBase, parsers: Parsers, context: RetrieversContext): Promise<RepositoryIndex> => {
    const encoder = await this.encoder();
    // The thread loads beside the parsing; the first chunk of items waits for it.
    const threadEntry = encoder ? encoderWorkerEntry(this.deps.assetsDir) : undefined;
    const thread = encoder && threadEntry ? this.itemEncoder(encoder, threadEntry) : Promise.resolve(undefined);
    // Queries are embedded in-process (one short run, no queue); items on the encoder's thread.
    const dense: DenseEncoder | undefined = encoder && {
      name: encoder.name,
      dim: encoder.dim,
      ...(encoder.fingerprint !== undefined ? { fingerprint: encoder.fingerprint } : {}),
      embed: (texts, signal) => encoder.embed(texts, signal),
      embedItems: async (texts, signal) => {
        const worker = await thread;
        if (worker) return worker.embedItems(texts, signal);
        return encoder.embedItems ? encoder.embedItems(texts, signal) : encoder.embed(texts, signal);
      },
    };
    if (encoder && !threadEntry) log.info('no encoder thread entry next to the server: items are embedded on the main thread');
    const chunking = threadEntry
      ? { chunkSize: DENSE_CHUNK_ITEMS }
      : { chunkSize: DENSE_CHUNK_ITEMS_IN_PROCESS, chunkChars: DENSE_CHUNK_CHARS };
    const pace = (signal: AbortSignal): Promise<void> => this.deps.foreground.yield(signal);
    return createRepositoryIndex(kb, parsers, {
      ...(dense
        ? { dense: { encoder: dense, indexFolder: context.indexFolder, onProgress: context.onDenseProgress, ...chunking, pace } }
        : {}),
      // ProCC's code windows: the same encoder (windows on its thread), built after the dense vectors, paced the same way.
      ...(dense && encoder
        ? {
            similar: {
              encoder: dense,
              // Windows at the query length, on the encoder's thread (WorkerEncoder.embed runs there).
              embedWindows: async (texts: string[], signal: AbortSignal) => {
                const worker = await thread;
                return worker ? worker.embed(texts, signal) : encoder.embed(texts, signal);
              },
              indexFolder: context.indexFolder,
              chunkSize: threadEntry ? WINDOW_CHUNK : WINDOW_CHUNK_IN_PROCESS,
              pace,
              wordSets: () => readsWordSets(this.deps.similarMode()),
              nextLine: this.deps.nextLine,
            },
          }
        : {}),
    });
  };

  /** Stops the encoder's thread, if it started. */
  async dispose(): Promise<void> {
    await (await this.itemEncoderPromise)?.dispose().catch(() => undefined);
  }
}
