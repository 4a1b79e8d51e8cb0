// The local model's own thread (LlamaWorkerEngine): node-llama-cpp is imported, the GGUF parsed and
// loaded, and every prompt tokenized and decoded here, so none of it holds the language server's event
// loop. Where checking or a hold needs a token chosen by the main thread's rules, each step's
// log-probabilities go there and its choice comes back.
import { parentPort, workerData } from 'node:worker_threads';
import { setLogSink } from '../util/logger';
import { errorMessage, isCancellationError } from '../util/errors';
import { LlamaEngine, LlamaModelError, type LlamaEngineOptions } from './LlamaEngine';
import type { LlamaWorkerReply, LlamaWorkerRequest } from './LlamaWorkerEngine';

function main(): void {
  const port = parentPort;
  if (!port) throw new Error('llamaWorkerMain runs as a worker thread');
  const engine = new LlamaEngine(workerData as LlamaEngineOptions);
  const post = (reply: LlamaWorkerReply, transfer: ArrayBuffer[] = []): void => port.postMessage(reply, transfer);
  setLogSink((level, tag, message) => post({ kind: 'log', level, tag, message }));
  const running = new Map<number, AbortController>();
  /** Answers the main thread owes this thread, by request and step. */
  const waiting = new Map<number, (answer: { id: number; logprob: number } | boolean) => void>();
  let step = 0;
  const ask = <T extends { id: number; logprob: number } | boolean>(reply: LlamaWorkerReply, transfer: ArrayBuffer[] = []): Promise<T> =>
    new Promise((resolve) => {
      waiting.set((reply as { step: number }).step, resolve as (a: { id: number; logprob: number } | boolean) => void);
      post(reply, transfer);
    });

  port.on('message', (msg: LlamaWorkerRequest) => {
    if (msg.kind === 'cancel') return void running.get(msg.id)?.abort();
    if (msg.kind === 'answer') {
      const resolve = waiting.get(msg.step);
      waiting.delete(msg.step);
      return void resolve?.(msg.answer);
    }
    const controller = new AbortController();
    running.set(msg.id, controller);
    const { signal } = controller;
    void (async () => {
      try {
        switch (msg.kind) {
          case 'info':
            return post({ kind: 'info', id: msg.id, info: await engine.info(), eosId: engine.eosId });
          case 'texts':
            return post({ kind: 'texts', id: msg.id, texts: [...(await engine.tokenTexts())] });
          case 'warm':
            return post({ kind: 'read', id: msg.id, read: await engine.warm(msg.prompt, signal) });
          case 'unload':
            await engine.unload();
            return post({ kind: 'done', id: msg.id });
          case 'generate': {
            const id = msg.id;
            const out = await engine.generate(
              msg.prompt,
              {
                maxNewTokens: msg.maxNewTokens,
                stop: msg.stop,
                ...(msg.choose
                  ? {
                      chooseFromLogits: (text: string, logits: Float32Array, ids: readonly number[]) =>
                        ask<{ id: number; logprob: number }>({ kind: 'choose', id, step: ++step, text, ids: [...ids], logits }, [
                          logits.buffer as ArrayBuffer,
                        ]),
                    }
                  : {}),
                ...(msg.until ? { until: (text: string) => ask<boolean>({ kind: 'until', id, step: ++step, text }) } : {}),
                ...(msg.active ? { filterActive: (text: string) => ask<boolean>({ kind: 'active', id, step: ++step, text }) } : {}),
              },
              signal,
            );
            return post({ kind: 'generated', id, out, places: engine.placeStats() });
          }
        }
      } catch (e) {
        post({
          kind: 'error',
          id: msg.id,
          message: errorMessage(e),
          cancelled: isCancellationError(e),
          model: e instanceof LlamaModelError,
        });
      } finally {
        running.delete(msg.id);
      }
    })();
  });
}

main();
