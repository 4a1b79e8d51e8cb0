// Shared by the mining tests: mine a fixture repository and summarise its cases for comparison
// with the expected task lists written beside the fixtures.
import { KnowledgeBase } from '../../src/engine/kb/KnowledgeBase';
import { loadParsers, type Parsers } from '../../src/engine/kb/parsers';
import type { Lang } from '../../src/engine/kb/types';
import type { BenchCase } from '../../src/bench/cases';
import { mineRepository, type MineTask, type RepoMineResult } from '../../src/bench/mine';
import { grammarsDir } from '../helpers/paths';

let parsersPromise: Promise<Parsers> | undefined;
export const parsers = (): Promise<Parsers> => (parsersPromise ??= loadParsers(grammarsDir));

export async function mineFixture(
  repoRoot: string,
  name: string,
  lang: Lang,
  task: MineTask,
  perRepo = 1_000_000,
  seed: string | number = 1,
): Promise<RepoMineResult> {
  const p = await parsers();
  const kb = await KnowledgeBase.open({ repoRoot, parsers: p });
  await kb.index(undefined, new AbortController().signal);
  try {
    return await mineRepository(kb, p, name, { lang, task, perRepo, seed });
  } finally {
    kb.dispose();
  }
}

export interface CaseSummary {
  task_id: string;
  file: string;
  /** 0-based first row of the ground truth. */
  line: number;
  /** Line cases: the target line, trimmed. */
  groundtruth?: string;
  /** Body cases: `Class.method` or `function`, and the body's last row. */
  function?: string;
  last_line?: number;
  defs: string[];
}

export function summarize(c: BenchCase, task: MineTask): CaseSummary {
  const m = c.metadata;
  const line = m.groundtruth_start_lineno ?? -1;
  const s: CaseSummary = {
    task_id: m.task_id,
    file: m.file,
    line,
    defs: (m.crossfile_defs ?? []).map((d) => `${d.kind} ${d.name} ${d.file}:${d.line}`),
  };
  if (task === 'line') s.groundtruth = c.groundtruth.trim();
  else {
    s.function = m.class_name ? `${m.class_name}.${m.function_name ?? ''}` : (m.function_name ?? '');
    s.last_line = line + c.groundtruth.split('\n').length - 1;
  }
  return s;
}
