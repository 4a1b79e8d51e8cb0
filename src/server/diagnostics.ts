// What the server reports of its own health (coderag/getStatus and coderag/memory): the process's
// memory and how late its event loop ran since the last look.
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

/** The process's memory in MB (coderag/getStatus and coderag/memory). */
export function memoryMB(): { rssMB: number; heapUsedMB: number; heapTotalMB: number; externalMB: number; arrayBuffersMB: number } {
  const m = process.memoryUsage();
  const mb = (n: number): number => Math.round(n / 2 ** 20);
  return {
    rssMB: mb(m.rss),
    heapUsedMB: mb(m.heapUsed),
    heapTotalMB: mb(m.heapTotal),
    externalMB: mb(m.external),
    arrayBuffersMB: mb(m.arrayBuffers),
  };
}

/** How late the event loop runs (a blocked loop delays every request), in windows that end at each take(). */
export class LoopDelay {
  private readonly histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });
  private windowStart = performance.now();

  enable(): void {
    this.histogram.enable();
  }

  disable(): void {
    this.histogram.disable();
  }

  /** Event-loop delay since the previous call (the histogram counts in nanoseconds). */
  take(): { max: number; p99: number; mean: number; windowMs: number } {
    const h = this.histogram;
    const ms = (ns: number): number => Math.round(ns / 1e4) / 100;
    const now = performance.now();
    const view =
      h.count > 0
        ? { max: ms(h.max), p99: ms(h.percentile(99)), mean: ms(h.mean), windowMs: Math.round(now - this.windowStart) }
        : { max: 0, p99: 0, mean: 0, windowMs: Math.round(now - this.windowStart) };
    h.reset();
    this.windowStart = now;
    return view;
  }
}
