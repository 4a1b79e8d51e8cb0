// Opening ONNX sessions with onnxruntime-node: every failure becomes a typed ModelError, and
// every run is timed. onnxruntime-node is imported lazily so a host without its native binary
// still starts and gets a clear error when a model is first needed.

import { stat } from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type * as Ort from 'onnxruntime-node';
import {
  fallbackPlacement,
  logPlacement,
  probeProviders,
  providerPlan,
  type ExecutionProvider,
  type ModelDevice,
  type ModelPlacement,
} from './device';
import { ModelError } from './errors';
import type { Tokenizer } from './tokenizer';
import type { ModelTimings } from './types';

export type OrtModule = typeof Ort;
export type OrtSession = Ort.InferenceSession;
export type OrtTensor = Ort.Tensor;

/** onnxruntime-node; Node's module cache imports it once. */
export function loadOrt(): Promise<OrtModule> {
  return import('onnxruntime-node')
    .then((m) => ((m as { default?: OrtModule }).default ?? m) as OrtModule)
    .catch((e: unknown) => {
      throw new ModelError('runtime', `onnxruntime-node could not be loaded: ${String(e)}`, undefined, { cause: e });
    });
}

/**
 * Session config for every ONNX session the engine opens: no busy-waiting threads after a run. The
 * engine runs several sessions (probing LM, encoder, reranker, dense search) one after another, and
 * a session's spinning pool took the cores from the next. Dev Python cases, probing then embedding
 * the query on 2 cores: probing median 28-33 ms with spinning, 20-21 ms without; one session alone
 * is no slower (models/training/bench_latency.ts).
 */
export const NO_SPINNING = { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } };

export interface SessionOptions {
  /** Intra-op threads (default: onnxruntime's choice, all cores). */
  threads?: number;
  /** Execution provider to ask for (default `cpu`; the registry passes the user's `coderag.models.device`). */
  device?: ModelDevice;
}

/** What the registry hands a model class's load(): the folder, its files, config and tokenizer. */
export interface ModelLoadOptions {
  name: string;
  dir: string;
  file: string;
  config: Record<string, unknown>;
  tokenizer: Tokenizer;
  session?: SessionOptions;
  batchSize?: number;
  warmup?: boolean;
  /** Truncation length in tokens instead of the model's own (config.json), for evaluations. */
  maxLength?: number;
  /** An encoder's one-thread session for single texts (OnnxEncoder; default true). */
  singleRowSession?: boolean;
}

/** Opens `file` as an ONNX session; checks the graph has the inputs and outputs the caller needs. */
export async function openSession(
  file: string,
  modelName: string,
  need: { inputs: string[]; outputs: string[] },
  opts: SessionOptions = {},
): Promise<OrtSession> {
  return (await openPlacedSession(file, modelName, need, opts)).session;
}

/**
 * openSession on the execution provider `opts.device` picks (device.ts): a provider that is absent
 * or fails to create the session leaves the model on the CPU, and the placement says why.
 */
export async function openPlacedSession(
  file: string,
  modelName: string,
  need: { inputs: string[]; outputs: string[] },
  opts: SessionOptions = {},
): Promise<{ session: OrtSession; placement: ModelPlacement }> {
  let size: number;
  try {
    const st = await stat(file);
    // onnxruntime opens the file itself: a FIFO or a device in its place would hold its thread for good.
    if (!st.isFile()) throw new ModelError('corrupt', `Model "${modelName}": ${file} is not a regular file.`, modelName);
    size = st.size;
  } catch (e) {
    if (e instanceof ModelError) throw e;
    throw new ModelError('missing', `Model "${modelName}" is missing ${file}.`, modelName, { cause: e });
  }
  if (size === 0) throw new ModelError('corrupt', `Model "${modelName}": ${file} is empty.`, modelName);
  const ort = await loadOrt();
  const device = opts.device ?? 'cpu';
  const plan = providerPlan(device, probeProviders(ort));
  let placement = plan.placement;
  let session: OrtSession | undefined;
  if (plan.tryFirst) {
    try {
      session = await createSession(ort, file, opts, plan.tryFirst);
      placement = { device, provider: plan.tryFirst };
    } catch (e) {
      placement = fallbackPlacement(device, plan.tryFirst, firstLine(e));
    }
  }
  try {
    session ??= await createSession(ort, file, opts, 'cpu');
  } catch (e) {
    throw new ModelError(
      'corrupt',
      `Model "${modelName}": ${file} is not a loadable ONNX model (truncated or damaged? re-download or re-export it): ${String(e)}`,
      modelName,
      { cause: e },
    );
  }
  logPlacement(modelName, placement);
  const missingIn = need.inputs.filter((n) => !session.inputNames.includes(n));
  const missingOut = need.outputs.filter((n) => !session.outputNames.includes(n));
  if (missingIn.length || missingOut.length) {
    await session.release().catch(() => undefined);
    throw new ModelError(
      'config',
      `Model "${modelName}": ${file} does not match its config.json (graph lacks ${[...missingIn, ...missingOut].join(', ')}).`,
      modelName,
    );
  }
  return { session, placement };
}

function createSession(ort: OrtModule, file: string, opts: SessionOptions, provider: ExecutionProvider): Promise<OrtSession> {
  return oneSessionPerTurn(() =>
    ort.InferenceSession.create(file, {
      graphOptimizationLevel: 'all',
      executionProviders: [provider],
      ...(opts.threads ? { intraOpNumThreads: opts.threads, interOpNumThreads: 1 } : {}),
      extra: NO_SPINNING,
    }),
  );
}

/** The session creation last queued (oneSessionPerTurn), settled or not. */
let creating: Promise<unknown> = Promise.resolve();

/**
 * Runs `create` (an InferenceSession.create) after every creation queued before it has settled,
 * in a turn of the event loop of its own. onnxruntime-node reads, optimises and prepares a model
 * synchronously inside one setImmediate callback, and the callbacks of sessions asked for at once
 * (the probing LM, the query encoder's two sessions and the reranker at server start) ran in the
 * same turn: the server's event loop stood still 210-360 ms on a busy 2-core machine. One at a
 * time, its longest turn is the longest single load (the shipped LM's: 45-80 ms on an idle
 * machine, up to about 200 ms on a busy one).
 */
export function oneSessionPerTurn<T>(create: () => Promise<T>): Promise<T> {
  const run = creating.then(async () => {
    await nextTurn();
    return create();
  });
  creating = run.catch(() => undefined);
  return run;
}

function firstLine(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text.split('\n')[0]!.trim();
}

export function newTimings(): ModelTimings {
  return { loadMs: 0, warmupMs: 0, calls: 0, totalRunMs: 0 };
}

/** Runs the session (only the `fetches` outputs when given), timing the call and turning runtime failures into ModelErrors. */
export async function runSession(
  session: OrtSession,
  feeds: Record<string, OrtTensor>,
  timings: ModelTimings,
  modelName: string,
  fetches?: readonly string[],
): Promise<Record<string, OrtTensor>> {
  const t0 = performance.now();
  try {
    return await (fetches ? session.run(feeds, fetches) : session.run(feeds));
  } catch (e) {
    throw new ModelError('runtime', `Model "${modelName}" failed to run: ${String(e)}`, modelName, { cause: e });
  } finally {
    timings.calls += 1;
    timings.totalRunMs += performance.now() - t0;
  }
}

export function int64Tensor(ort: OrtModule, rows: number[][], width: number): OrtTensor {
  const data = new BigInt64Array(rows.length * width);
  rows.forEach((row, i) => row.forEach((v, j) => (data[i * width + j] = BigInt(v))));
  return new ort.Tensor('int64', data, [rows.length, width]);
}

/** Reads a positive integer field from a config object (first of several alternative keys). */
export function configInt(config: Record<string, unknown>, keys: string[], modelName: string, fallback?: number): number {
  for (const k of keys) {
    const v = config[k];
    if (typeof v === 'number' && Number.isInteger(v) && v > 0) return v;
  }
  if (fallback !== undefined) return fallback;
  throw new ModelError('config', `Model "${modelName}": config.json lacks a positive integer ${keys.join(' / ')}.`, modelName);
}
