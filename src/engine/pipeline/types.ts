// What a completion request carries, what it returns, the options of each stage, and the
// completion modes and their router: the values that tell the one pipeline which kind of completion it makes.
import type { PromptMemory } from '../prompt/promptMemory';
import type { RepoFormat } from '../prompt/templates';
import type { BodyPromptLayout } from '../prompt/bodyPrompt';
import type { Lang } from '../kb/types';
import type { QueryBuilder, QueryStageOptions } from '../query/types';
import type { ChunkProber } from '../query/probeQuery';
import type { Candidate, Retriever, RetrievalStageOptions, RetrievalTrace } from '../retrieve/types';
import type { RerankOutcome, RerankStage } from '../rerank/types';
import type { GenerateRequest, GenerateResult, ModelClient, ModelSlot } from '../generate/types';
import type { WarmUps } from '../generate/warmUps';
import type { SimilarMode, SimilarStageOptions } from '../similar/chooseWindows';
import type { ReceiverMembers, TypedFile } from '../check/receiverMembers';
import type { UnfinishedAnalyses } from '../flow/unfinished';
import type { CallSignature } from '../check/callArguments';
import type { SimilarRetrieval } from '../similar/perspectives';
import type { LinUcb } from '../similar/linUcb';
import type { SimilarArm } from '../similar/types';
import type { GateModel } from '../gate/model';
import type { RepoMethods } from '../body/RepoMethods';
import type { BodyComposer, SignatureSearch } from '../body/rambo';
import type { StageOutcomes } from './outcomes';
import type { CompletionTrace } from './trace';
import type { Recorder } from './recorder';

export interface CompletionRequest {
  /** Repo-relative path with forward slashes. */
  filePath: string;
  lang: Lang;
  /** Text before the cursor. */
  prefix: string;
  /** Text after the cursor. */
  suffix: string;
  /** The repository's name (its folder), for prompt forms that name it. */
  repoName?: string;
}

/**
 * The pipeline's configuration slices (the server merges settings into them; the engine reads no settings), complete: resolveOptions
 * (resolveOptions.ts) fills every field from the defaults table (defaults.ts), so no stage has a default of its own.
 */
export interface PipelineOptions {
  query: QueryStageOptions;
  retrieval: RetrievalStageOptions;
  rerank: { topU: number; timeoutMs: number };
  /**
   * contextShare: the share of the budget the code before the cursor keeps at least when snippets want more. repoFormat: snippets as a
   * comment block, or as the repository's files (`auto`: where the model's family was pretrained on that form).
   */
  prompt: {
    budgetTokens: number;
    suffixShare: number;
    contextShare: number;
    repoFormat: RepoFormat;
  };
  generate: { maxNewTokens: number; temperature: number };
  postprocess: { maxLines: number; maxChars: number };
  /** The body mode (Rambo): signature hits, usages, the sketch call and the body call. */
  body: {
    topSignature: number;
    topUsages: number;
    sketchTokens: number;
    sketchTimeoutMs: number;
    maxNewTokens: number;
    maxLines: number;
    /**
     * Step c's sources: the sketch alone (Rambo; the signature hits only when it names nothing of the repository), or the sketch then the
     * signature hits' bodies.
     */
    elements: BodyElements;
    /** Whether CodeRAG's reranked knowledge items (the line stages' top-u) join Rambo's lists where retrieval paths exist. */
    knowledge: boolean;
    /**
     * The share of the body prompt's budget the code before the cursor keeps at least when fragments want more (the sketch keeps
     * prompt.contextShare).
     */
    contextShare: number;
  };
  /**
   * Checking against the repository at dereferences (check/): `constrain` masks the embedded
   * model's tokens to the receiver's members and checks remote models' answers; `repair` only
   * checks finished answers; `off`. `prior`: the member prior's weight while the embedded model
   * writes a member name under the mask (check/memberPrior; 0: the mask alone), one weight for
   * every language or one per language (a language the record leaves out: 0).
   */
  check: { mode: CheckMode; prior: number | Readonly<Partial<Record<Lang, number>>> };
  /**
   * ProCC's similar code (similar/): `bandit` lets the host's LinUCB choose a perspective per
   * request (a fixed perspective when the host lends none), `union` takes every perspective's
   * top-1, a perspective name fixes it, `off` skips the stage.
   */
  similar: Required<Omit<SimilarStageOptions, 'mode'>> & { mode: SimilarMode };
  /**
   * The show gate (gate/): `on` shows a suggestion only when its score (the predicted share of it a
   * person keeps) reaches `threshold` (`bodyThreshold` for a method body); `off` shows every one.
   */
  gate: { mode: 'on' | 'off'; threshold: number; bodyThreshold: number };
}

export type BodyElements = 'sketch' | 'sketch+similar';
export const BODY_ELEMENTS: readonly BodyElements[] = ['sketch', 'sketch+similar'];

export type CheckMode = 'constrain' | 'repair' | 'off';
export const CHECK_MODES: readonly CheckMode[] = ['constrain', 'repair', 'off'];

export interface CompletionItem {
  /** Text to insert at the cursor. */
  text: string;
}

export interface CompletionResult {
  items: CompletionItem[];
  trace: CompletionTrace;
  /** The stages' own outputs, for tools that show more than the trace (`coderag complete`, `coderag retrieve`). */
  retrieval?: RetrievalTrace;
  rerank?: RerankOutcome;
  /** The snippets in prompt order: the reranked top-u that entered the prompt (all of them without a model). */
  contexts: Candidate[];
  /** What the stages returned, for the host (model health, learning, statistics); the trace is written from them. */
  outcomes: StageOutcomes;
}

/** What the model wrote, cut to what the mode completes. */
export interface PostprocessContext {
  lang: Lang;
  prefix: string;
  suffix: string;
  /** Why the model stopped, where known (the body mode drops a last line the token limit cut). */
  stoppedBy?: GenerateResult['stoppedBy'];
}

/**
 * What the host lends one request, resolved once at its start and handed down with the request's
 * signal: the stages read these values and call nothing back in the host.
 */
export interface RequestEnv {
  /** The completion model; absent: retrieval only (no prompt, no generation). The pipeline sends it through the redaction boundary. */
  model?: ModelClient;
  /** The repository as its workspace folder lends it now; absent: no retrieval (a file outside every folder, a folder not ready). */
  repo?: RepoLease;
  /** The probing model (CodeRAG Alg. 1), once loaded; absent: the query falls back. */
  prober?: ChunkProber;
  /** The BestFit reranker chosen for this request; absent: the retrieval order. */
  reranker?: RerankStage;
  /** The host's LinUCB; the pipeline only chooses with it (the host rewards later). */
  bandit?: LinUcb<SimilarArm>;
  /** The show gate's model as the host learned it (per workspace folder); absent: the shipped weights. */
  showGateModel?: GateModel;
}

/**
 * A workspace folder's repository, lent to one request while its lease holds: a folder that leaves
 * `ready` mid-request revokes the lease, and the stages after that use nothing of it.
 */
export interface RepoLease {
  /** Aborted when the folder stops being ready; absent: the repository is lent for the whole request. */
  readonly lease?: AbortSignal;
  /** The repository's retrieval paths ready now (a path still preparing is left out). */
  readonly retrievers: readonly Retriever[];
  /** Receiver typing for checked completions (check/receiverMembers); absent: no checking. */
  readonly receivers?: ReceiverTyping;
  /** ProCC's perspectives over the repository's code windows, ready or not (absent: no similar-code stage). */
  readonly similar?: SimilarRetrieval;
  /** The repository's methods and identifier index (the body mode's lists). */
  readonly methods?: RepoMethods;
}

/** What a pipeline keeps across its requests: the model slots, the places of work, the warm-ups, and how a stage yields. */
export interface PipelineParts {
  /** One model-server request in flight (the generate stage). */
  modelSlot?: ModelSlot;
  /** One in-process probing run at a time (the query stage), so superseded requests queue nothing. */
  probeSlot?: ModelSlot;
  /**
   * What the line prompt keeps from one keystroke to the next at a place of work (prompt/promptMemory);
   * absent: every prompt is laid out as at a new place.
   */
  promptMemory?: PromptMemory;
  /**
   * Has the model server read a prompt's head ahead of the next keystrokes, once per changed repository
   * block, outside the request's time limit and signal (generate/warmUps.ts); absent: no warm-up.
   */
  warmUps?: WarmUps;
  /**
   * Before each stage: let the host's pending messages through (a newer request may be waiting to
   * supersede this one); the stage then throws CancellationError when the signal has fired.
   */
  yieldTurn?: (signal: AbortSignal) => Promise<void>;
  /**
   * The host lends ProCC's code windows with its repositories: the similar-code stage runs (and records its perspectives as skipped)
   * even for a request whose repository has none yet. Absent: the stage runs only where the request's repository lends windows.
   */
  offersSimilar?: boolean;
}

/**
 * Research strategies an evaluation swaps in (only src/bench and its scripts pass them): the query
 * builder, and the body mode's sketch, lists and layout. The product runs without any.
 */
export interface ResearchHooks {
  /** The query stage's strategy; absent: CodeRAG's probing with the lent prober, else options.query's fallback. */
  query?: QueryBuilder;
  /** The body mode's evaluation variants (bodyMode.ts). */
  body?: BodyModeHooks;
  /**
   * Tokens a second the model server is taken to read a prompt at, instead of what its answers say (absent: what they say, and until
   * they say, a CPU's speed, so a new place's local part stays small): prompts laid out as for a server of that speed.
   */
  readRate?: number;
}

/**
 * A sketch given instead of the model's (an evaluation's ceiling): no sketch call; its elements are
 * mapped to the repository as the model's are.
 */
export interface GivenSketch {
  /** What the trace calls the sketch's source. */
  readonly source: string;
  /** The trace's note on the skipped sketch call. */
  readonly note: string;
  readonly text: string;
}

/**
 * Where the body's elements come from: `model` (Rambo: a sketch from the completion model),
 * `none` (the signature-similar methods' bodies; no sketch call), or a sketch given as text.
 */
export type SketchSource = 'model' | 'none' | GivenSketch;

/** The body mode's evaluation variants; the product's body mode is Rambo's with none of them. */
export interface BodyModeHooks {
  sketch?: SketchSource;
  /**
   * The model that drafts the sketch when the pipeline has no completion model: the body mode then stops after its lists, every one of
   * them a context (an evaluation of retrieval whose sketch is still the model's).
   */
  sketchModel?: ModelClient;
  /** Step e's order of the lists (usages, definitions, CodeRAG's items, signature hits); absent: in turns (composeInTurns). */
  compose?: BodyComposer;
  /** Step a's search; absent: token Jaccard of the signature keys over the mode's tokenizer (jaccardSignatures). */
  signatures?: SignatureSearch;
  /** The body prompt's layout of its fragments; absent: Rambo's (RAMBO_LAYOUT). */
  promptLayout?: BodyPromptLayout;
  /**
   * CodeRAG's knowledge items for the request (the line stages' reranked top-u), joining the prompt's list; absent: the pipeline's own line
   * stages (options.body.knowledge).
   */
  knowledge?: (request: CompletionRequest, signal: AbortSignal) => Promise<Candidate[]>;
}

/** What checking needs of check/receiverMembers' ReceiverTyper. */
export interface ReceiverTyping {
  membersAt(file: TypedFile, signal: AbortSignal): ReceiverMembers | undefined;
  /** The repository callable of the call the text ends inside, with the names in scope that fit its parameters. */
  callAt?(file: TypedFile, signal: AbortSignal): CallSignature | undefined;
}

/** A typed value of one request, computed on first use (RequestContext.slot). */
export interface RequestSlot<T> {
  readonly name: string;
  compute(context: RequestContext): T;
}

/**
 * One request as every stage sees it: the request as given, the options, what the host lent it
 * (env) and what the pipeline keeps (parts), its recorder and signal. What one stage works out of
 * the file (the syntax tree's answers) is kept in a typed slot for the next stage of the same
 * request, so the file is read once.
 */
export interface RequestContext {
  readonly request: CompletionRequest;
  readonly options: PipelineOptions;
  readonly env: RequestEnv;
  readonly parts: PipelineParts;
  readonly hooks: ResearchHooks;
  readonly recorder: Recorder;
  readonly signal: AbortSignal;
  /** The unfinished file's parses and dataflow graph: dataflow retrieval and receiver typing share them. */
  readonly analyses: UnfinishedAnalyses;
  /** This request's value of `slot`, computed on first use. */
  slot<T>(slot: RequestSlot<T>): T;
  /** The result: the trace built by the recorder, closed with its totals. */
  finish(
    items: CompletionItem[],
    outputs: { contexts: Candidate[]; retrieval?: RetrievalTrace; rerank?: RerankOutcome },
  ): Promise<CompletionResult>;
}

/** What the trace calls the mode that ran. */
export type ModeName = 'line' | 'body';

/**
 * How the line composition (complete.ts: knowledge, similar code, the model stages) primes the
 * prompt, holds and stops the model and cuts its answer. Line mode's plan is LINE_MODE; a plan of
 * its own lets another kind of completion run the line stages (the baselines' body).
 */
export interface LinePlan {
  readonly kind: 'line';
  readonly name: ModeName;
  /**
   * Text put before the cursor in the prompt so the model starts where the insertion starts (line
   * mode: the line's indentation on an empty line); the inserted text begins with it.
   */
  prime(request: CompletionRequest): string;
  /** What the model may not do yet (GenerateRequest.holdEnd / holdLine), for the request as primed. */
  hold(request: CompletionRequest): Pick<GenerateRequest, 'holdEnd' | 'holdLine'>;
  /**
   * When the answer is complete (GenerateRequest.until): more text could not change what
   * `postprocess` keeps; undefined: when the model stops.
   */
  until(request: CompletionRequest): ((generated: string) => boolean) | undefined;
  /** Cut the model's raw text to what is inserted. */
  postprocess(raw: string, context: PostprocessContext, options: PipelineOptions['postprocess']): string;
  /** Why postprocess leaves nothing of `raw` (for the trace); undefined when it leaves something or gives no reason. */
  whyEmpty(raw: string, context: PostprocessContext, options: PipelineOptions['postprocess']): string | undefined;
}

/** A mode with its own composition of the stages (the body mode: Rambo's lists, the knowledge stage, a sketch call, the model stages). */
export interface ComposedMode {
  readonly kind: 'composed';
  readonly name: ModeName;
  complete(context: RequestContext): Promise<CompletionResult>;
}

/**
 * A completion mode: the line composition run with a plan (CodeRAG, with ProCC's similar code as one of its stages), or a composition
 * of its own (Rambo).
 */
export type CompletionMode = LinePlan | ComposedMode;

/** Which mode completes each request: a fixed one, or `auto` (body inside an empty method body, else line). */
export interface Router {
  readonly kind: 'router';
  /** The mode a host asked for: `auto`, or the fixed mode's name. */
  readonly name: ModeName | 'auto';
  route(context: RequestContext): CompletionMode;
}
