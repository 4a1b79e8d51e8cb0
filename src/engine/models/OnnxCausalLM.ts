// A GPT-2-layout causal LM over onnxruntime-node with a KV cache (transformers.js'
// decoder_model_merged layout): batched next-token logits, batched greedy probing with per-step
// max log-probs (CodeRAG Alg. 1's chunk score), and greedy generation.

import { throwIfAborted } from '../util/errors';
import { ModelError } from './errors';
import type { ModelPlacement } from './device';
import { configInt, int64Tensor, loadOrt, newTimings, openPlacedSession, runSession } from './onnxSession';
import type { ModelLoadOptions, OrtModule, OrtSession, OrtTensor } from './onnxSession';
import type { Tokenizer } from './tokenizer';
import type { CausalLM, GenerateOptions, ModelTimings, ProbeResult } from './types';

export const CAUSAL_LM_FILE = 'onnx/decoder_model_merged.onnx';

interface LMShape {
  layers: number;
  heads: number;
  headDim: number;
  vocab: number;
  positions: number;
  eos: number;
}

function causalLMShape(config: Record<string, unknown>, name: string): LMShape {
  const type = config.model_type;
  if (type !== 'gpt2') {
    throw new ModelError(
      'config',
      `Model "${name}": config.json model_type is ${JSON.stringify(type)}; the causal LM loader needs "gpt2".`,
      name,
    );
  }
  const layers = configInt(config, ['n_layer', 'num_hidden_layers'], name);
  const heads = configInt(config, ['n_head', 'num_attention_heads'], name);
  const hidden = configInt(config, ['n_embd', 'hidden_size'], name);
  if (hidden % heads !== 0) throw new ModelError('config', `Model "${name}": n_embd ${hidden} is not divisible by n_head ${heads}.`, name);
  const vocab = configInt(config, ['vocab_size'], name);
  return {
    layers,
    heads,
    headDim: hidden / heads,
    vocab,
    positions: configInt(config, ['n_positions', 'n_ctx', 'max_position_embeddings'], name, 1024),
    eos: typeof config.eos_token_id === 'number' ? config.eos_token_id : vocab - 1,
  };
}

/** log-softmax maximum and arg-max of one row of logits. */
export function maxLogProb(row: Float32Array): { id: number; logProb: number } {
  let best = 0;
  let max = -Infinity;
  for (let i = 0; i < row.length; i++) {
    const v = row[i]!;
    if (v > max) {
      max = v;
      best = i;
    }
  }
  let sum = 0;
  for (let i = 0; i < row.length; i++) sum += Math.exp(row[i]! - max);
  return { id: best, logProb: -Math.log(sum) };
}

interface Step {
  lastLogits: Float32Array[];
  present: OrtTensor[];
}

/**
 * Characters of text tokenised per token a probe can keep (a BPE token averages 3-4 characters of code; 32 leaves room for long whitespace
 * tokens).
 */
const TAIL_CHARS_PER_TOKEN = 32;

export class OnnxCausalLM implements CausalLM {
  readonly timings: ModelTimings = newTimings();
  /** The execution provider the session runs on (device.ts). */
  placement: ModelPlacement = { device: 'cpu', provider: 'cpu' };
  readonly eosId: number;
  readonly vocabSize: number;
  readonly maxPositions: number;
  private readonly usesPositionIds: boolean;
  private readonly usesCacheBranch: boolean;

  private constructor(
    readonly name: string,
    readonly path: string,
    private readonly ort: OrtModule,
    private readonly session: OrtSession,
    private readonly tokenizer: Tokenizer,
    private readonly shape: LMShape,
    private readonly batchSize: number,
  ) {
    this.eosId = shape.eos;
    this.vocabSize = shape.vocab;
    this.maxPositions = shape.positions;
    this.usesPositionIds = session.inputNames.includes('position_ids');
    this.usesCacheBranch = session.inputNames.includes('use_cache_branch');
  }

  static async load(opts: ModelLoadOptions): Promise<OnnxCausalLM> {
    const t0 = performance.now();
    const shape = causalLMShape(opts.config, opts.name);
    const pastNames = Array.from({ length: shape.layers }, (_, i) => [`past_key_values.${i}.key`, `past_key_values.${i}.value`]).flat();
    const { session, placement } = await openPlacedSession(
      opts.file,
      opts.name,
      { inputs: ['input_ids', 'attention_mask', ...pastNames], outputs: ['logits'] },
      opts.session,
    );
    const ort = await loadOrt();
    const lm = new OnnxCausalLM(opts.name, opts.dir, ort, session, opts.tokenizer, shape, opts.batchSize ?? 16);
    lm.placement = placement;
    lm.timings.loadMs = performance.now() - t0;
    if (opts.warmup !== false) {
      const t1 = performance.now();
      try {
        const [logits] = await lm.logitsNext([lm.encode('def main():\n    return 0\n')], new AbortController().signal);
        if (logits?.length !== shape.vocab) {
          throw new ModelError(
            'config',
            `Model "${opts.name}": logits have ${logits?.length} entries but config.json says vocab_size ${shape.vocab}.`,
            opts.name,
          );
        }
      } catch (e) {
        await session.release().catch(() => undefined);
        throw e;
      }
      lm.timings.warmupMs = performance.now() - t1;
    }
    return lm;
  }

  encode(text: string): number[] {
    return this.tokenizer.encode(text);
  }

  /**
   * The ids of the end of `text` the model can read, `limit` tokens at most kept later: only the
   * last TAIL_CHARS_PER_TOKEN x `limit` characters are tokenised (a 300 KB literal in a probe took
   * 350 ms of the event loop to tokenise, all of it then cut away).
   */
  private encodeTail(text: string, limit: number): number[] {
    const keep = TAIL_CHARS_PER_TOKEN * limit;
    if (text.length <= keep) return this.encode(text);
    // Start at a line break where one is near, so the kept tokens are those of the whole text.
    const from = text.length - keep;
    const nl = text.indexOf('\n', from);
    return this.encode(text.slice(nl >= 0 && nl - from < keep / 4 ? nl + 1 : from));
  }

  decode(ids: number[]): string {
    return this.tokenizer.decode(ids);
  }

  /** One forward pass over left-padded rows; `mask` covers past + new tokens. */
  private async forward(rows: number[][], mask: number[][], past: OrtTensor[] | undefined): Promise<Step> {
    const { ort, shape } = this;
    const B = rows.length;
    const S = rows[0]?.length ?? 0;
    const total = mask[0]?.length ?? 0;
    const feeds: Record<string, OrtTensor> = {
      input_ids: int64Tensor(ort, rows, S),
      attention_mask: int64Tensor(ort, mask, total),
    };
    for (let i = 0; i < shape.layers; i++) {
      for (const [j, kv] of ['key', 'value'].entries()) {
        feeds[`past_key_values.${i}.${kv}`] =
          past?.[2 * i + j] ?? new ort.Tensor('float32', new Float32Array(0), [B, shape.heads, 0, shape.headDim]);
      }
    }
    if (this.usesPositionIds) {
      const pos = mask.map((m) => {
        let c = 0;
        const all = m.map((v) => (c += v) - 1);
        return all.slice(total - S).map((p) => Math.max(p, 0));
      });
      feeds.position_ids = int64Tensor(ort, pos, S);
    }
    if (this.usesCacheBranch) feeds.use_cache_branch = new ort.Tensor('bool', [past !== undefined], [1]);
    const out = await runSession(this.session, feeds, this.timings, this.name);
    const logits = out.logits;
    if (!logits) throw new ModelError('runtime', `Model "${this.name}" returned no logits.`, this.name);
    // [B, S, V], or [B, 1, V] for graphs exported with the last position's logits only.
    const T = logits.dims[1] ?? S;
    const V = logits.dims[2] ?? 0;
    const data = logits.data as Float32Array;
    const lastLogits = Array.from({ length: B }, (_, b) => data.slice((b * T + T - 1) * V, (b * T + T) * V));
    const present = Array.from({ length: shape.layers }, (_, i) => [out[`present.${i}.key`], out[`present.${i}.value`]])
      .flat()
      .map((t, k) => {
        if (!t) throw new ModelError('config', `Model "${this.name}": graph output present.${k >> 1}.* missing.`, this.name);
        return t;
      });
    return { lastLogits, present };
  }

  /** Left-pads id lists (cut from the left to `limit`) into equal-length rows and masks. */
  private pad(batch: number[][], limit: number): { rows: number[][]; mask: number[][] } {
    const cut = batch.map((ids) => (ids.length === 0 ? [this.eosId] : ids.slice(Math.max(0, ids.length - limit))));
    const width = Math.max(...cut.map((ids) => ids.length));
    return {
      rows: cut.map((ids) => [...new Array<number>(width - ids.length).fill(this.eosId), ...ids]),
      mask: cut.map((ids) => [...new Array<number>(width - ids.length).fill(0), ...new Array<number>(ids.length).fill(1)]),
    };
  }

  async logitsNext(batch: number[][], signal: AbortSignal): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < batch.length; i += this.batchSize) {
      throwIfAborted(signal);
      const { rows, mask } = this.pad(batch.slice(i, i + this.batchSize), this.maxPositions);
      out.push(...(await this.forward(rows, mask, undefined)).lastLogits);
    }
    return out;
  }

  async greedyProbe(prompts: string[], steps: number, signal: AbortSignal): Promise<ProbeResult[]> {
    const results: ProbeResult[] = [];
    const limit = Math.max(1, this.maxPositions - steps);
    for (let i = 0; i < prompts.length; i += this.batchSize) {
      throwIfAborted(signal);
      const ids = prompts.slice(i, i + this.batchSize).map((p) => this.encodeTail(p, limit));
      let { rows, mask } = this.pad(ids, limit);
      const res: ProbeResult[] = ids.map(() => ({ tokens: [], maxLogProbs: [] }));
      let past: OrtTensor[] | undefined;
      for (let s = 0; s < steps; s++) {
        throwIfAborted(signal);
        const step = await this.forward(rows, mask, past);
        past = step.present;
        const next = step.lastLogits.map((row, b) => {
          const { id, logProb } = maxLogProb(row);
          res[b]!.tokens.push(id);
          res[b]!.maxLogProbs.push(logProb);
          return id;
        });
        rows = next.map((id) => [id]);
        mask = mask.map((m) => [...m, 1]);
      }
      results.push(...res);
    }
    return results;
  }

  async generate(prompt: string, opts: GenerateOptions, signal: AbortSignal): Promise<string> {
    const maxNew = Math.max(0, Math.min(opts.maxNewTokens, this.maxPositions - 1));
    let { rows, mask } = this.pad([this.encode(prompt)], this.maxPositions - maxNew);
    const generated: number[] = [];
    let past: OrtTensor[] | undefined;
    let text = '';
    for (let s = 0; s < maxNew; s++) {
      throwIfAborted(signal);
      const step = await this.forward(rows, mask, past);
      past = step.present;
      const row = step.lastLogits[0]!;
      opts.logitsFilter?.(text, row, generated);
      const { id, logProb } = maxLogProb(row);
      if (id === this.eosId) {
        opts.onStop?.('eos');
        return text;
      }
      generated.push(id);
      const before = text.length;
      text = this.decode(generated);
      opts.onToken?.(text.slice(before), logProb);
      const stopAt = firstStop(text, opts.stop);
      if (stopAt >= 0) {
        opts.onStop?.('stop');
        return text.slice(0, stopAt);
      }
      if (opts.until?.(text)) {
        opts.onStop?.('stop');
        return text;
      }
      rows = [[id]];
      mask = [[...mask[0]!, 1]];
    }
    opts.onStop?.('length');
    return text;
  }

  private texts: string[] | undefined;

  /** Each id's text decoded alone (built once, about 50k decodes). */
  tokenTexts(): readonly string[] {
    if (!this.texts) {
      this.texts = new Array<string>(this.vocabSize);
      for (let i = 0; i < this.vocabSize; i++) this.texts[i] = this.tokenizer.decode([i]);
    }
    return this.texts;
  }

  async dispose(): Promise<void> {
    await this.session.release();
  }
}

/** Where the first of `stops` starts in `text`, or -1 (both in-process engines cut their answers there). */
export function firstStop(text: string, stops: readonly string[] | undefined): number {
  let at = -1;
  for (const s of stops ?? []) {
    if (!s) continue;
    const i = text.indexOf(s);
    if (i >= 0 && (at < 0 || i < at)) at = i;
  }
  return at;
}
