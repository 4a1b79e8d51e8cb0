// A BERT-layout code encoder over onnxruntime-node: last_hidden_state, mean pooling over the
// attention mask, L2 normalisation (the dense path of CodeRAG's retrieval).

import { createHash } from 'node:crypto';
import { readRegularFile } from '../util/safeFile';
import { throwIfAborted } from '../util/errors';
import { ModelError } from './errors';
import type { ModelPlacement } from './device';
import { configInt, loadOrt, newTimings, openPlacedSession, runSession } from './onnxSession';
import type { ModelLoadOptions, OrtModule, OrtSession, OrtTensor } from './onnxSession';
import type { Tokenizer } from './tokenizer';
import type { Encoder, ModelTimings } from './types';

export const ENCODER_FILE = 'onnx/model.onnx';

/**
 * tokenize() first encodes this many characters per token of maxLength (code averages 3-4
 * characters a token; a denser text falls back to encoding all of it).
 */
const PREFIX_CHARS_PER_TOKEN = 6;
/** At most this many padded tokens per ONNX run (rows x the batch's longest row). */
const BATCH_TOKENS = 4096;

/**
 * A single text (a completion's query) runs on a session of its own with one intra-op thread:
 * splitting one short row over two threads costs more than it saves. The shipped encoder on the
 * dev line cases' queries (their last three lines; `eval compare`, 80 queries, two runs each way
 * on a 2-core machine): the ONNX run's median 0.89-1.01 ms on the two-thread session, 0.62-0.64 ms
 * on its own. About 10 MB more memory.
 */
const SINGLE_ROW_THREADS = 1;

/**
 * The output of a graph that mean-pools over the attention mask itself ([B, D];
 * models/training/fuse_encoder.py): fetched alone, the [B, S, D] hidden states are neither copied
 * out of the runtime nor summed here.
 */
export const POOLED_OUTPUT = 'sentence_embedding';

/**
 * The first index at or after `from` that ends a byte-level BPE pre-token in `text` whatever
 * follows: a whitespace character right after a non-whitespace one (text.length if none).
 */
export function safeCut(text: string, from: number): number {
  for (let i = Math.max(1, from); i < text.length; i++) {
    if (isAsciiSpace(text.charCodeAt(i)) && !/\s/.test(text[i - 1]!)) return i;
  }
  return text.length;
}

function isAsciiSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 9 || c === 13 || c === 12 || c === 11;
}

export class OnnxEncoder implements Encoder {
  readonly timings: ModelTimings = newTimings();
  /** The execution provider the session runs on (device.ts). */
  placement: ModelPlacement = { device: 'cpu', provider: 'cpu' };
  private readonly usesTokenTypes: boolean;
  /** The graph pools itself (POOLED_OUTPUT): only that output is fetched. */
  private readonly pooled: boolean;
  private readonly output: string;

  private constructor(
    readonly name: string,
    readonly path: string,
    readonly dim: number,
    readonly maxLength: number,
    readonly itemMaxLength: number,
    private readonly ort: OrtModule,
    private readonly session: OrtSession,
    private readonly tokenizer: Tokenizer,
    private readonly padId: number,
    private readonly batchSize: number,
    readonly fingerprint: string,
    /** The one-row session (SINGLE_ROW_THREADS), on the CPU where the batch session has more threads. */
    private readonly single: OrtSession | undefined,
  ) {
    this.usesTokenTypes = session.inputNames.includes('token_type_ids');
    this.pooled = session.outputNames.includes(POOLED_OUTPUT);
    this.output = this.pooled
      ? POOLED_OUTPUT
      : session.outputNames.includes('last_hidden_state')
        ? 'last_hidden_state'
        : session.outputNames[0]!;
  }

  static async load(opts: ModelLoadOptions): Promise<OnnxEncoder> {
    const t0 = performance.now();
    const { config, name } = opts;
    if (typeof config.model_type !== 'string' || !['bert', 'roberta', 'xlm-roberta'].includes(config.model_type)) {
      throw new ModelError(
        'config',
        `Model "${name}": config.json model_type is ${JSON.stringify(config.model_type)}; the encoder loader needs "bert".`,
        name,
      );
    }
    const dim = configInt(config, ['hidden_size'], name);
    const positions = configInt(config, ['max_position_embeddings'], name, 512);
    const extra = (config.coderag ?? {}) as Record<string, unknown>;
    const maxLength = Math.min(positions, opts.maxLength ?? (typeof extra.max_length === 'number' ? extra.max_length : positions));
    // Items are embedded shorter than queries where the model card says it costs no quality.
    const itemMaxLength = Math.min(
      maxLength,
      opts.maxLength ?? (typeof extra.item_max_length === 'number' ? extra.item_max_length : maxLength),
    );
    const { session, placement } = await openPlacedSession(
      opts.file,
      name,
      { inputs: ['input_ids', 'attention_mask'], outputs: [] },
      opts.session,
    );
    const single =
      opts.singleRowSession !== false && placement.provider === 'cpu' && opts.session?.threads !== SINGLE_ROW_THREADS
        ? (
            await openPlacedSession(
              opts.file,
              name,
              { inputs: ['input_ids', 'attention_mask'], outputs: [] },
              { ...opts.session, device: 'cpu', threads: SINGLE_ROW_THREADS },
            ).catch(async (e: unknown) => {
              await session.release().catch(() => undefined);
              throw e;
            })
          ).session
        : undefined;
    const padId = opts.tokenizer.tokenId('<|endoftext|>') ?? opts.tokenizer.tokenId('[PAD]') ?? 0;
    // What the vectors depend on besides the text: the weights, the config and the truncation.
    const fingerprint = createHash('sha1')
      .update(await readRegularFile(opts.file))
      .update(JSON.stringify({ config, maxLength, itemMaxLength }))
      .digest('hex')
      .slice(0, 16);
    const enc = new OnnxEncoder(
      name,
      opts.dir,
      dim,
      maxLength,
      itemMaxLength,
      await loadOrt(),
      session,
      opts.tokenizer,
      padId,
      opts.batchSize ?? 16,
      fingerprint,
      single,
    );
    enc.placement = placement;
    enc.timings.loadMs = performance.now() - t0;
    if (opts.warmup !== false) {
      const t1 = performance.now();
      try {
        await enc.embed(['def main():\n    return 0\n'], new AbortController().signal);
      } catch (e) {
        await enc.dispose().catch(() => undefined);
        throw e;
      }
      enc.timings.warmupMs = performance.now() - t1;
    }
    return enc;
  }

  async embed(texts: string[], signal: AbortSignal): Promise<Float32Array[]> {
    return this.embedTokens(
      texts.map((t) => this.tokenize(t)),
      signal,
    );
  }

  /** Knowledge-base items: as embed(), truncated to itemMaxLength tokens. */
  async embedItems(texts: string[], signal: AbortSignal): Promise<Float32Array[]> {
    return this.embedTokens(
      texts.map((t) => this.tokenize(t, this.itemMaxLength)),
      signal,
    );
  }

  /**
   * The first maxLength token ids of a text, as encoding the whole text and keeping its head
   * would give. Only a prefix of a long text is encoded: byte-level BPE works per pre-token, and a
   * cut just before a whitespace character that follows a non-whitespace one ends a pre-token in
   * the full text too, so the prefix's tokens are the full text's first tokens. A prefix that
   * yields too few tokens falls back to the whole text.
   */
  tokenize(text: string, limit: number = this.maxLength): number[] {
    const start = limit * PREFIX_CHARS_PER_TOKEN;
    if (text.length > start) {
      const cut = safeCut(text, start);
      if (cut < text.length) {
        const head = this.tokenizer.encode(text.slice(0, cut));
        if (head.length >= limit) return head.slice(0, limit);
      }
    }
    const ids = this.tokenizer.encode(text).slice(0, limit);
    return ids.length ? ids : [this.padId];
  }

  /**
   * Embeddings of token id sequences (non-empty, within the model's positions). Sorted by length and cut
   * into batches of at most batchSize rows and BATCH_TOKENS padded tokens, so that each batch
   * pads only to its own longest row; results come back in input order.
   */
  async embedTokens(ids: number[][], signal: AbortSignal): Promise<Float32Array[]> {
    const order = ids.map((_, i) => i).sort((a, b) => ids[a]!.length - ids[b]!.length);
    const out = new Array<Float32Array>(ids.length);
    let i = 0;
    while (i < order.length) {
      throwIfAborted(signal);
      let end = i + 1;
      // Sorted ascending: the last row of a batch is its widest.
      while (end < order.length && end - i < this.batchSize && (end - i + 1) * ids[order[end]!]!.length <= BATCH_TOKENS) end++;
      const idx = order.slice(i, end);
      const vectors = await this.embedBatch(idx.map((k) => ids[k]!));
      idx.forEach((k, j) => (out[k] = vectors[j]!));
      i = end;
    }
    return out;
  }

  private async embedBatch(batch: number[][]): Promise<Float32Array[]> {
    const { ort } = this;
    const width = Math.max(1, ...batch.map((b) => b.length));
    const rows = batch.length;
    const idData = new BigInt64Array(rows * width);
    const maskData = new BigInt64Array(rows * width);
    // Ids and mask bits are small non-negative integers: write each int64 as its low 32-bit word
    // (little-endian), the high word staying 0, instead of converting every token to a BigInt.
    const ids32 = new Int32Array(idData.buffer);
    const mask32 = new Int32Array(maskData.buffer);
    for (let k = 0; k < rows * width; k++) ids32[2 * k] = this.padId;
    batch.forEach((b, r) => {
      const base = 2 * r * width;
      for (let s = 0; s < b.length; s++) {
        ids32[base + 2 * s] = b[s]!;
        mask32[base + 2 * s] = 1;
      }
    });
    const feeds: Record<string, OrtTensor> = {
      input_ids: new ort.Tensor('int64', idData, [rows, width]),
      attention_mask: new ort.Tensor('int64', maskData, [rows, width]),
    };
    if (this.usesTokenTypes) feeds.token_type_ids = new ort.Tensor('int64', new BigInt64Array(rows * width), [rows, width]);
    const session = rows === 1 ? (this.single ?? this.session) : this.session;
    const out = await runSession(session, feeds, this.timings, this.name, this.pooled ? [this.output] : undefined);
    const h = out[this.output];
    const D = this.dim;
    if (this.pooled) {
      if (!h || h.dims.length !== 2 || h.dims[0] !== rows || h.dims[1] !== D) {
        throw new ModelError(
          'config',
          `Model "${this.name}": output ${this.output} has shape [${h?.dims.join(', ')}], expected [${rows}, ${D}].`,
          this.name,
        );
      }
      const data = h.data as Float32Array;
      return batch.map((_, i) => normalized(data.slice(i * D, (i + 1) * D)));
    }
    if (!h || h.dims.length !== 3 || h.dims[2] !== D) {
      throw new ModelError(
        'config',
        `Model "${this.name}": output ${this.output} has shape [${h?.dims.join(', ')}], expected [B, S, ${D}].`,
        this.name,
      );
    }
    const data = h.data as Float32Array;
    return batch.map((b, i) => {
      const v = new Float32Array(D);
      for (let s = 0; s < b.length; s++) {
        const base = (i * width + s) * D;
        for (let d = 0; d < D; d++) v[d]! += data[base + d]!;
      }
      return normalized(v);
    });
  }

  async dispose(): Promise<void> {
    await Promise.all([this.session.release(), this.single?.release()]);
  }
}

/** v scaled to unit length in place (a zero vector stays zero). */
function normalized(v: Float32Array): Float32Array {
  let norm = 0;
  for (let d = 0; d < v.length; d++) norm += v[d]! * v[d]!;
  norm = Math.sqrt(norm) || 1;
  for (let d = 0; d < v.length; d++) v[d]! /= norm;
  return v;
}
