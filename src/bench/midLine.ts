// Mid-line variants of line-completion cases: the cursor moved into the ground-truth line, inside
// the first repository name it uses (`filename = ModuleLoader.get_mod|`). The mined cases put the
// cursor at the start of a line, but users mostly ask for a completion while typing; the
// distilled reranker learns its half-typed-line features (the name being typed, its class on the
// line) only from cases like these.
import type { BenchCase } from './cases';

/**
 * For each line case whose ground truth uses one of its cross-file definitions, a case with the
 * cursor after half of that name's first occurrence (at least one character typed), task id
 * `<id>/mid`. Cases without such a use are left out.
 */
export function midLineCases(cases: readonly BenchCase[]): BenchCase[] {
  const out: BenchCase[] = [];
  for (const c of cases) {
    const cut = midLineCut(c);
    if (cut === undefined) continue;
    out.push({
      ...c,
      prompt: c.prompt + c.groundtruth.slice(0, cut),
      groundtruth: c.groundtruth.slice(cut),
      metadata: { ...c.metadata, task_id: `${c.metadata.task_id}/mid` },
    });
  }
  return out;
}

/** Where the cursor goes in the ground truth: half-way into the first cross-file name it uses. */
function midLineCut(c: BenchCase): number | undefined {
  const line = c.groundtruth.split('\n', 1)[0] ?? '';
  let best: { at: number; length: number } | undefined;
  for (const def of c.metadata.crossfile_defs ?? []) {
    const m = new RegExp(`(?<![\\p{L}\\p{N}_$])${def.name.replace(/[$]/g, '\\$')}(?![\\p{L}\\p{N}_$])`, 'u').exec(line);
    if (m && (best === undefined || m.index < best.at)) best = { at: m.index, length: def.name.length };
  }
  if (!best) return undefined;
  return best.at + Math.max(1, Math.floor(best.length / 2));
}
