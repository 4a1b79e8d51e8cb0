// `npm run soak -- [--minutes N] [--keys-per-second K] [--debounce MS] [--pause-ms MS] [--json FILE]`: a soak run,
// not a test. The built language server over stdio (as any LSP editor runs it: `coderag serve
// --stdio`, through the test harness) completes through the Ollama-compatible test server, answered
// by the embedded model on its own thread, while a simulated user types into app/main.py of the
// pyshop fixture at 20 keys per second for N minutes (default 10): every key is a document change
// and an inline-completion request that cancels the previous one, as VS Code sends them; at the
// end of each line the user pauses (--pause-ms, default 800), so the debounce lets requests through
// to the model (at 20 keys/s a key comes every 50 ms, inside the default 100 ms debounce). After
// each function typed, the document goes back to its original text, so the figures are a steady
// state, not a growing file. It prints the requests made (sent, answered with an item, reaching
// the model), the most model requests in flight at once, the server's RSS at start and end, and
// its event-loop delay p99 (from coderag/getStatus, read every 5 s).
// Goals: at most 1 model request in flight, RSS growth at most 10%, event-loop p99 < 50 ms.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CancellationTokenSource } from 'vscode-jsonrpc/node';
import { copyFixture } from '../test/helpers/paths';
import { startLsp, startModelServerThread } from '../test/server/lspHarness';
import { InlineCompletionRequest, type InlineCompletionItem, type InlineCompletionList, type StatusParams } from '../src/protocol/protocol';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    'keys-per-second': { type: 'string', default: '20' },
    debounce: { type: 'string', default: '100' },
    'pause-ms': { type: 'string', default: '800' },
    json: { type: 'string' },
  },
  strict: true,
});

const minutes = Number(values.minutes);
const keysPerSecond = Number(values['keys-per-second']);
const debounceMs = Number(values.debounce);
const pauseMs = Number(values['pause-ms']);
if (!(minutes > 0) || !(keysPerSecond > 0) || !(debounceMs >= 0) || !(pauseMs >= 0)) {
  process.stderr.write('soak: --minutes and --keys-per-second must be positive, --debounce and --pause-ms at least 0\n');
  process.exit(2);
}

const MODEL = 'coderag-lm:soak';
/** What the simulated user types, line by line, at the end of app/main.py. */
const TYPED = ['', 'def audit(owner: str) -> str:', '    cart = build_demo_cart(owner)', '    gateway = make_gateway(config.DEFAULT_GATEWAY, api_key="demo")', '    receipt = CheckoutService(cart, gateway).checkout()', '    return u.format_price(receipt.total, cart.currency)', ''];

interface Memory {
  rssMB: number;
  heapUsedMB: number;
}
interface LoopDelay {
  max: number;
  p99: number;
  mean: number;
  windowMs: number;
}
const memoryOf = (s: StatusParams): Memory | undefined => (s.stats as { memory?: Memory } | undefined)?.memory;
const loopOf = (s: StatusParams): LoopDelay | undefined => (s.stats as { eventLoopDelayMs?: LoopDelay } | undefined)?.eventLoopDelayMs;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

async function main(): Promise<void> {
  const repo = copyFixture('pyshop');
  const model = await startModelServerThread([MODEL]);
  const lsp = await startLsp(repo.path, {
    debounceMs,
    model: { provider: 'ollama', family: 'plain', timeoutMs: 7000 },
    ollama: { host: model.url, completionModel: MODEL },
    experimental: { model: { maxNewTokens: 24 }, ollama: { keepAlive: '5m' } },
  });
  try {
    process.stderr.write(`soak: indexing ${repo.path}...\n`);
    await lsp.waitForStatus((s) => s.folders.length > 0 && s.folders.every((f) => f.state === 'ready'), 180_000);
    await lsp.waitForDense(300_000);
    const path = join(repo.path, 'app', 'main.py');
    const original = readFileSync(path, 'utf8').replace(/\n*$/, '\n');
    const uri = lsp.open(path, 'python', original);
    // Warm-up: one completion loads the models; the figures start after it. It is made where the
    // user will type (the end of the file), so the models have run on prompts of the measured size
    // (a completion at the top of the file runs them on an empty prefix, and the first real ones
    // then grow the model runtime's buffers inside the measurement).
    const lastLine = original.split('\n').length - 1;
    await lsp.complete(uri, lastLine, 0);
    await model.resetCounters();
    await lsp.status(); // starts a fresh event-loop window
    const start = await lsp.status();
    const startMemory = memoryOf(start);
    process.stderr.write(`soak: typing at ${keysPerSecond} keys/s for ${minutes} min (debounce ${debounceMs} ms); server RSS ${startMemory?.rssMB} MB\n`);

    let version = 100;
    let sent = 0;
    let shown = 0;
    let cancelled = 0;
    let failed = 0;
    let pending: CancellationTokenSource | undefined;
    const outstanding = new Set<Promise<void>>();
    const windows: LoopDelay[] = [];
    const rss: number[] = [];
    const heap: number[] = [];
    const interval = 1000 / keysPerSecond;
    const endAt = performance.now() + minutes * 60_000;
    let nextStatus = performance.now() + 5000;
    let typed = '';
    let line = 0;
    let column = 0;
    let nextKeyAt = performance.now();

    while (performance.now() < endAt) {
      // One key: the next character of the function, or the document back to its original text.
      const target = TYPED[line] ?? '';
      if (line >= TYPED.length) {
        typed = '';
        line = 0;
        column = 0;
      } else if (column < target.length) {
        typed += target[column];
        column++;
      } else {
        typed += '\n';
        line++;
        column = 0;
        // After Enter the user pauses: the request for the new line gets past the debounce.
        nextKeyAt += pauseMs;
      }
      const text = original + typed;
      lsp.change(uri, text, version++);
      const lines = text.split('\n');
      const cursorLine = lines.length - 1;
      const cursorChar = lines[cursorLine]!.length;
      // VS Code cancels the request of the previous key when the next one comes.
      pending?.cancel();
      const source = new CancellationTokenSource();
      pending = source;
      sent++;
      const request = (lsp.connection.sendRequest(InlineCompletionRequest.method, { textDocument: { uri }, position: { line: cursorLine, character: cursorChar }, context: { triggerKind: 2 } }, source.token) as Promise<InlineCompletionList | InlineCompletionItem[] | null>).then(
        (r) => {
          const items = !r ? [] : Array.isArray(r) ? r : r.items;
          if (items.length > 0) shown++;
        },
        (e: unknown) => {
          if ((e as { code?: number }).code === -32800) cancelled++;
          else failed++;
        },
      );
      outstanding.add(request);
      void request.finally(() => outstanding.delete(request));

      if (performance.now() >= nextStatus) {
        nextStatus += 5000;
        const s = await lsp.status();
        const loop = loopOf(s);
        if (loop) windows.push(loop);
        const m = memoryOf(s);
        if (m) {
          rss.push(m.rssMB);
          heap.push(m.heapUsedMB);
        }
      }
      nextKeyAt += interval;
      const wait = nextKeyAt - performance.now();
      if (wait > 0) await sleep(wait);
      else nextKeyAt = performance.now(); // behind schedule: do not burst to catch up
    }
    pending?.cancel();
    await Promise.race([Promise.allSettled([...outstanding]), sleep(10_000)]);
    const end = await lsp.status();
    const endLoop = loopOf(end);
    if (endLoop) windows.push(endLoop);
    const endMemory = memoryOf(end);
    const stats = await model.stats();
    const p99s = windows.map((w) => w.p99).sort((a, b) => a - b);
    const figures = {
      minutes,
      keysPerSecond,
      debounceMs,
      pauseMs,
      requestsSent: sent,
      requestsWithItem: shown,
      requestsCancelled: cancelled,
      requestsFailed: failed,
      modelRequests: stats.calls,
      maxModelRequestsInFlight: stats.maxOpen,
      maxModelRequestsAnsweredAtOnce: stats.maxAnswered,
      rssStartMB: startMemory?.rssMB,
      rssEndMB: endMemory?.rssMB,
      rssGrowthPercent: startMemory && endMemory ? Math.round((1000 * (endMemory.rssMB - startMemory.rssMB)) / startMemory.rssMB) / 10 : undefined,
      /** RSS after the first minute of typing (12th 5 s sample): what the steady state starts from. */
      rssAfterFirstMinuteMB: rss[11],
      rssGrowthAfterFirstMinutePercent: rss[11] !== undefined && endMemory ? Math.round((1000 * (endMemory.rssMB - rss[11])) / rss[11]) / 10 : undefined,
      rssMaxMB: Math.max(...rss, endMemory?.rssMB ?? 0),
      /** Every 5 s: where the growth happens (a warm-up that levels off, or a steady climb). */
      rssSeriesMB: rss,
      heapUsedSeriesMB: heap,
      eventLoopP99Ms: { worstWindow: p99s.at(-1) ?? 0, medianWindow: percentile(p99s, 50), windows: windows.length, windowSeconds: 5 },
      eventLoopMaxMs: Math.max(0, ...windows.map((w) => w.max)),
    };
    const goals = [
      `at most 1 model request in flight: ${figures.maxModelRequestsInFlight <= 1 ? 'met' : `NOT met (${figures.maxModelRequestsInFlight}; answered at once: ${figures.maxModelRequestsAnsweredAtOnce})`}`,
      `RSS growth at most 10%: ${figures.rssGrowthPercent !== undefined && figures.rssGrowthPercent <= 10 ? 'met' : 'NOT met'} (${figures.rssStartMB} -> ${figures.rssEndMB} MB, ${figures.rssGrowthPercent}%)`,
      `event-loop delay p99 under 50 ms: ${figures.eventLoopP99Ms.worstWindow < 50 ? 'met' : 'NOT met'} (worst 5 s window ${figures.eventLoopP99Ms.worstWindow} ms, median window ${figures.eventLoopP99Ms.medianWindow} ms)`,
    ];
    process.stdout.write(
      [
        `soak: ${minutes} min at ${keysPerSecond} keys/s with a ${pauseMs} ms pause at each line end, debounce ${debounceMs} ms`,
        `  requests made: ${sent} inline-completion requests (${shown} with an item, ${sent - shown - failed - cancelled} empty or superseded by the next key, ${cancelled} cancelled with an error, ${failed} failed); ${stats.calls} reached the model server`,
        `  model requests in flight at once: at most ${stats.maxOpen} (answered in full at once: ${stats.maxAnswered})`,
        `  server RSS: ${figures.rssStartMB} MB at start, ${figures.rssEndMB} MB at end (${figures.rssGrowthPercent}%), at most ${figures.rssMaxMB} MB; after the first minute ${figures.rssAfterFirstMinuteMB ?? '-'} MB (end ${figures.rssGrowthAfterFirstMinutePercent ?? '-'}% above it)`,
        `  server RSS per minute: ${rss.filter((_, i) => i % 12 === 11).join(', ')} MB (JS heap ${heap.filter((_, i) => i % 12 === 11).join(', ')} MB)`,
        `  event-loop delay p99: worst 5 s window ${figures.eventLoopP99Ms.worstWindow} ms, median window ${figures.eventLoopP99Ms.medianWindow} ms (${windows.length} windows); max ${figures.eventLoopMaxMs} ms`,
        ...goals.map((g) => `  goal: ${g}`),
        '',
      ].join('\n'),
    );
    if (values.json) writeFileSync(values.json, JSON.stringify(figures, null, 2) + '\n');
  } finally {
    await lsp.close();
    await model.close();
    repo.cleanup();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`soak: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
