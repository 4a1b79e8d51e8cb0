// Preloaded into the language server run from source (`node --import tsx --import <this> ...`):
// every function of src/**/*.ts gets, at its body's start, a probe that records the stack while
// recording is on (the parent starts and stops it over the IPC channel). tsx hands the CommonJS
// loader compiled JavaScript, so the probe is inserted there, on the same line (lines do not
// move); a second parse of the probed code marks the calls whose result a function returns as it
// is, so a frame stopped at one is known to hand its callee's result on.
import Module from 'node:module';
import { relative, sep } from 'node:path';
import { callSpans, probed, tailAt, PROBE, type FileInfo } from './probe';
import type { Frame } from './path';

const root = process.cwd();
const srcRoot = `${root}${sep}src${sep}`;

const files = new Map<string, FileInfo>();

type Compile = (this: Module, code: string, fileName: string) => unknown;
const proto = Module.prototype as unknown as { _compile: Compile };
const compile = proto._compile;
proto._compile = function (this: Module, code: string, fileName: string): unknown {
  if (!fileName.startsWith(srcRoot) || !fileName.endsWith('.ts')) return compile.call(this, code, fileName);
  const out = probed(code, fileName);
  files.set(fileName, { rel: relative(root, fileName).split(sep).join('/'), ...callSpans(out, fileName) });
  return compile.call(this, out, fileName);
};

let recording = false;
const frameIds = new Map<string, number>();
const frameList: Frame[] = [];
let events: number[][] = [];
const tails = new Map<string, boolean>();

function probe(): void {
  if (!recording) return;
  const holder: { stack?: unknown } = {};
  const prepare = Error.prepareStackTrace;
  const limit = Error.stackTraceLimit;
  Error.prepareStackTrace = (_e, sites) => sites;
  Error.stackTraceLimit = Infinity;
  Error.captureStackTrace(holder, probe);
  const sites = holder.stack as NodeJS.CallSite[];
  Error.prepareStackTrace = prepare;
  Error.stackTraceLimit = limit;
  const ids: number[] = [];
  let request = false;
  for (let i = sites.length - 1; i >= 0; i--) {
    const site = sites[i]!;
    const fileName = site.getFileName();
    const info = fileName ? files.get(fileName) : undefined;
    if (!info) continue;
    const line = site.getLineNumber() ?? 0;
    const column = site.getColumnNumber() ?? 0;
    const where = `${info.rel}:${line}:${column}`;
    let tail = tails.get(where);
    if (tail === undefined) tails.set(where, (tail = tailAt(info, line, column)));
    const name = site.getFunctionName() ?? '';
    const fn = `${site.getEnclosingLineNumber()}:${site.getEnclosingColumnNumber()}`;
    const key = `${info.rel}|${fn}|${name}|${tail}`;
    let id = frameIds.get(key);
    if (id === undefined) {
      id = frameList.length;
      frameIds.set(key, id);
      frameList.push({ file: info.rel, fn, name, ...(tail ? { tail } : {}) });
    }
    if (info.rel === 'src/server/CompletionFeature.ts' && name.endsWith('provide')) request = true;
    ids.push(id);
  }
  // Background work (indexing, timers) has no completion handler below it.
  if (request) events.push(ids);
}
(globalThis as Record<string, unknown>)[PROBE] = probe;

process.on('message', (message: { op?: string }) => {
  if (message.op === 'start') {
    events = [];
    recording = true;
    process.send?.({ op: 'started' });
  } else if (message.op === 'stop') {
    recording = false;
    process.send?.({ op: 'events', frames: frameList, events });
    events = [];
  }
});
// The channel must not keep the server running after the client's `exit`.
process.channel?.unref();
