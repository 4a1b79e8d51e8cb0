// The traces of the last completions (for `coderag/explain`), with the server-side timing of each;
// learning keeps what it needs of each completion on its own (learningStore.ts).
import type { CompletionTrace } from '../engine/pipeline';
import type { ModelRunsOn } from '../engine/models/device';

interface ServerTiming {
  debounceMs: number;
  handlerMs: number;
  overheadMs: number;
  cache: 'hit' | 'miss';
  /** Of the overhead: yielding to pending messages between stages, and prompt assembly + postprocessing. */
  checkpointMs?: number;
  promptMs?: number;
  /** Where each local model ran when the request was served (the server's own facts, beside the trace). */
  models?: ModelRunsOn[];
}

interface KeptTrace {
  trace: CompletionTrace;
  server: ServerTiming;
}

const TRACES_KEPT = 100;

export class TraceLog {
  private readonly traces = new Map<string, KeptTrace>();
  private last: string | undefined;

  keep(trace: CompletionTrace, server: ServerTiming): void {
    this.traces.set(trace.id, { trace, server });
    while (this.traces.size > TRACES_KEPT) {
      const oldest = this.traces.keys().next();
      if (oldest.done) break;
      this.traces.delete(oldest.value);
    }
    this.last = trace.id;
  }

  /** A kept trace (the last 100); without an id, the newest. */
  get(traceId?: string): KeptTrace | undefined {
    const id = traceId ?? this.last;
    return id !== undefined ? this.traces.get(id) : undefined;
  }
}
