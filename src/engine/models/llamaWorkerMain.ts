// The local model's own process (LlamaWorkerEngine): node-llama-cpp is imported, the GGUF parsed and
// loaded, and every prompt tokenized and decoded here, so none of it holds the language server's event
// loop, its memory leaves with the process, and a crash of llama.cpp ends only this process. Where
// checking or a hold needs a token chosen by the server's rules, each step's log-probabilities go
// there and its choice comes back.
import { setLogSink } from '../util/logger';
import { errorMessage, isCancellationError } from '../util/errors';
import { LlamaEngine, LlamaModelError, type LlamaEngineOptions } from './LlamaEngine';
import { ENGINE_OPTIONS_VARIABLE, type LlamaWorkerReply, type LlamaWorkerRequest } from './LlamaWorkerEngine';

function main(): void {
  const send = process.send?.bind(process);
  if (!send) throw new Error('llamaWorkerMain runs as a child process with an IPC channel');
  const engine = new LlamaEngine(JSON.parse(process.env[ENGINE_OPTIONS_VARIABLE] ?? '{}') as LlamaEngineOptions);
  const post = (reply: LlamaWorkerReply): void => void send(reply);
  // The server went away: nothing is left to answer.
  process.on('disconnect', () => process.exit(0));
  setLogSink((level, tag, message) => post({ kind: 'log', level, tag, message }));
  const running = new Map<number, AbortController>();
  /** Answers the server owes this process, by step. */
  const waiting = new Map<number, (answer: { id: number; logprob: number } | boolean) => void>();
  let step = 0;
  const ask = <T extends { id: number; logprob: number } | boolean>(reply: LlamaWorkerReply): Promise<T> =>
    new Promise((resolve) => {
      waiting.set((reply as { step: number }).step, resolve as (a: { id: number; logprob: number } | boolean) => void);
      post(reply);
    });

  process.on('message', (msg: LlamaWorkerRequest) => {
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
                        ask<{ id: number; logprob: number }>({ kind: 'choose', id, step: ++step, text, ids: [...ids], logits }),
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
