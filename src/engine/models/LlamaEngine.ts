// llama.cpp in the language server's process, through node-llama-cpp (the `local` provider): a GGUF
// loaded on first use and unloaded after an idle period, one context sequence that keeps the longest
// common prefix of consecutive prompts (the shared repository block, then the place), the places it
// left kept as saved states (llamaPlaces.ts), and greedy decoding that either runs in llama.cpp or,
// when checking or a hold needs the logits, picks each token here from the full distribution.
// node-llama-cpp evaluates on its own threads: no call here blocks the event loop for long.
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as Nlc from 'node-llama-cpp' with { 'resolution-mode': 'import' };
import { throwIfAborted } from '../util/errors';
import { ByteLevelPieces } from './byteLevelText';
import { commonPrefix, PlaceStore } from './llamaPlaces';
import { firstStop } from './OnnxCausalLM';

type NlcModule = typeof Nlc;
type Token = Nlc.Token;

export interface LlamaEngineOptions {
  modelPath: string;
  /** CPU threads for evaluation, set explicitly (node-llama-cpp's default of 4 collapses generation on a 2-core machine). */
  threads: number;
  /** The most context tokens (the model's training context bounds it further). */
  contextTokens: number;
  /** `auto`: the platform build's GPU (Metal, Vulkan) where there is one; false: the CPU. */
  gpu: 'auto' | false;
  /** Where saved place states go; absent: places are not saved. */
  stateDir?: string;
  /** The most bytes of saved place states. */
  stateBytes?: number;
}

/** What the status and the client say of a loaded model. */
export interface LlamaModelInfo {
  file: string;
  architecture: string;
  /** Its fill-in-the-middle prefix token's text (`<|fim_prefix|>`), when it has the three FIM tokens. */
  fimPrefix: string | undefined;
  contextTokens: number;
  /** The GPU backend in use, or false for the CPU. */
  gpu: string | false;
  threads: number;
  bytes: number;
}

/** What a request read of its prompt. */
export interface LlamaRead {
  evaluated: number;
  cached: number;
  ms: number;
  /** A saved place's state was loaded for it. */
  restored: boolean;
  /** How long loading it took. */
  loadMs?: number;
}

export interface LlamaGenerateOptions {
  maxNewTokens: number;
  stop?: readonly string[];
  /** The answer is complete (another thread's answer may take a turn). */
  until?: (generated: string) => boolean | Promise<boolean>;
  /** Sees (and may change) the next token's log-probabilities before the greedy choice; absent: llama.cpp chooses. */
  logitsFilter?: (generated: string, logits: Float32Array, ids: readonly number[]) => void;
  /**
   * Chooses the next token from its log-probabilities instead of logitsFilter and the greedy choice here (the engine's thread hands
   * them to the thread that holds the filter); `logits` is the caller's to keep.
   */
  chooseFromLogits?: (generated: string, logits: Float32Array, ids: readonly number[]) => Promise<{ id: number; logprob: number }>;
  /**
   * False where the filter would change nothing at this step: llama.cpp chooses (the same greedy
   * token) without the full distribution, which costs most at a 150,000-token vocabulary. Absent: every step.
   */
  filterActive?: (generated: string) => boolean | Promise<boolean>;
}

export interface LlamaGenerated {
  text: string;
  stoppedBy: 'eos' | 'length' | 'stop';
  logprobs: Array<{ token: string; logprob: number }>;
  read: LlamaRead;
}

/** What the local client needs of an engine: this thread's LlamaEngine, or the one on its own thread (LlamaWorkerEngine). */
export interface LocalEngine {
  readonly modelPath: string;
  /** Its tokenizer is in this process (tokenizeNow answers once the model is loaded); false: prompts are fitted with an estimate. */
  readonly tokenizesHere: boolean;
  isLoaded(): boolean;
  info(): Promise<LlamaModelInfo>;
  unload(): Promise<void>;
  tokenTexts(): Promise<readonly string[]>;
  /** The model's tokens of `text` now, where this thread has the tokenizer; undefined otherwise. */
  tokenizeNow(text: string): ArrayLike<number> | undefined;
  readonly eosId: number | undefined;
  warm(prompt: string, signal: AbortSignal): Promise<LlamaRead>;
  generate(prompt: string, options: LlamaGenerateOptions, signal: AbortSignal): Promise<LlamaGenerated>;
  placeStats(): { places: number; bytes: number };
}

/** A model file that cannot be used, with the reason in words a user can act on. */
export class LlamaModelError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LlamaModelError';
  }
}

/** Prompt tokens evaluated per step: a keystroke's abort stops a long read between steps. */
const PROMPT_STEP = 256;
/**
 * Before the engine has timed a load and a read, a saved place is loaded when it holds this many more of the prompt
 * than the sequence does; after, when reading what it holds more would take longer than loading it.
 */
const RESTORE_GAIN = 128;
/** Reads shorter than this are mostly a step's fixed cost, and do not time a token. */
const TIMED_READ_MIN = 32;
/** The sequence's place is saved before it erases this many tokens or more. */
const SAVE_MIN = 256;
/** Vocabulary texts decoded per event-loop turn. */
const TEXTS_PER_TURN = 8192;
const utf8 = new TextDecoder('utf-8');
const utf8Encoder = new TextEncoder();

/** The ESM package from CommonJS, by its resolved file (a bare specifier does not resolve from every loader); loaded once. */
let nlcModule: Promise<NlcModule> | undefined;
function loadNlc(): Promise<NlcModule> {
  const name = 'node-llama-cpp';
  nlcModule ??= (async () => (await import(pathToFileURL(require.resolve(name)).href)) as NlcModule)().catch((e: unknown) => {
    nlcModule = undefined;
    throw new LlamaModelError(`the llama.cpp engine (node-llama-cpp) is not installed with the extension: ${String(e)}`);
  });
  return nlcModule;
}

let llamaInstance: Promise<Nlc.Llama> | undefined;
function llamaOf(nlc: NlcModule, gpu: 'auto' | false): Promise<Nlc.Llama> {
  llamaInstance ??= nlc
    .getLlama({ gpu, build: 'never', logLevel: nlc.LlamaLogLevel.error, progressLogs: false, skipDownload: true })
    .catch((e: unknown) => {
      llamaInstance = undefined;
      throw new LlamaModelError(`llama.cpp could not start on this platform: ${e instanceof Error ? e.message : String(e)}`);
    });
  return llamaInstance;
}

interface Loaded {
  model: Nlc.LlamaModel;
  context: Nlc.LlamaContext;
  sequence: Nlc.LlamaContextSequence;
  info: LlamaModelInfo;
  vocab: number;
  /** Byte-level BPE vocabularies: each token's bytes as llama.cpp's token_to_piece writes them (byteLevelText.ts). */
  pieces: ByteLevelPieces | undefined;
}

export class LlamaEngine implements LocalEngine {
  readonly tokenizesHere = true;
  private loaded: Promise<Loaded> | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private texts: string[] | undefined;
  private readonly places: PlaceStore | undefined;
  /** Measured costs, for whether loading a saved place beats reading (the last reading of each; a save's before the first load). */
  private readMsPerToken: number | undefined;
  private loadMsPerByte: number | undefined;

  constructor(private readonly options: LlamaEngineOptions) {
    this.places = options.stateDir
      ? new PlaceStore({ dir: options.stateDir, maxBytes: options.stateBytes ?? 1 << 30, maxPlaces: 8 })
      : undefined;
  }

  get modelPath(): string {
    return this.options.modelPath;
  }

  /** Loaded now (not loading, not unloaded). */
  isLoaded(): boolean {
    return this.current !== undefined;
  }
  private current: Loaded | undefined;

  /** Loads the model once; a failed load is tried again by the next call. */
  load(): Promise<Loaded> {
    this.loaded ??= this.open().then(
      (l) => (this.current = l),
      (e: unknown) => {
        this.loaded = undefined;
        throw e;
      },
    );
    return this.loaded;
  }

  async info(): Promise<LlamaModelInfo> {
    return (await this.load()).info;
  }

  private async open(): Promise<Loaded> {
    const path = this.options.modelPath;
    const file = basename(path);
    const size = await stat(path).then(
      (s) => s.size,
      () => undefined,
    );
    if (size === undefined) throw new LlamaModelError(`the model file ${file} does not exist`);
    const nlc = await loadNlc();
    const llama = await llamaOf(nlc, this.options.gpu);
    let model: Nlc.LlamaModel;
    try {
      // loadModel parses the GGUF's header itself (its 150k-token vocabulary blocks the event loop for a few hundred ms); a second
      // parse to name a broken file is left to the failure path.
      model = await llama.loadModel({ modelPath: path, gpuLayers: llama.gpu === false ? 0 : 'auto' });
    } catch (e) {
      throw await brokenFileError(nlc, path, size, e);
    }
    const arch = String(model.fileInfo.metadata.general?.architecture ?? 'unknown');
    const threads = Math.max(1, Math.floor(this.options.threads));
    const contextSize = Math.max(64, Math.min(this.options.contextTokens, model.trainContextSize || Infinity));
    let context: Nlc.LlamaContext;
    try {
      context = await model.createContext({
        contextSize,
        sequences: 1,
        threads: { ideal: threads, min: threads },
        batchSize: Math.min(512, contextSize),
        flashAttention: model.flashAttentionSupported,
      });
    } catch (e) {
      await model.dispose();
      throw new LlamaModelError(`llama.cpp could not make a ${contextSize}-token context for ${file}: ${String(e)}`);
    }
    const infill = model.tokens.infill;
    const fim = infill.prefix !== null && infill.suffix !== null && infill.middle !== null;
    const ggml = model.fileInfo.metadata.tokenizer?.ggml;
    const vocab = ggml?.tokens?.length ?? 0;
    await this.places?.clear();
    return {
      model,
      context,
      sequence: context.getSequence(),
      vocab,
      pieces: ggml?.model === 'gpt2' && ggml.tokens ? new ByteLevelPieces(ggml.tokens, ggml.token_type ?? []) : undefined,
      info: {
        file,
        architecture: arch,
        fimPrefix: fim ? (infill.prefixString ?? undefined) : undefined,
        contextTokens: contextSize,
        gpu: llama.gpu,
        threads,
        bytes: size,
      },
    };
  }

  /** Frees the model and its context (memory returns to the system); the next call loads it again. */
  async unload(): Promise<void> {
    const pending = this.loaded;
    if (!pending) return;
    await this.serial(async () => {
      const l = await pending.catch(() => undefined);
      this.loaded = undefined;
      this.current = undefined;
      this.texts = undefined;
      await this.places?.clear();
      if (!l) return;
      await l.context.dispose();
      await l.model.dispose();
    });
  }

  /** One request at a time on the one sequence. */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** The model's tokens of `text`, special tokens parsed (as prompts hold them). */
  async tokenize(text: string): Promise<Token[]> {
    const l = await this.load();
    return l.model.tokenize(text, true);
  }

  /** Tokens of `text` when the model is loaded (synchronous: the tokenizer is native and fast). */
  tokenizeNow(text: string): Token[] | undefined {
    return this.current?.model.tokenize(text, true);
  }

  /** Each vocabulary id's text, decoded in slices that let other work in between. */
  async tokenTexts(): Promise<readonly string[]> {
    if (this.texts) return this.texts;
    const l = await this.load();
    const n = l.vocab;
    const texts = new Array<string>(n);
    for (let i = 0; i < n; i++) {
      const bytes = l.pieces?.bytes(i);
      texts[i] = bytes ? utf8.decode(bytes) : l.model.detokenize([i as Token], true);
      if (i % TEXTS_PER_TURN === TEXTS_PER_TURN - 1) await new Promise<void>((r) => setImmediate(r));
    }
    return (this.texts = texts);
  }

  get eosId(): number | undefined {
    return this.current?.model.tokens.eos ?? undefined;
  }

  /** Reads `prompt` into the sequence without generating (a warm-up). */
  warm(prompt: string, signal: AbortSignal): Promise<LlamaRead> {
    return this.serial(async () => {
      const l = await this.load();
      const ids = this.fit(l, l.model.tokenize(prompt, true), 0);
      return this.readPrompt(l, ids, ids.length, signal);
    });
  }

  /** Greedy generation after `prompt`. */
  generate(prompt: string, options: LlamaGenerateOptions, signal: AbortSignal): Promise<LlamaGenerated> {
    return this.serial(async () => {
      const l = await this.load();
      throwIfAborted(signal);
      const maxNew = Math.max(0, Math.min(Math.floor(options.maxNewTokens), l.info.contextTokens - 1));
      let ids = this.fit(l, l.model.tokenize(prompt, true), maxNew);
      if (ids.length === 0) ids = [l.model.tokens.bos ?? l.model.tokens.eos ?? (0 as Token)];
      // The last prompt token is evaluated with the first choice: its logits start the answer.
      const read = await this.readPrompt(l, ids, ids.length - 1, signal);
      const out = await this.decode(l, ids[ids.length - 1]!, maxNew, options, signal);
      return { ...out, read };
    });
  }

  /** Too long for the context: the start of the prompt is cut, as llama.cpp's server does. */
  private fit(l: Loaded, ids: Token[], maxNew: number): Token[] {
    const room = l.info.contextTokens - maxNew;
    return ids.length > room ? ids.slice(ids.length - room) : ids;
  }

  /**
   * Leaves the sequence holding `ids[0, upTo)`: it keeps the common prefix of what it holds, or
   * restores a saved place that shares more, saves the place it leaves when that erases much, and
   * evaluates the rest in steps that a cancellation stops between.
   */
  private async readPrompt(l: Loaded, ids: Token[], upTo: number, signal: AbortSignal): Promise<LlamaRead> {
    const start = performance.now();
    const seq = l.sequence;
    const target = ids.slice(0, upTo);
    let held = seq.contextTokens;
    let common = commonPrefix(held, target);
    let restored = false;
    let loadMs: number | undefined;
    const saved = this.places?.best(target);
    await this.save(l, held, common);
    if (this.places && saved && this.worthLoading(saved.common - common, saved.place.bytes)) {
      const loadStart = performance.now();
      await seq.loadStateFromFile(saved.place.path, { acceptRisk: true });
      loadMs = performance.now() - loadStart;
      this.loadMsPerByte = loadMs / Math.max(1, saved.place.bytes);
      this.places.touch(saved.place);
      held = seq.contextTokens;
      common = commonPrefix(held, target);
      restored = true;
    }
    if (common < seq.nextTokenIndex) await seq.eraseContextTokenRanges([{ start: common, end: seq.nextTokenIndex }]);
    const rest = target.slice(common);
    const readStart = performance.now();
    for (let i = 0; i < rest.length; i += PROMPT_STEP) {
      throwIfAborted(signal);
      await seq.evaluateWithoutGeneratingNewTokens(rest.slice(i, i + PROMPT_STEP));
    }
    if (rest.length >= TIMED_READ_MIN) this.readMsPerToken = (performance.now() - readStart) / rest.length;
    return { evaluated: rest.length, cached: common, ms: performance.now() - start, restored, ...(loadMs !== undefined ? { loadMs } : {}) };
  }

  /**
   * Whether a saved place holding `gain` more tokens of the prompt is worth loading from its `bytes`-byte state: a
   * piece of a head read ahead at a return is often shorter than RESTORE_GAIN, and on a CPU loading a state costs
   * what reading a few tokens does (docs/BENCHMARKS.md "Local engine: moving session and memory").
   */
  private worthLoading(gain: number, bytes: number): boolean {
    if (gain <= 0) return false;
    if (this.readMsPerToken === undefined || this.loadMsPerByte === undefined) return gain >= RESTORE_GAIN;
    return gain * this.readMsPerToken > bytes * this.loadMsPerByte;
  }

  /** Saves the sequence's place before `keep` erases much of it. */
  private async save(l: Loaded, held: readonly Token[], keep: number): Promise<void> {
    if (!this.places || held.length - keep < SAVE_MIN) return;
    const path = await this.places.nextPath();
    const saveStart = performance.now();
    const { fileSize } = await l.sequence.saveStateToFile(path);
    // Until a load is timed, writing a state stands for what loading one costs.
    this.loadMsPerByte ??= (performance.now() - saveStart) / Math.max(1, fileSize);
    await this.places.add(held, path, fileSize);
  }

  private async decode(
    l: Loaded,
    first: Token,
    maxNew: number,
    options: LlamaGenerateOptions,
    signal: AbortSignal,
  ): Promise<Omit<LlamaGenerated, 'read'>> {
    const seq = l.sequence;
    const generated: Token[] = [];
    const logprobs: LlamaGenerated['logprobs'] = [];
    const filter = options.logitsFilter;
    const choose = options.chooseFromLogits;
    const full = filter !== undefined || choose !== undefined;
    let text = '';
    let input = first;
    for (let s = 0; s < maxNew; s++) {
      throwIfAborted(signal);
      const filtered = full && ((await options.filterActive?.(text)) ?? true);
      const step = filtered
        ? await seq.controlledEvaluate([[input, { generateNext: { probabilities: true } }]])
        : await seq.controlledEvaluate([[input, { generateNext: { token: true, confidence: true, options: { temperature: 0 } } }]]);
      const next = step[0]?.next;
      let id: Token;
      let logprob: number;
      if (filtered) {
        const logits = new Float32Array(l.vocab).fill(-Infinity);
        for (const [t, p] of next?.probabilities ?? []) if (t < logits.length) logits[t] = Math.log(p);
        filter?.(text, logits, generated);
        const best = choose ? await choose(text, logits, generated) : greedy(logits);
        id = best.id as Token;
        logprob = best.logprob;
      } else {
        id = next?.token ?? l.model.tokens.eos ?? (0 as Token);
        logprob = Math.log(Math.max(next?.confidence ?? 1, 1e-45));
      }
      if (next?.token === null || l.model.isEogToken(id)) return { text, stoppedBy: 'eos', logprobs };
      generated.push(id);
      const before = text.length;
      const decoded = this.textOf(l, generated);
      // A token that ends inside a UTF-8 character is reported with the next one.
      if (!decoded.endsWith('\uFFFD')) text = decoded;
      logprobs.push({ token: text.slice(before), logprob });
      const stopAt = firstStop(text, options.stop);
      if (stopAt >= 0) return { text: text.slice(0, stopAt), stoppedBy: 'stop', logprobs };
      if (await options.until?.(text)) return { text, stoppedBy: 'stop', logprobs };
      input = id;
    }
    return { text, stoppedBy: 'length', logprobs };
  }

  /** The text of generated tokens: their pieces one after another where the vocabulary is byte-level, else llama.cpp's detokenizer. */
  private textOf(l: Loaded, ids: readonly Token[]): string {
    if (!l.pieces) return l.model.detokenize(ids, false);
    const parts = ids.map((id) => l.pieces!.bytes(id) ?? utf8Encoder.encode(l.model.detokenize([id], false)));
    const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      all.set(p, at);
      at += p.length;
    }
    return utf8.decode(all);
  }

  /** The saved places' count and bytes, for the status and benchmarks. */
  placeStats(): { places: number; bytes: number } {
    return { places: this.places?.size ?? 0, bytes: this.places?.total() ?? 0 };
  }
}

/**
 * Why llama.cpp could not load a file, in words a user can act on: not a GGUF, cut short (the last tensor starts past its end),
 * or llama.cpp's own reason with the file's architecture.
 */
async function brokenFileError(nlc: NlcModule, path: string, size: number, cause: unknown): Promise<LlamaModelError> {
  const file = basename(path);
  let arch: string;
  try {
    const header = await nlc.readGgufFileInfo(path, { readTensorInfo: true, sourceType: 'filesystem', logWarnings: false });
    arch = String(header.metadata.general?.architecture ?? 'unknown');
    const lastStart = header.tensorInfo?.reduce((n, t) => Math.max(n, Number(t.fileOffset)), 0) ?? 0;
    if (lastStart >= size)
      return new LlamaModelError(`the model file ${file} is truncated (${size} bytes; its tensors reach past the end)`);
  } catch (e) {
    return new LlamaModelError(`the model file ${file} is not a readable GGUF file (${e instanceof Error ? e.message : String(e)})`);
  }
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new LlamaModelError(`llama.cpp could not load ${file} (architecture ${arch}): ${reason}`);
}

/** The most likely token and its log-probability after the filter (log-softmax over what is left). */
export function greedy(logits: Float32Array): { id: number; logprob: number } {
  let id = 0;
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++)
    if (logits[i]! > max) {
      max = logits[i]!;
      id = i;
    }
  let sum = 0;
  for (let i = 0; i < logits.length; i++) if (logits[i]! > -Infinity) sum += Math.exp(logits[i]! - max);
  return { id, logprob: -Math.log(sum) };
}
