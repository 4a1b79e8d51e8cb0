// The traces of the last completions (for `coderag/explain`), with the server-side timing of each;
// learning keeps what it needs of each completion on its own (learningStore.ts).
import type { CompletionTrace } from '../engine/pipeline';
import type { ModelRunsOn } from '../engine/models/device';
import type { ExplainResult } from '../protocol/protocol';

/**
 * The server's own facts of a request, as Explain sends them (ExplainResult.server: debounce, handler, overhead, cache, yielding,
 * prompt assembly), with where each local model ran (beside the trace, never in it).
 */
type ServerTiming = Omit<NonNullable<ExplainResult['server']>, 'models'> & { models?: ModelRunsOn[] };

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
