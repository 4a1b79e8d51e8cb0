// `node --import tsx scripts/countRequestPath.ts [--json]`: how many source files one completion
// request passes through, and how many times control comes back to a file it had already left,
// counted by the rules of docs/ARCHITECTURE.md "One request's path through the files" on the real
// language server. The server runs from source in a child process with every function of src/
// probed (scripts/pathCount/instrument.ts); it serves the pyshop fixture with an Ollama-protocol
// test model server and the default settings (auto router, distilled reranker, checking on; the
// model's answer kept short). After a warm-up line request, one line request (after `    cart.`
// in app/main.py) and one body request (a method of services/checkout.py emptied, the cursor in
// it) are recorded; scripts/pathCount/path.ts turns each one's stacks into its file path.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import { copyFixture, repoRoot, tempDir } from '../test/helpers/paths';
import { startModelServerThread } from '../test/server/lspHarness';
import {
  ExplainRequest,
  InlineCompletionRequest,
  StatusNotification,
  type ExplainResult,
  type InlineCompletionItem,
  type InlineCompletionList,
  type StatusParams,
} from '../src/protocol/protocol';
import { formatPath, requestPath, type Frame, type PathEvent, type RequestPath } from './pathCount/path';

const { values } = parseArgs({ options: { json: { type: 'boolean', default: false } } });
const MODEL = 'coderag-lm:test';
const log = (line: string): void => void process.stderr.write(`${line}\n`);

interface Recorded {
  frames: Frame[];
  events: number[][];
}

/** The server from source, probed, on stdio, with an IPC channel that starts and stops recording. */
function startServer(cacheDir: string): {
  connection: MessageConnection;
  record<T>(run: () => Promise<T>): Promise<{ result: T; events: PathEvent[] }>;
  close(): Promise<void>;
} {
  const instrument = pathToFileURL(join(__dirname, 'pathCount', 'instrument.ts')).href;
  const entry = join(__dirname, 'pathCount', 'serverEntry.ts');
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', instrument, entry, '--stdio'], {
    cwd: repoRoot,
    env: { ...process.env, CODERAG_CACHE_DIR: cacheDir },
    stdio: ['pipe', 'pipe', 'pipe', 'ipc'],
  });
  const stderr: string[] = [];
  child.stderr!.on('data', (d: Buffer) => stderr.push(d.toString('utf8')));
  child.once('exit', (code) => {
    if (code) log(`server exited with ${code}:\n${stderr.join('').slice(-4000)}`);
  });
  const connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  const reply = (op: string): Promise<unknown> =>
    new Promise((resolve) => {
      const on = (m: { op?: string }): void => {
        if (m.op !== op) return;
        child.off('message', on);
        resolve(m);
      };
      child.on('message', on);
    });
  return {
    connection,
    async record(run) {
      const started = reply('started');
      child.send({ op: 'start' });
      await started;
      const result = await run();
      const stopped = reply('events');
      child.send({ op: 'stop' });
      const { frames, events } = (await stopped) as Recorded;
      return { result, events: events.map((ids) => ({ frames: ids.map((id) => frames[id]!) })) };
    },
    async close() {
      await Promise.race([connection.sendRequest('shutdown'), new Promise((r) => setTimeout(r, 3000))]);
      await connection.sendNotification('exit');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => (child.kill(), resolve()), 3000);
        child.once('exit', () => (clearTimeout(timer), resolve()));
      });
      connection.dispose();
    },
  };
}

/** main.py with line 19 (0-based 18) inserted as `tail`: the cursor after it. */
function mainPyAt(repo: string, tail: string): { text: string; line: number; character: number } {
  const lines = readFileSync(join(repo, 'app', 'main.py'), 'utf8').split('\n');
  return { text: [...lines.slice(0, 18), tail, ...lines.slice(18)].join('\n'), line: 18, character: tail.length };
}

/** checkout.py's first method emptied to its signature (pipelineSnapshot.ts's emptiedPythonMethod), the cursor in the body. */
function emptiedMethod(repo: string): { text: string; line: number; character: number } {
  const text = readFileSync(join(repo, 'pyshop', 'services', 'checkout.py'), 'utf8');
  const at = text.indexOf('    def ', text.indexOf('class '));
  const bodyStart = text.indexOf('\n', at) + 1;
  const next = text.indexOf('\n    def ', bodyStart);
  const prefix = `${text.slice(0, bodyStart)}        `;
  const lines = prefix.split('\n');
  return { text: `${prefix}\n${next < 0 ? '' : text.slice(next)}`, line: lines.length - 1, character: lines.at(-1)!.length };
}

interface Counted {
  request: string;
  mode: string | undefined;
  shown: string;
  events: number;
  files: number;
  returns: number;
  /** Before a loop's rounds were folded into one. */
  unfolded: RequestPath['unfolded'] & { files: number };
  path: string;
  server: Record<string, { steps: number; returns: number }>;
  steps: RequestPath['steps'];
}

async function main(): Promise<void> {
  const t0 = performance.now();
  const repo = copyFixture('pyshop');
  const cache = tempDir('coderag-count-cache-');
  const model = await startModelServerThread([MODEL]);
  const server = startServer(cache.path);
  const { connection } = server;
  const settings = {
    model: { provider: 'ollama' },
    ollama: { host: model.url, completionModel: MODEL },
    // The stand-in model is slow on a CPU: short answers keep the run short (the stages are the same).
    experimental: { model: { maxNewTokens: 16 }, body: { maxNewTokens: 32 } },
  };
  let ready: (s: StatusParams) => void = () => undefined;
  const folderReady = new Promise<StatusParams>((resolve) => (ready = resolve));
  connection.onNotification(StatusNotification.method, (s: StatusParams) => {
    const done = (b: { state: string } | undefined): boolean => b === undefined || b.state !== 'building';
    if (s.folders.length > 0 && s.folders.every((f) => f.state === 'ready' && done(f.dense))) ready(s);
  });
  connection.onNotification('window/logMessage', () => undefined);
  connection.onRequest('window/workDoneProgress/create', () => null);
  connection.onRequest('client/registerCapability', () => null);
  connection.onRequest('workspace/configuration', () => [settings]);
  connection.listen();
  const uri = (rel: string): string => pathToFileURL(join(repo.path, rel)).toString();
  try {
    const folder = { uri: pathToFileURL(repo.path).toString(), name: 'pyshop' };
    await connection.sendRequest('initialize', {
      processId: process.pid,
      rootUri: folder.uri,
      workspaceFolders: [folder],
      capabilities: { window: { workDoneProgress: true }, workspace: { workspaceFolders: true } },
      initializationOptions: { trusted: true, settings },
    });
    await connection.sendNotification('initialized', {});
    await Promise.race([folderReady, new Promise((_r, reject) => setTimeout(() => reject(new Error('folder not ready in 90 s')), 90_000))]);
    log(`folder ready after ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    let version = 1;
    const open = (rel: string, text: string): void =>
      void connection.sendNotification('textDocument/didOpen', {
        textDocument: { uri: uri(rel), languageId: 'python', version: version++, text },
      });
    const change = (rel: string, text: string): void =>
      void connection.sendNotification('textDocument/didChange', {
        textDocument: { uri: uri(rel), version: version++ },
        contentChanges: [{ text }],
      });
    const complete = async (rel: string, at: { line: number; character: number }): Promise<InlineCompletionItem | undefined> => {
      const r = (await connection.sendRequest(InlineCompletionRequest.method, {
        textDocument: { uri: uri(rel) },
        position: { line: at.line, character: at.character },
        context: { triggerKind: 2 },
      })) as InlineCompletionList | InlineCompletionItem[] | null;
      return (Array.isArray(r) ? r : (r?.items ?? []))[0];
    };
    const count = async (name: string, rel: string, at: { line: number; character: number }): Promise<Counted> => {
      const { result: item, events } = await server.record(() => complete(rel, at));
      // The request's trace (the last one kept, when nothing was shown): which mode ran.
      const explained = (await connection.sendRequest(
        ExplainRequest.method,
        item?.traceId ? { traceId: item.traceId } : {},
      )) as ExplainResult | null;
      const path = requestPath(events);
      const serverFiles = Object.fromEntries(Object.entries(path.perFile).filter(([f]) => f.startsWith('src/server/')));
      return {
        request: name,
        mode: explained?.trace.mode,
        shown: typeof item?.insertText === 'string' ? item.insertText : '',
        events: events.length,
        files: path.files,
        returns: path.returns,
        unfolded: { files: path.files, ...path.unfolded },
        path: formatPath(path),
        server: serverFiles,
        steps: path.steps,
      };
    };

    const main = 'app/main.py';
    const warm = mainPyAt(repo.path, '    total = ');
    open(main, warm.text);
    await complete(main, warm);
    const line = mainPyAt(repo.path, '    cart.');
    change(main, line.text);
    const results = [await count('line', main, line)];
    const body = emptiedMethod(repo.path);
    const checkout = 'pyshop/services/checkout.py';
    open(checkout, body.text);
    results.push(await count('body', checkout, body));
    log(`done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    if (values.json) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
    else for (const r of results) process.stdout.write(report(r));
  } finally {
    await server.close();
    await model.close();
    repo.cleanup();
    cache.cleanup();
  }
}

function report(r: Counted): string {
  const server = Object.entries(r.server)
    .map(([f, n]) => `  ${f}: ${n.steps} (${n.returns} of them returns)`)
    .join('\n');
  return [
    `${r.request} request (mode ${r.mode ?? '?'}, ${r.events} function entries recorded, shown ${JSON.stringify(r.shown)})`,
    `files entered: ${r.files}`,
    `returns into a file already left: ${r.returns}`,
    `before a loop's rounds are folded into one: ${r.unfolded.steps} steps, ${r.unfolded.returns} returns`,
    `path: ${r.path}`,
    `steps into each src/server file:`,
    server,
    '',
    '',
  ].join('\n');
}

main().then(
  // The model server's thread and the closed connection's handles need not hold the script open.
  () => process.exit(),
  (e: unknown) => {
    log(e instanceof Error ? (e.stack ?? e.message) : String(e));
    process.exit(1);
  },
);
