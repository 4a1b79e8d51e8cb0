// The request's recorder, the trace's one writer: stages hand it their timings and outcomes as they
// run, and finish() builds the trace once from them. Nothing else writes a trace, and no stage reads
// one back: what a stage needs of another it gets as a value.
import { redactSecrets } from '../prompt/redact';
import { newTraceId, retrievalTraceOf, type CompletionTrace, type StageName, type StageTiming } from './trace';
import {
  checkTraceOf,
  modelTimeMs,
  modelTraceOf,
  promptTraceOf,
  type RequestTimes,
  type StageOutcome,
  type StageOutcomes,
} from './outcomes';

/** The outcomes CompletionResult.outcomes carries (StageOutcomes' fields but the times). */
const HANDED_ON: ReadonlySet<StageOutcome['stage']> = new Set(['similar', 'check', 'generate', 'gate', 'failure']);

/** Who the trace is of: the request's file and language, and the mode that ran (the router's name until it chooses). */
export interface TraceSubject {
  filePath: string;
  lang: CompletionTrace['lang'];
  mode: string;
}

export class Recorder {
  private readonly timings: StageTiming[] = [];
  private readonly recorded: StageOutcome[] = [];
  private readonly handedOn: Omit<StageOutcomes, 'times'> = {};
  /** Redactions of quoted file text under way (a query shows the file above the cursor): finish() waits for them. */
  private readonly redacting: Promise<void>[] = [];
  private checkpointMs: number | undefined;
  private modelPrepareMs: number | undefined;
  private readonly startedAt = new Date().toISOString();
  private readonly start = performance.now();

  constructor(private readonly subject: TraceSubject) {}

  /** The mode the router chose. */
  mode(name: string): void {
    this.subject.mode = name;
  }

  /** A stage's timing, in the order the stages ran. */
  stage(timing: StageTiming): void {
    this.timings.push(timing);
  }

  /**
   * A note on the last timing of `stage` when it is the latest one (`onlyOk`: only when it succeeded); the postprocess stage learns its
   * note from what it cut.
   */
  noteLast(stage: StageName, message: string, onlyOk = false): void {
    const last = this.timings.at(-1);
    if (last?.stage === stage && (!onlyOk || last.status === 'ok')) last.message = message;
  }

  /** Time spent letting the host's pending messages through before a stage. */
  addCheckpoint(ms: number): void {
    this.checkpointMs = (this.checkpointMs ?? 0) + ms;
  }

  /** Time spent making the model ready before the prompt. */
  modelPrepared(ms: number): void {
    this.modelPrepareMs = ms;
  }

  /** A stage's outcome: kept for the host where it reads it, and for the trace; a query is redacted as it is recorded. */
  record(o: StageOutcome): void {
    if (HANDED_ON.has(o.stage)) (this.handedOn as Record<string, StageOutcome['outcome']>)[o.stage] = o.outcome;
    if (o.stage === 'query') {
      const query = { ...o.outcome };
      this.redacting.push(redactSecrets(query.text).then((r) => void (query.text = r.text)));
      this.recorded.push({ stage: 'query', outcome: query });
    } else if (o.stage === 'similar') {
      // The perspectives' queries are redacted where they are (the host's outcome is the same object, as the trace shows it).
      for (const p of o.outcome.perspectives) {
        if (p.query) this.redacting.push(redactSecrets(p.query).then((r) => void (p.query = r.text)));
      }
      this.recorded.push(o);
    } else this.recorded.push(o);
  }

  /** The outcomes the host reads, so far. */
  get outcomes(): Readonly<Omit<StageOutcomes, 'times'>> {
    return this.handedOn;
  }

  /** A recorder for a step that runs stages of its own (the body mode's knowledge step): its record is kept apart from this one's. */
  child(subject: TraceSubject): Recorder {
    return new Recorder(subject);
  }

  /** Where the request's time went, as the host reads it. */
  times(): RequestTimes {
    return {
      stages: this.timings,
      ...(this.modelPrepareMs !== undefined ? { modelPrepareMs: this.modelPrepareMs } : {}),
      ...(this.checkpointMs !== undefined ? { checkpointMs: this.checkpointMs } : {}),
    };
  }

  /** The trace, built once from the outcomes and timings, closed with its totals; the outcomes with the times. */
  async finish(): Promise<{ trace: CompletionTrace; outcomes: StageOutcomes }> {
    const totalMs = performance.now() - this.start;
    await Promise.all(this.redacting);
    const times = this.times();
    const trace: CompletionTrace = {
      id: newTraceId(),
      mode: this.subject.mode,
      startedAt: this.startedAt,
      filePath: this.subject.filePath,
      lang: this.subject.lang,
      stages: this.timings,
      totalMs,
      nonModelMs: totalMs - modelTimeMs(times),
    };
    for (const o of this.recorded) writeOutcome(trace, o);
    if (this.modelPrepareMs !== undefined) trace.modelPrepareMs = this.modelPrepareMs;
    if (this.checkpointMs !== undefined) trace.checkpointMs = this.checkpointMs;
    return { trace, outcomes: { ...this.handedOn, times } };
  }
}

/** A stage's outcome into the trace, as Explain shows it. */
function writeOutcome(trace: CompletionTrace, o: StageOutcome): void {
  switch (o.stage) {
    case 'body':
      trace.body = o.outcome;
      return;
    case 'query': {
      const q = o.outcome;
      trace.query = {
        strategy: q.strategy,
        text: q.text,
        spans: q.spans,
        ...(q.chunkScores ? { chunkScores: q.chunkScores } : {}),
        ...(q.fallbackReason ? { fallbackReason: q.fallbackReason } : {}),
      };
      return;
    }
    case 'retrieve':
      trace.retrieval = retrievalTraceOf(o.outcome);
      return;
    case 'rerank':
      trace.rerank = o.outcome;
      return;
    case 'prompt':
      trace.prompt = promptTraceOf(o.outcome);
      return;
    case 'cut':
      if (o.outcome.junk.length > 0) trace.junk = o.outcome.junk;
      trace.completion = o.outcome.completion;
      return;
    case 'empty':
      trace.empty = o.outcome;
      return;
    case 'similar':
      trace.similar = o.outcome;
      return;
    case 'check':
      trace.check = checkTraceOf(o.outcome);
      return;
    case 'generate':
      if (o.outcome.status === 'answered') trace.model = modelTraceOf(o.outcome);
      else trace.error = { stage: 'generate', kind: o.outcome.kind, message: o.outcome.message };
      return;
    case 'gate': {
      const { text: _text, ...gate } = o.outcome;
      trace.gate = gate;
      return;
    }
    case 'failure':
      trace.error = { ...o.outcome };
      return;
  }
}
