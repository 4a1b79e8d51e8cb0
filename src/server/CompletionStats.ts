// The completion feature's figures for the status (getStatus's stats): requests, typing-through
// cache hits, and the server's own time per request and per cache hit over the latest samples.
import type { LatestWinsSlot } from '../engine/generate/modelSlot';
import type { StatusReporter } from './StatusReporter';

const OVERHEAD_SAMPLES = 500;

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

function record(samples: number[], ms: number): void {
  samples.push(ms);
  if (samples.length > OVERHEAD_SAMPLES) samples.shift();
}

function summary(samples: readonly number[]): { median: number; p95: number; samples: number } | undefined {
  if (samples.length === 0) return undefined;
  const sorted = [...samples].sort((a, b) => a - b);
  return { median: quantile(sorted, 0.5), p95: quantile(sorted, 0.95), samples: sorted.length };
}

export class CompletionStats {
  private count = 0;
  private cacheHits = 0;
  private readonly overheads: number[] = [];
  private readonly cacheHitTimes: number[] = [];

  /** `modelSlot`: the completion model's slot, whose calls the stats count. */
  constructor(
    private readonly status: StatusReporter,
    private readonly modelSlot: Pick<LatestWinsSlot, 'calls' | 'maxInFlight'>,
  ) {}

  /** Inline-completion requests received (a request arriving changes it: settling reads it). */
  get requests(): number {
    return this.count;
  }

  request(): void {
    this.count++;
  }

  /** A request answered from the typing-through cache in `ms`. */
  cacheHit(ms: number): void {
    this.cacheHits++;
    record(this.cacheHitTimes, ms);
  }

  /** The server's own time in a request that ran the pipeline. */
  overhead(ms: number): void {
    record(this.overheads, ms);
  }

  publish(): void {
    const overheadMs = summary(this.overheads);
    const cacheHitMs = summary(this.cacheHitTimes);
    this.status.update({
      stats: {
        requests: this.count,
        cacheHits: this.cacheHits,
        modelCalls: this.modelSlot.calls,
        maxModelInFlight: this.modelSlot.maxInFlight,
        ...(overheadMs ? { overheadMs } : {}),
        ...(cacheHitMs ? { cacheHitMs } : {}),
      },
    });
  }
}
