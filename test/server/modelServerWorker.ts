// The model server of the LSP tests on its own thread: its model runs forward passes that hold its
// event loop, which must not slow the test's own clock (keystrokes at 20/s) or its JSON-RPC client.
import { parentPort, workerData } from 'node:worker_threads';
import { embeddedLM, startModelServer } from './lspHarness';
import type { Fault } from '../helpers/ollamaServer';

export type WorkerOp =
  { op: 'setFault'; fault: Fault | undefined } | { op: 'down' } | { op: 'up' } | { op: 'reset' } | { op: 'stats' } | { op: 'close' };

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) return;
  const model = await startModelServer((workerData as { models: string[] }).models);
  port.on('message', (message: { id: number } & WorkerOp) => {
    const answer = async (): Promise<unknown> => {
      switch (message.op) {
        case 'setFault':
          model.server.setFault(message.fault);
          return null;
        case 'down':
          return model.down();
        case 'up':
          return model.up();
        case 'reset':
          model.resetCounters();
          return null;
        case 'stats':
          return {
            calls: model.generateCalls(),
            maxOpen: model.maxInFlight(),
            maxAnswered: model.maxAnsweredOverlap(),
            paths: model.server.requests.map((r) => r.path),
            debug: (model as unknown as { debug?: () => unknown }).debug?.(),
          };
        case 'close':
          await model.close();
          // Release the ONNX session before the thread ends (terminating it with a live session aborts the process).
          await (await embeddedLM()).dispose();
          setImmediate(() => port.close());
          return null;
      }
    };
    answer().then(
      (result) => port.postMessage({ id: message.id, result: result ?? null }),
      (e: unknown) => port.postMessage({ id: message.id, error: e instanceof Error ? e.message : String(e) }),
    );
  });
  port.postMessage({ ready: true, url: model.url });
}

void main();
