// The roles the engine needs from local models; implemented over onnxruntime-node.

import type { ModelPlacement } from './device';

export interface ModelTimings {
  /** Milliseconds to create the ONNX session(s) and tokenizer. */
  loadMs: number;
  /** Milliseconds of the warm-up run (0 if skipped). */
  warmupMs: number;
  /** Number of forward calls run so far and their total time. */
  calls: number;
  totalRunMs: number;
}

export interface ProbeResult {
  /** The greedily generated ids (length = steps, fewer if the prompt filled the context). */
  tokens: number[];
  /** Per generated step: the maximum log-probability over the vocabulary (CodeRAG Alg. 1). */
  maxLogProbs: number[];
}

export interface GenerateOptions {
  maxNewTokens: number;
  /** Stop when the generated text contains one of these (the stop string is cut off). */
  stop?: string[];
  /**
   * Called before each greedy pick with the text and the ids generated so far; may set logits to -Infinity (checked decoding, the loop
   * guard).
   */
  logitsFilter?: (generated: string, logits: Float32Array, ids: readonly number[]) => void;
  /** Stop (as by a stop string) once this says the text generated so far is complete. */
  until?: (generated: string) => boolean;
  /** Told why generation ended: the model's end token (`eos`), the token limit (`length`) or a stop string (`stop`). */
  onStop?: (reason: 'eos' | 'length' | 'stop') => void;
  /** Told each token written (its text and its log-probability under the logits it was picked from). */
  onToken?: (token: string, logProb: number) => void;
}

export interface CausalLM {
  readonly name: string;
  /** Folder the model was loaded from. */
  readonly path: string;
  readonly eosId: number;
  readonly vocabSize: number;
  /** Longest sequence (prompt + generated) the model accepts; prompts are cut from the left. */
  readonly maxPositions: number;
  readonly timings: ModelTimings;
  /** The execution provider the model runs on (ONNX models; absent for others). */
  readonly placement?: ModelPlacement;
  encode(text: string): number[];
  decode(ids: number[]): string;
  /** Next-token logits after each id list (batched; lists may differ in length). */
  logitsNext(batch: number[][], signal: AbortSignal): Promise<Float32Array[]>;
  /** Batched greedy decoding with a KV cache, recording each step's max log-prob. */
  greedyProbe(prompts: string[], steps: number, signal: AbortSignal): Promise<ProbeResult[]>;
  /** Greedy completion of one prompt with a KV cache. */
  generate(prompt: string, opts: GenerateOptions, signal: AbortSignal): Promise<string>;
  /** Each vocabulary id's text (decoded alone), for token masks. */
  tokenTexts?(): readonly string[];
  dispose(): Promise<void>;
}

export interface Encoder {
  readonly name: string;
  readonly path: string;
  /** Embedding dimension. */
  readonly dim: number;
  /** Inputs longer than this many tokens are truncated (head kept). */
  readonly maxLength: number;
  /**
   * Identifies the build of the model (its weights and settings): vectors stored under another
   * fingerprint are recomputed. Absent for encoders that have no build to tell apart.
   */
  readonly fingerprint?: string;
  readonly timings: ModelTimings;
  /** The execution provider the model runs on (ONNX models; absent for others). */
  readonly placement?: ModelPlacement;
  /** Mean-pooled, L2-normalised embeddings, computed in batches. */
  embed(texts: string[], signal: AbortSignal): Promise<Float32Array[]>;
  /**
   * The same for knowledge-base items, which an encoder may truncate shorter than queries
   * (its card's measured item length); absent: embed().
   */
  embedItems?(texts: string[], signal: AbortSignal): Promise<Float32Array[]>;
  dispose(): Promise<void>;
}
