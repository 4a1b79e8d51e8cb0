// The distilled reranker (CodeRAG section 2.3.2): a small model trained on the teacher's BestFit
// choices scores each (query, candidate) pair on the CPU; a window's pick is its best score. The
// same heap sort drives it; since its scores do not depend on the window, all candidates are
// scored in one batch up front and the windows reuse them. Two model layouts load: the shipped
// feature scorer (a small network over features.ts's vectors, fast enough for 31 candidates per
// keystroke) and a token cross-encoder (for a user's larger model).
import { join } from 'node:path';
import { argmax } from './bestFitAnswer';
import type { Reranker, RerankDoc, RerankQuery, WindowPick } from './types';
import { RerankError } from './types';
import { CancellationError, errorMessage, isCancellationError, throwIfAborted } from '../util/errors';
import type { ModelPlacement } from '../models/device';
import {
  configInt,
  int64Tensor,
  loadOrt,
  newTimings,
  openPlacedSession,
  runSession,
  type OrtModule,
  type OrtSession,
  type SessionOptions,
} from '../models/onnxSession';
import { loadTokenizer, readJsonFile, type Tokenizer } from '../models/tokenizer';
import { ModelError } from '../models/errors';
import type { ModelTimings } from '../models/types';
import { FEATURE_COUNT, FEATURE_NAMES, featureMatrix } from './features';

/** Scores candidates for a query in one batch; higher is more helpful. */
type PairScorer = (query: string, candidates: readonly string[], signal: AbortSignal) => Promise<ArrayLike<number>>;

/** Scores candidate documents (with whatever retrieval metadata they carry) for a query in one batch. */
type DocScorer = (query: RerankQuery, docs: readonly RerankDoc[], signal: AbortSignal) => Promise<ArrayLike<number>>;

/** A text-only pair scorer as a document scorer. */
function docScorerOf(pair: PairScorer): DocScorer {
  return (query, docs, signal) =>
    pair(
      query.text,
      docs.map((d) => d.text),
      signal,
    );
}

export class DistilledReranker implements Reranker {
  readonly kind = 'distilled' as const;
  // Scores of the current query's candidates, by id (a new query text starts over).
  private cacheQuery: string | undefined;
  private readonly cache = new Map<string, { text: string; score: number }>();

  private readonly scorer: DocScorer;

  /** `scorer`: a document scorer, or a text pair scorer (`{ pair }`). */
  constructor(
    readonly name: string,
    scorer: DocScorer | { pair: PairScorer },
  ) {
    this.scorer = typeof scorer === 'function' ? scorer : docScorerOf(scorer.pair);
  }

  async prepare(query: RerankQuery, docs: readonly RerankDoc[], signal: AbortSignal): Promise<void> {
    await this.scores(query, docs, signal);
  }

  async pick(query: RerankQuery, window: readonly RerankDoc[], signal: AbortSignal): Promise<WindowPick> {
    if (window.length === 0) throw new RangeError('an empty window has nothing to pick');
    const scores = await this.scores(query, window, signal);
    return { index: argmax(scores), scores };
  }

  private async scores(query: RerankQuery, docs: readonly RerankDoc[], signal: AbortSignal): Promise<number[]> {
    throwIfAborted(signal);
    if (this.cacheQuery !== query.text) {
      this.cacheQuery = query.text;
      this.cache.clear();
    }
    const missing = docs.filter((d, i) => this.cache.get(d.id)?.text !== d.text && docs.findIndex((o) => o.id === d.id) === i);
    if (missing.length > 0) {
      let scores: ArrayLike<number>;
      try {
        scores = await this.scorer(query, missing, signal);
      } catch (e) {
        if (isCancellationError(e) || signal.aborted) throw new CancellationError();
        throw new RerankError('model', `distilled reranker failed: ${errorMessage(e)}`);
      }
      if (scores.length !== missing.length)
        throw new RerankError('model', `distilled reranker returned ${scores.length} scores for ${missing.length} candidates`);
      missing.forEach((d, i) => {
        const s = Number(scores[i]);
        this.cache.set(d.id, { text: d.text, score: Number.isFinite(s) ? s : -Infinity });
      });
    }
    return docs.map((d) => this.cache.get(d.id)?.score ?? -Infinity);
  }
}

// ---- The ONNX pair scorer -------------------------------------------------------------------

/** The model file inside a distilled-reranker folder (next to config.json and the tokenizer files). */
const RERANKER_FILE = 'onnx/model.onnx';
export const DEFAULT_RERANKER = 'coderag-reranker';

/**
 * A cross-encoder over onnxruntime-node. Folder layout: `config.json` (`model_type`
 * "coderag-pair-reranker", `max_query_tokens`, `max_candidate_tokens`, `sep_token`),
 * `tokenizer.json` + `tokenizer_config.json`, and `onnx/model.onnx` with int64 inputs
 * `input_ids`, `attention_mask` [B, T] and a float output `scores` [B] (or `logits` [B, 1]).
 * Each row is the query's last tokens, the separator, then the candidate's first tokens.
 */
export class OnnxPairScorer {
  readonly timings: ModelTimings = newTimings();
  /** The execution provider the session runs on (models/device.ts). */
  placement: ModelPlacement = { device: 'cpu', provider: 'cpu' };

  private constructor(
    readonly name: string,
    private readonly ort: OrtModule,
    private readonly session: OrtSession,
    private readonly tokenizer: Tokenizer,
    private readonly sepId: number,
    private readonly maxQueryTokens: number,
    private readonly maxCandidateTokens: number,
    private readonly output: string,
  ) {}

  /** `config`: the folder's config.json when the caller has read it already. */
  static async load(
    dir: string,
    name = DEFAULT_RERANKER,
    opts: SessionOptions = {},
    config?: Record<string, unknown>,
  ): Promise<OnnxPairScorer> {
    const t0 = performance.now();
    config ??= await readJsonFile(join(dir, 'config.json'), name);
    if (config.model_type !== PAIR_MODEL_TYPE) {
      throw new ModelError(
        'config',
        `Model "${name}": config.json model_type is ${JSON.stringify(config.model_type)}; the distilled reranker needs ` +
          `"${PAIR_MODEL_TYPE}".`,
        name,
      );
    }
    const tokenizer = await loadTokenizer(dir, name);
    const sepToken = typeof config.sep_token === 'string' ? config.sep_token : '<|endoftext|>';
    const sepId = tokenizer.tokenId(sepToken);
    if (sepId === undefined) throw new ModelError('config', `Model "${name}": the tokenizer has no separator token ${sepToken}.`, name);
    const { session, placement } = await openPlacedSession(
      join(dir, RERANKER_FILE),
      name,
      { inputs: ['input_ids', 'attention_mask'], outputs: [] },
      opts,
    );
    const output = session.outputNames.includes('scores')
      ? 'scores'
      : session.outputNames.includes('logits')
        ? 'logits'
        : session.outputNames[0];
    if (output === undefined) throw new ModelError('config', `Model "${name}": the graph has no output.`, name);
    const scorer = new OnnxPairScorer(
      name,
      await loadOrt(),
      session,
      tokenizer,
      sepId,
      configInt(config, ['max_query_tokens'], name, 128),
      configInt(config, ['max_candidate_tokens'], name, 256),
      output,
    );
    scorer.placement = placement;
    scorer.timings.loadMs = performance.now() - t0;
    return scorer;
  }

  /** The token rows the model sees for a query and its candidates (exposed for tests and training parity). */
  rows(query: string, candidates: readonly string[]): number[][] {
    const q = this.tokenizer.encode(query);
    const queryTail = q.slice(Math.max(0, q.length - this.maxQueryTokens));
    return candidates.map((c) => [...queryTail, this.sepId, ...this.tokenizer.encode(c).slice(0, this.maxCandidateTokens)]);
  }

  readonly score: PairScorer = async (query, candidates, signal) => {
    throwIfAborted(signal);
    if (candidates.length === 0) return [];
    const rows = this.rows(query, candidates);
    const width = Math.max(...rows.map((r) => r.length));
    const padded = rows.map((r) => [...r, ...new Array<number>(width - r.length).fill(this.sepId)]);
    const mask = rows.map((r) => Array.from({ length: width }, (_, j) => (j < r.length ? 1 : 0)));
    const out = await runSession(
      this.session,
      { input_ids: int64Tensor(this.ort, padded, width), attention_mask: int64Tensor(this.ort, mask, width) },
      this.timings,
      this.name,
    );
    throwIfAborted(signal);
    const tensor = out[this.output];
    if (!tensor) throw new ModelError('runtime', `Model "${this.name}" returned no ${this.output}.`, this.name);
    const data = tensor.data as Float32Array;
    const per = data.length / rows.length;
    if (!Number.isInteger(per) || per < 1)
      throw new ModelError('runtime', `Model "${this.name}": ${this.output} has ${data.length} values for ${rows.length} rows.`, this.name);
    return Array.from({ length: rows.length }, (_, i) => data[i * per]!);
  };

  dispose(): Promise<void> {
    return this.session.release();
  }
}

// ---- The ONNX feature scorer (the shipped model) ---------------------------------------------

/**
 * A small network over the candidate features of features.ts. Folder layout: `config.json`
 * (`model_type` "coderag-feature-reranker", `feature_names`: exactly FEATURE_NAMES, in order)
 * and `onnx/model.onnx` with a float input `features` [B, F] and a float output `scores` [B].
 */
export class OnnxFeatureScorer {
  readonly timings: ModelTimings = newTimings();
  /** The execution provider the session runs on (models/device.ts). */
  placement: ModelPlacement = { device: 'cpu', provider: 'cpu' };

  private constructor(
    readonly name: string,
    private readonly ort: OrtModule,
    private readonly session: OrtSession,
  ) {}

  /** `config`: the folder's config.json when the caller has read it already. */
  static async load(
    dir: string,
    name = DEFAULT_RERANKER,
    opts: SessionOptions = {},
    config?: Record<string, unknown>,
  ): Promise<OnnxFeatureScorer> {
    const t0 = performance.now();
    config ??= await readJsonFile(join(dir, 'config.json'), name);
    if (config.model_type !== FEATURE_MODEL_TYPE) {
      throw new ModelError(
        'config',
        `Model "${name}": config.json model_type is ${JSON.stringify(config.model_type)}; expected "${FEATURE_MODEL_TYPE}".`,
        name,
      );
    }
    const names = config.feature_names;
    if (!Array.isArray(names) || names.length !== FEATURE_COUNT || names.some((n, i) => n !== FEATURE_NAMES[i])) {
      throw new ModelError(
        'config',
        `Model "${name}": its feature_names do not match this version's ${FEATURE_COUNT} reranker features (the model ` +
          `was trained for another version; retrain it with models/training/train_reranker.py).`,
        name,
      );
    }
    const { session, placement } = await openPlacedSession(
      join(dir, RERANKER_FILE),
      name,
      { inputs: ['features'], outputs: ['scores'] },
      opts,
    );
    const scorer = new OnnxFeatureScorer(name, await loadOrt(), session);
    scorer.placement = placement;
    scorer.timings.loadMs = performance.now() - t0;
    return scorer;
  }

  readonly score: DocScorer = async (query, docs, signal) => {
    throwIfAborted(signal);
    if (docs.length === 0) return [];
    const matrix = featureMatrix(query, docs);
    const input = new this.ort.Tensor('float32', matrix, [docs.length, FEATURE_COUNT]);
    const out = await runSession(this.session, { features: input }, this.timings, this.name);
    throwIfAborted(signal);
    const data = out.scores?.data as Float32Array | undefined;
    if (!data || data.length !== docs.length)
      throw new ModelError(
        'runtime',
        `Model "${this.name}" returned ${data?.length ?? 0} scores for ${docs.length} candidates.`,
        this.name,
      );
    return data;
  };

  dispose(): Promise<void> {
    return this.session.release();
  }
}

const FEATURE_MODEL_TYPE = 'coderag-feature-reranker';
const PAIR_MODEL_TYPE = 'coderag-pair-reranker';

/**
 * The distilled reranker of a model folder (e.g. models/coderag-reranker): a feature scorer or a
 * token cross-encoder, by config.json's model_type.
 */
export async function loadDistilledReranker(
  dir: string,
  name = DEFAULT_RERANKER,
  opts: SessionOptions = {},
): Promise<{ reranker: DistilledReranker; scorer: OnnxPairScorer | OnnxFeatureScorer }> {
  const config = await readJsonFile(join(dir, 'config.json'), name);
  if (config.model_type === FEATURE_MODEL_TYPE) {
    const scorer = await OnnxFeatureScorer.load(dir, name, opts, config);
    return { reranker: new DistilledReranker(`distilled ${name}`, scorer.score), scorer };
  }
  if (config.model_type !== PAIR_MODEL_TYPE) {
    throw new ModelError(
      'config',
      `Model "${name}": config.json model_type is ${JSON.stringify(config.model_type)}; the distilled reranker needs ` +
        `"${FEATURE_MODEL_TYPE}" or "${PAIR_MODEL_TYPE}".`,
      name,
    );
  }
  const scorer = await OnnxPairScorer.load(dir, name, opts, config);
  return { reranker: new DistilledReranker(`distilled ${name}`, { pair: scorer.score }), scorer };
}
