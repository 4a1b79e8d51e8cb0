// The counting rules of docs/ARCHITECTURE.md "One request's path through the files", applied to a
// list of recorded function entries: which frames count, how a step's internals fold into its
// entry file, and how consecutive stacks become the file path with its returns. Pure: the
// instrumented server (instrument.ts) records the events, this module only reads them.

/** One frame of a recorded stack: the function's file (repository-relative), where it starts, its name. */
export interface Frame {
  /** e.g. `src/engine/pipeline/complete.ts` */
  file: string;
  /** The function's identity within its file (where it starts); frames of one invocation keep it across awaits. */
  fn: string;
  /** The function's name as the stack gives it ('' for an anonymous one). */
  name: string;
  /** The frame is at a call (or await) whose result the function returns as it is: its return hands its callee's result on. */
  tail?: boolean;
}

/** A function entry: its stack, outermost frame first, the entered function last. */
export interface PathEvent {
  frames: Frame[];
}

export type FileKind = 'server' | 'pipeline' | 'engine' | 'shared' | 'outside';

/** Bookkeeping every stage shares (not counted): the stage timer, the trace's records, the request's slots. */
const SHARED_FILES = new Set([
  'src/engine/pipeline/stages/timed.ts',
  'src/engine/pipeline/recorder.ts',
  'src/engine/pipeline/trace.ts',
  'src/engine/pipeline/outcomes.ts',
]);

/** The request context's slot and memo machinery (its other functions, making the context and `finish`, count). */
const CONTEXT_FILE = 'src/engine/pipeline/stages/context.ts';
const CONTEXT_SHARED = new Set(['slot', 'memo', 'requestSlot', 'keyedSlot']);

/** The request's root: the language server's completion handler. */
export const ROOT_FILE = 'src/server/CompletionFeature.ts';
export const ROOT_NAME = 'provide';
/** The editor's side, which sends the request and shows its answer; it runs in another process, so the path adds it. */
export const CLIENT_FILE = 'src/client/extension.ts';

export function kindOf(frame: Pick<Frame, 'file' | 'name'>): FileKind {
  const { file } = frame;
  if (!file.startsWith('src/')) return 'outside';
  if (SHARED_FILES.has(file) || file.startsWith('src/engine/util/')) return 'shared';
  if (file === CONTEXT_FILE && CONTEXT_SHARED.has(bareName(frame.name))) return 'shared';
  if (file.startsWith('src/server/')) return 'server';
  if (file.startsWith('src/engine/pipeline/')) return 'pipeline';
  return 'engine';
}

/** `Object.slot`, `RequestContext.memo`: the function's own name. */
function bareName(name: string): string {
  return name.slice(name.lastIndexOf('.') + 1);
}

export const isRoot = (f: Frame): boolean => f.file === ROOT_FILE && bareName(f.name) === ROOT_NAME;

/**
 * The stack as the path sees it, or undefined when the event is not the request's (no root frame:
 * background work). Frames outside the root, outside src/ and in shared bookkeeping go; a file
 * outside the server and the pipeline keeps what it calls in other such files as its internals, until
 * control comes back to a server or pipeline file. `entry`: the entered function is still a frame.
 */
export function logicalStack(event: PathEvent): { frames: Frame[]; entry: boolean } | undefined {
  const root = event.frames.findIndex(isRoot);
  if (root < 0) return undefined;
  const frames: Frame[] = [];
  let inStep = false;
  let entry = false;
  for (let i = root; i < event.frames.length; i++) {
    const f = event.frames[i]!;
    const kind = kindOf(f);
    const last = i === event.frames.length - 1;
    if (kind === 'outside' || kind === 'shared') continue;
    if (kind === 'engine') {
      if (inStep) continue;
      inStep = true;
    } else inStep = false;
    frames.push(f);
    if (last) entry = true;
  }
  return { frames, entry };
}

export interface Step {
  file: string;
  /** The function control entered or came back to ('' for the client). */
  name: string;
  /** The file was on the path before this step: control came back to it. */
  back: boolean;
}

export interface RequestPath {
  steps: Step[];
  /** Steps before a loop's rounds were folded into one (`steps` folds them). */
  unfolded: { steps: number; returns: number };
  /** Distinct files on the path. */
  files: number;
  /** Steps into a file the path had already left. */
  returns: number;
  /** Per file: steps into it (the first one included) and how many of them were returns. */
  perFile: Record<string, { steps: number; returns: number }>;
}

const same = (a: Frame, b: Frame): boolean => a.file === b.file && a.fn === b.fn;

/**
 * The file path of one request from its events in order. Between two consecutive stacks, the
 * frames the new one no longer has returned (each return lands in the frame below, unless that
 * frame was at a call whose result it returns as it is), frames it adds were entered, and a call
 * is made from its caller's file (so control is back there first). Frames that vanish from below
 * frames still running (a synchronous caller that returned its callee's promise) end silently.
 * Consecutive steps in one file are one step. The client's send opens the path and its answer closes it.
 */
export function requestPath(events: readonly PathEvent[], options: { client?: boolean } = {}): RequestPath {
  const client = options.client ?? true;
  const files: Array<{ file: string; name: string }> = client ? [{ file: CLIENT_FILE, name: '' }] : [];
  const step = (frame: { file: string; name: string }): void => {
    if (files.at(-1)?.file !== frame.file) files.push({ file: frame.file, name: frame.name });
  };
  const clientStep = { file: CLIENT_FILE, name: '' };
  let prev: Frame[] = [];
  const advance = (cur: Frame[], entry: boolean): void => {
    const outer = entry ? cur.slice(0, -1) : cur;
    // Match the frames still running against the last stack, in order.
    let at = 0;
    let matched = -1;
    let kept = 0;
    for (; kept < outer.length; kept++) {
      let k = at;
      while (k < prev.length && !same(prev[k]!, outer[kept]!)) k++;
      if (k === prev.length) break;
      matched = k;
      at = k + 1;
    }
    // Returns: the frames above the last one still running, innermost first.
    for (let k = prev.length - 1; k > matched; k--) {
      const below = k > 0 ? prev[k - 1]! : undefined;
      if (below && !below.tail) step(below);
      else if (!below && client) step(clientStep);
    }
    // Entries: frames not seen before (the entered function last), each called from the frame below it.
    for (let j = kept; j < cur.length; j++) {
      const caller = j > 0 ? cur[j - 1] : undefined;
      if (caller) step(caller);
      step(cur[j]!);
    }
    prev = cur;
  };
  for (const event of events) {
    const stack = logicalStack(event);
    if (stack) advance(stack.frames, stack.entry);
  }
  advance([], false);
  return summarize(files);
}

/** Longest run of steps that a loop's round may be (a round repeated at once is one round). */
const MAX_ROUND = 8;

/**
 * The steps with each run of identical rounds folded into its first round: a loop over candidates
 * that calls into another file for each one (`a → b → ↩ a → b → ↩ a`) is one step of the request,
 * as a hand count lists it, however many candidates there are.
 */
export function foldRounds<T>(steps: readonly T[], key: (s: T) => string): T[] {
  const out = [...steps];
  const keys = out.map(key);
  // Again until nothing folds: an outer loop's rounds are alike once their inner loops are folded.
  for (let folded = true; folded;) {
    folded = false;
    for (let i = 0; i < out.length; i++) {
      for (let p = 1; p <= MAX_ROUND; p++) {
        const same = (): boolean => i + 2 * p <= out.length && keys.slice(i, i + p).every((k, j) => k === keys[i + p + j]);
        while (same()) {
          out.splice(i + p, p);
          keys.splice(i + p, p);
          folded = true;
        }
      }
    }
  }
  return out;
}

function summarize(all: ReadonlyArray<{ file: string; name: string }>): RequestPath {
  const unfolded = marked(all);
  const folded = foldRounds(all, (s) => s.file);
  const steps = marked(folded);
  const perFile: RequestPath['perFile'] = {};
  for (const s of steps) {
    const entry = (perFile[s.file] ??= { steps: 0, returns: 0 });
    entry.steps++;
    if (s.back) entry.returns++;
  }
  return {
    steps,
    unfolded: { steps: unfolded.length, returns: unfolded.filter((s) => s.back).length },
    files: new Set(steps.map((s) => s.file)).size,
    returns: steps.filter((s) => s.back).length,
    perFile,
  };
}

function marked(files: ReadonlyArray<{ file: string; name: string }>): Step[] {
  const seen = new Set<string>();
  return files.map(({ file, name }) => {
    const back = seen.has(file);
    seen.add(file);
    return { file, name, back };
  });
}

/** The path as the doc writes it: `a.ts → b.ts → ↩ a.ts`, paths under src/. */
export function formatPath(path: RequestPath): string {
  return path.steps.map((s) => `${s.back ? '↩ ' : ''}${s.file.replace(/^src\//, '')}`).join(' → ');
}
