// The local provider's cost to the language server: how late its event loop runs while llama.cpp loads
// a GGUF in its process and while it decodes, and its RSS before the model loads, with it loaded (after
// a few completions) and after the idle unload. The event-loop figures are the server's own
// (coderag/getStatus: the max delay of monitorEventLoopDelay since the last look), read every
// `--every-ms`; a window is the load's while the server's "loaded" log line has not come, the decode's
// after it while a completion is in flight.
//
// Usage: node --import tsx scripts/benchLocalEngine.ts --gguf F.gguf --repo DIR --file REL [--line N]
//   [--threads 1] [--completions 4] [--idle-minutes 0.1] [--every-ms 100] [--server dist/server.js] [--json OUT]
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { GetStatusRequest, InlineCompletionRequest, type StatusParams } from '../src/protocol/protocol';
import { startServer } from './benchTyping';

interface Window {
  atMs: number;
  maxMs: number;
  phase: 'idle' | 'load' | 'decode';
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      gguf: { type: 'string' },
      repo: { type: 'string' },
      file: { type: 'string' },
      line: { type: 'string' },
      threads: { type: 'string', default: '1' },
      completions: { type: 'string', default: '4' },
      'idle-minutes': { type: 'string', default: '0.1' },
      'every-ms': { type: 'string', default: '100' },
      server: { type: 'string', default: join(__dirname, '..', 'dist', 'server.js') },
      json: { type: 'string' },
    },
  });
  if (!values.gguf || !values.repo || !values.file) throw new Error('usage: benchLocalEngine --gguf F --repo DIR --file REL');
  const repo = resolve(values.repo);
  const idleMinutes = Number(values['idle-minutes']);
  const settings = {
    model: { provider: 'local' },
    local: { modelPath: resolve(values.gguf), threads: Number(values.threads), contextTokens: 8192, idleUnloadMinutes: idleMinutes },
    experimental: { model: { maxNewTokens: 16 } },
  };
  const cacheDir = join(tmpdir(), 'coderag-bench-local-cache');
  mkdirSync(cacheDir, { recursive: true });
  const log: Array<{ atMs: number; line: string }> = [];
  let loadedAt: number | undefined;
  let unloadedAt: number | undefined;
  const lsp = startServer(values.server, repo, settings, cacheDir, (line) => {
    log.push({ atMs: performance.now(), line });
    if (/\[model\] loaded /.test(line)) loadedAt ??= performance.now();
    if (/\[model\] unloaded /.test(line)) unloadedAt ??= performance.now();
  });
  const status = async (): Promise<StatusParams> => (await lsp.connection.sendRequest(GetStatusRequest.method, {})) as StatusParams;
  const rss = async (): Promise<number> => (await status()).stats?.memory?.rssMB ?? NaN;
  // The engine's own process (the local provider runs llama.cpp in a child of the server), from /proc.
  const engineRss = (): number => {
    let kb = 0;
    for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      try {
        const stat = readFileSync(`/proc/${pid}/status`, 'utf8');
        if (Number(/^PPid:\s+(\d+)/m.exec(stat)?.[1]) !== lsp.pid) continue;
        kb += Number(/^VmRSS:\s+(\d+)/m.exec(stat)?.[1] ?? 0);
      } catch {
        // gone meanwhile
      }
    }
    return Math.round(kb / 1024);
  };
  await lsp.ready;
  await sleep(3000);
  const rssBefore = await rss();

  // The server's event loop, looked at every `every-ms` while completions run.
  const windows: Window[] = [];
  let inFlight = false;
  let probing = true;
  const probe = (async () => {
    while (probing) {
      const s = await status();
      const at = performance.now();
      const maxMs = s.stats?.eventLoopDelayMs?.max ?? 0;
      windows.push({ atMs: at, maxMs, phase: !inFlight ? 'idle' : loadedAt === undefined ? 'load' : 'decode' });
      await sleep(Number(values['every-ms']));
    }
  })();

  const path = join(repo, values.file);
  const lines = readFileSync(path, 'utf8').split('\n');
  const at = values.line !== undefined ? Number(values.line) : Math.floor(lines.length / 2);
  const uri = pathToFileURL(path).toString();
  const languageId = extname(path) === '.java' ? 'java' : 'python';
  await lsp.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId, version: 1, text: lines.join('\n') } });
  const requests: Array<{ ms: number; items: number }> = [];
  const started = performance.now();
  for (let i = 0; i < Number(values.completions); i++) {
    const line = lines[at + i] ?? '';
    inFlight = true;
    const t0 = performance.now();
    const answer = (await lsp.connection.sendRequest(InlineCompletionRequest.method, {
      textDocument: { uri },
      position: { line: at + i, character: Math.min(line.length, Math.max(4, line.search(/\S/) + 6)) },
      context: { triggerKind: 1 },
    })) as { items?: unknown[] } | null;
    inFlight = false;
    requests.push({ ms: performance.now() - t0, items: answer?.items?.length ?? 0 });
    await sleep(300);
  }
  await sleep(2000);
  const rssLoaded = await rss();
  const engineLoaded = engineRss();
  // The idle unload: wait for its log line, then a moment for the memory to go back.
  const unloadBy = performance.now() + idleMinutes * 60_000 + 30_000;
  while (unloadedAt === undefined && performance.now() < unloadBy) await sleep(500);
  await sleep(3000);
  const rssUnloaded = await rss();
  const engineUnloaded = engineRss();
  probing = false;
  await probe;
  await lsp.close();

  const worst = (phase: Window['phase']): number => Math.max(0, ...windows.filter((w) => w.phase === phase).map((w) => w.maxMs));
  const figures = {
    gguf: values.gguf,
    threads: Number(values.threads),
    loadMs: loadedAt !== undefined ? Math.round(loadedAt - started) : undefined,
    requestsMs: requests.map((r) => Math.round(r.ms)),
    eventLoopMaxMs: { load: worst('load'), decode: worst('decode'), idle: worst('idle') },
    windows: windows.length,
    rssMB: { beforeLoad: rssBefore, loaded: rssLoaded, afterUnload: rssUnloaded, unloaded: unloadedAt !== undefined },
    engineProcessRssMB: { loaded: engineLoaded, afterUnload: engineUnloaded },
    log: log.filter((l) => /\[model\]/.test(l.line)).map((l) => `${Math.round(l.atMs - started)} ms ${l.line}`),
  };
  console.log(JSON.stringify(figures, null, 1));
  console.log(
    `event-loop max: while loading ${figures.eventLoopMaxMs.load} ms, while decoding ${figures.eventLoopMaxMs.decode} ms ` +
      `(target under 100 ms: ${Math.max(figures.eventLoopMaxMs.load, figures.eventLoopMaxMs.decode) < 100 ? 'met' : 'NOT met'}); ` +
      `RSS ${rssBefore} MB before, ${rssLoaded} MB loaded, ${rssUnloaded} MB after the unload ` +
      `(within 100 MB of before: ${rssUnloaded - rssBefore <= 100 ? 'met' : 'NOT met'}); ` +
      `the engine's process ${engineLoaded} MB loaded, ${engineUnloaded} MB after the unload`,
  );
  if (values.json) writeFileSync(values.json, JSON.stringify({ ...figures, windowsAll: windows }, null, 1));
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.stack : String(e));
  process.exit(1);
});
