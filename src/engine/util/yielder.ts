// Long synchronous passes on the server's main thread (indexing, tokenising, hashing, saving) hand
// the event loop back now and then, so that requests and cancellation get through.
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';

/**
 * A pause() to await between steps of such a pass: it resolves at once, or yields to the event loop
 * first when `intervalMs` have passed since the last yield (or since the yielder was made).
 */
export function eventLoopYielder(intervalMs = 25): () => Promise<void> {
  let lastYield = performance.now();
  return async () => {
    if (performance.now() - lastYield <= intervalMs) return;
    await yieldToEventLoop();
    lastYield = performance.now();
  };
}
