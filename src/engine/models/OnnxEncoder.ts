// A BERT-layout code encoder over onnxruntime-node: last_hidden_state, mean pooling over the
// attention mask, L2 normalisation (the dense path of CodeRAG's retrieval).

import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { throwIfAborted } from '../util/errors';
import { ModelError } from './errors';
import type { ModelPlacement } from './device';
import { configInt, int64Tensor, loadOrt, newTimings, openPlacedSession, runSession } from './onnxSession';
import type { ModelLoadOptions, OrtModule, OrtSession, OrtTensor } from './onnxSession';
import type { Tokenizer } from './tokenizer';
import type { Encoder, ModelTimings } from './types';

export const ENCODER_FILE = 'onnx/model.onnx';

export class OnnxEncoder implements Encoder {
  readonly timings: ModelTimings = newTimings();
  /** The execution provider the session runs on (device.ts). */
  placement: ModelPlacement = { device: 'cpu', provider: 'cpu' };
  private readonly usesTokenTypes: boolean;
  private readonly output: string;

  private constructor(
    readonly name: string,
    readonly path: string,
    readonly dim: number,
    readonly maxLength: number,
    private readonly ort: OrtModule,
    private readonly session: OrtSession,
    private readonly tokenizer: Tokenizer,
    private readonly padId: number,
    private readonly batchSize: number,
    readonly fingerprint: string,
  ) {
    this.usesTokenTypes = session.inputNames.includes('token_type_ids');
    this.output = session.outputNames.includes('last_hidden_state') ? 'last_hidden_state' : session.outputNames[0]!;
  }

  static async load(opts: ModelLoadOptions): Promise<OnnxEncoder> {
    const t0 = performance.now();
    const { config, name } = opts;
    if (typeof config.model_type !== 'string' || !['bert', 'roberta', 'xlm-roberta'].includes(config.model_type)) {
      throw new ModelError('config', `Model "${name}": config.json model_type is ${JSON.stringify(config.model_type)}; the encoder loader needs "bert".`, name);
    }
    const dim = configInt(config, ['hidden_size'], name);
    const positions = configInt(config, ['max_position_embeddings'], name, 512);
    const extra = (config.coderag ?? {}) as Record<string, unknown>;
    const maxLength = Math.min(positions, typeof extra.max_length === 'number' ? extra.max_length : positions);
    const { session, placement } = await openPlacedSession(opts.file, name, { inputs: ['input_ids', 'attention_mask'], outputs: [] }, opts.session);
    const padId = opts.tokenizer.tokenId('<|endoftext|>') ?? opts.tokenizer.tokenId('[PAD]') ?? 0;
    // What the vectors depend on besides the text: the weights, the config and the truncation.
    const fingerprint = createHash('sha1')
      .update(await fs.readFile(opts.file))
      .update(JSON.stringify({ config, maxLength }))
      .digest('hex')
      .slice(0, 16);
    const enc = new OnnxEncoder(name, opts.dir, dim, maxLength, await loadOrt(), session, opts.tokenizer, padId, opts.batchSize ?? 16, fingerprint);
    enc.placement = placement;
    enc.timings.loadMs = performance.now() - t0;
    if (opts.warmup !== false) {
      const t1 = performance.now();
      try {
        await enc.embed(['def main():\n    return 0\n'], new AbortController().signal);
      } catch (e) {
        await session.release().catch(() => undefined);
        throw e;
      }
      enc.timings.warmupMs = performance.now() - t1;
    }
    return enc;
  }

  async embed(texts: string[], signal: AbortSignal): Promise<Float32Array[]> {
    const ids = texts.map((t) => {
      const x = this.tokenizer.encode(t).slice(0, this.maxLength);
      return x.length ? x : [this.padId];
    });
    // Batch by length so padding stays small; results go back in input order.
    const order = ids.map((_, i) => i).sort((a, b) => ids[a]!.length - ids[b]!.length);
    const out = new Array<Float32Array>(texts.length);
    for (let i = 0; i < order.length; i += this.batchSize) {
      throwIfAborted(signal);
      const idx = order.slice(i, i + this.batchSize);
      const vectors = await this.embedBatch(idx.map((k) => ids[k]!));
      idx.forEach((k, j) => (out[k] = vectors[j]!));
    }
    return out;
  }

  private async embedBatch(batch: number[][]): Promise<Float32Array[]> {
    const { ort } = this;
    const width = Math.max(...batch.map((b) => b.length));
    const rows = batch.map((b) => [...b, ...new Array<number>(width - b.length).fill(this.padId)]);
    const mask = batch.map((b) => [...new Array<number>(b.length).fill(1), ...new Array<number>(width - b.length).fill(0)]);
    const feeds: Record<string, OrtTensor> = { input_ids: int64Tensor(ort, rows, width), attention_mask: int64Tensor(ort, mask, width) };
    if (this.usesTokenTypes) feeds.token_type_ids = int64Tensor(ort, rows.map((r) => r.map(() => 0)), width);
    const out = await runSession(this.session, feeds, this.timings, this.name);
    const h = out[this.output];
    if (!h || h.dims.length !== 3 || h.dims[2] !== this.dim) {
      throw new ModelError('config', `Model "${this.name}": output ${this.output} has shape [${h?.dims.join(', ')}], expected [B, S, ${this.dim}].`, this.name);
    }
    const data = h.data as Float32Array;
    const D = this.dim;
    return batch.map((b, i) => {
      const v = new Float32Array(D);
      for (let s = 0; s < b.length; s++) {
        const base = (i * width + s) * D;
        for (let d = 0; d < D; d++) v[d]! += data[base + d]!;
      }
      let norm = 0;
      for (let d = 0; d < D; d++) norm += v[d]! * v[d]!;
      norm = Math.sqrt(norm) || 1;
      for (let d = 0; d < D; d++) v[d]! /= norm;
      return v;
    });
  }

  async dispose(): Promise<void> {
    await this.session.release();
  }
}
