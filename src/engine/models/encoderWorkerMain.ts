// The encoder's own thread (WorkerEncoder): loads the model through a ModelRegistry and embeds
// what the main thread sends, so that tokenising and the synchronous ONNX runs of index-time
// embedding never hold the main thread's event loop. Requests interleave between ONNX runs; a
// cancelled one stops at its next batch.
import { parentPort, workerData } from 'node:worker_threads';
import { setLogSink } from '../util/logger';
import { errorMessage, isCancellationError } from '../util/errors';
import { ModelRegistry } from './ModelRegistry';
import type { WorkerRequest, WorkerReply, WorkerStart } from './WorkerEncoder';

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('encoderWorkerMain runs as a worker thread');
  const start = workerData as WorkerStart;
  const post = (reply: WorkerReply, transfer: ArrayBuffer[] = []): void => port.postMessage(reply, transfer);
  // The main thread's stdout may be the LSP channel: log lines go to its logger instead.
  setLogSink((level, tag, message) => post({ kind: 'log', level, tag, message }));
  const registry = new ModelRegistry(start.registry);
  const running = new Map<number, AbortController>();
  /** Aborted when the main thread closes the thread: the first load stops with it. */
  const lifetime = new AbortController();
  port.on('message', (msg: WorkerRequest) => {
    if (msg.kind === 'cancel') {
      running.get(msg.id)?.abort();
      return;
    }
    if (msg.kind === 'close') {
      lifetime.abort();
      void registry.dispose().finally(() => port.close());
      return;
    }
    const controller = new AbortController();
    running.set(msg.id, controller);
    void (async () => {
      try {
        const encoder = await registry.encoder(start.name, controller.signal);
        const vectors =
          msg.items && encoder.embedItems
            ? await encoder.embedItems(msg.texts, controller.signal)
            : await encoder.embed(msg.texts, controller.signal);
        // One buffer for the whole answer, moved (not copied) to the main thread.
        const flat = new Float32Array(vectors.length * encoder.dim);
        vectors.forEach((v, i) => flat.set(v, i * encoder.dim));
        post({ kind: 'vectors', id: msg.id, flat, count: vectors.length }, [flat.buffer]);
      } catch (e) {
        post({ kind: 'error', id: msg.id, message: errorMessage(e), cancelled: isCancellationError(e) });
      } finally {
        running.delete(msg.id);
      }
    })();
  });
  try {
    const encoder = await registry.encoder(start.name, lifetime.signal);
    post({
      kind: 'ready',
      info: {
        name: encoder.name,
        path: encoder.path,
        dim: encoder.dim,
        maxLength: encoder.maxLength,
        ...(encoder.fingerprint !== undefined ? { fingerprint: encoder.fingerprint } : {}),
        ...(encoder.placement ? { placement: encoder.placement } : {}),
      },
    });
  } catch (e) {
    post({ kind: 'failed', message: errorMessage(e) });
  }
}

void main();
