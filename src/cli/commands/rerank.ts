// `coderag rerank <repo> <file>:<line>[:<col>]`: multi-path retrieval for one cursor, then BestFit
// reranking (CodeRAG section 2.3) with the LLM reranker (Ollama or an OpenAI-compatible server)
// or the distilled reranker; prints the candidates before and after, every reranker call, the time.
import { showControlChars, terminalJson } from '../../engine/util/outsideText';
import { join } from 'node:path';
import type { CliCommand } from '../command';
import { parseCommandArgs, positiveInt, UsageError } from '../command';
import { readCursorFile, requireRepo } from '../context';
import { openRerankers, preparedPaths } from '../pipelineHost';
import { indexedKnowledgeBase, indexOptions } from './index';
import { parseCursor, parsePaths, prefixAtCursor, repoRelative } from './retrieve';
import { langOfPath } from '../../engine/kb/parsers';
import type { QueryStrategy } from '../../engine/query/types';
import type { UnfinishedFile } from '../../engine/query/unfinishedFile';
import { buildRerankQuery, labelOf } from '../../engine/rerank/bestFitPrompt';
import { candidateDocs } from '../../engine/rerank/rerankCandidates';
import type { RerankerChoice, RerankTrace } from '../../engine/rerank/types';
import { createPipeline, rerankerNow, resolveOptions } from '../../engine/pipeline';
import { UserError } from '../../engine/util/errors';

const CHOICES: readonly RerankerChoice[] = ['llm', 'distilled', 'none'];
const QUERIES: readonly QueryStrategy[] = ['last3', 'last10', 'jaccard'];

function fmtMs(ms: number): string {
  return `${ms.toFixed(ms < 10 ? 2 : 1)} ms`;
}

function formatCalls(trace: RerankTrace, label: (id: string) => string): string[] {
  return trace.calls.map((c, i) => {
    const window = c.window.map((id, k) => `${labelOf(k)}=${label(id)}`).join(' ');
    const picked = c.status === 'ok' ? `-> [${labelOf(c.picked)}]` : `-> [A] (${c.status}: ${c.reason ?? ''})`;
    const scores = c.scores ? `  scores ${c.scores.map((s) => s.toFixed(3)).join(' ')}` : '';
    return `  ${String(i + 1).padStart(2)}. ${window}  ${picked}  ${fmtMs(c.elapsedMs)}${scores}`;
  });
}

export const rerankCommand: CliCommand = {
  name: 'rerank',
  usage:
    'rerank <repo> <file>:<line>[:<col>] [--reranker llm|distilled|none (default: llm with --ollama/--openai, else ' +
    'distilled)] [--ollama URL | --openai URL] [--model NAME] [--reranker-model DIR] [--top-u N] [--timeout-ms N] ' +
    '[--paths s,df,rg1] [--query last3|last10|jaccard] [--top-j N] [--json] [--index-dir DIR]',
  async run(argv, signal) {
    const { values, positionals } = parseCommandArgs(argv, {
      ...indexOptions,
      reranker: { type: 'string' },
      ollama: { type: 'string' },
      openai: { type: 'string' },
      model: { type: 'string' },
      'reranker-model': { type: 'string' },
      'top-u': { type: 'string' },
      'timeout-ms': { type: 'string' },
      paths: { type: 'string' },
      query: { type: 'string' },
      'top-j': { type: 'string' },
    });
    if (positionals.length !== 2) throw new UsageError('expected a repository folder and <file>:<line>[:<col>]');
    // Without --reranker: the LLM when a server is named, else the distilled model (the extension's default).
    const choice = ((values.reranker as string | undefined) ??
      (values.ollama !== undefined || values.openai !== undefined ? 'llm' : 'distilled')) as RerankerChoice;
    if (!CHOICES.includes(choice)) throw new UsageError(`--reranker must be one of ${CHOICES.join(', ')}`);
    if (values.ollama && values.openai) throw new UsageError('give either --ollama or --openai, not both');
    const strategy = ((values.query as string | undefined) ?? 'jaccard') as QueryStrategy;
    if (!QUERIES.includes(strategy)) throw new UsageError(`--query must be one of ${QUERIES.join(', ')}`);
    const topU = positiveInt(values, 'top-u', 10);
    const topJ = positiveInt(values, 'top-j', 15);
    const timeoutMs = positiveInt(values, 'timeout-ms', 10_000);
    const paths = parsePaths((values.paths as string | undefined) ?? 's,df');
    if (paths.includes('dense')) throw new UserError('dense retrieval: use --paths s,df,rg1 until the code encoder is wired into the CLI');
    const repo = requireRepo(positionals[0]);
    const cursor = parseCursor(positionals[1]!);
    const path = repoRelative(repo, cursor.file);
    const lang = langOfPath(path);
    if (!lang) throw new UserError(`${path} is not a Python or Java file`);
    const file: UnfinishedFile = { path, lang, prefix: prefixAtCursor(await readCursorFile(join(repo, path)), cursor) };

    const rerankers = await openRerankers({
      choice,
      timeoutMs,
      ...(values.model ? { model: values.model as string } : {}),
      ...(values.openai
        ? { openaiUrl: values.openai as string }
        : { ollamaHost: (values.ollama as string | undefined) ?? process.env.OLLAMA_HOST }),
      ...(values['reranker-model'] ? { distilledDir: values['reranker-model'] as string } : {}),
    });

    const timings: Record<string, number> = {};
    let t = performance.now();
    const { kb } = await indexedKnowledgeBase(repo, values, signal);
    timings.index = performance.now() - t;
    const prepared = await preparedPaths(kb, repo, paths, undefined, undefined, signal).catch(async (e: unknown) => {
      kb.dispose();
      await rerankers.dispose();
      throw e;
    });
    try {
      timings.prepare = Object.values(prepared.prepareMs).reduce((a, b) => a + b, 0);
      const retrievers = [...prepared.paths.byName.values()];
      const reranker = rerankerNow(rerankers.switcher);
      // Retrieval then BestFit reranking, no model; each reranker call has its own time limit, the stage none.
      const pipeline = createPipeline(
        resolveOptions({ query: { strategy }, retrieval: { topJ }, rerank: { topU, timeoutMs: 3_600_000 } }),
        { env: { repo: { retrievers }, ...(reranker ? { reranker } : {}) } },
      );
      const completed = await pipeline.complete({ filePath: file.path, lang: file.lang, prefix: file.prefix, suffix: '' }, signal);
      const candidates = completed.retrieval?.candidates ?? [];
      timings.retrieve = completed.retrieval?.elapsedMs ?? 0;
      const docs = candidateDocs(candidates);
      const rerankQuery = buildRerankQuery(file.path, file.prefix);
      const top = completed.contexts;
      const trace: RerankTrace = completed.rerank?.detail ?? {
        reranker: 'none',
        before: docs.map((d) => d.id),
        after: top.map((c) => c.snippet.id),
        calls: [],
        rerankerCalls: 0,
        elapsedMs: 0,
      };
      const result = { trace, top: top.map((c) => ({ id: c.snippet.id })) };
      timings.rerank = trace.elapsedMs;
      const byId = new Map(docs.map((d, i) => [d.id, { doc: d, rank: i + 1 }]));
      const describe = (id: string): string => {
        const entry = byId.get(id);
        const s = entry?.doc.candidate.snippet;
        return s ? `${s.kind.padEnd(14)} ${s.path}:${s.range.startLine + 1}  ${s.qualifiedName}` : id;
      };
      if (values.json) {
        const json = {
          repo,
          file: path,
          cursor,
          reranker: result.trace.reranker,
          before: result.trace.before,
          after: result.trace.after,
          calls: result.trace.calls,
          rerankerCalls: result.trace.rerankerCalls,
          degraded: result.trace.degraded,
          timings,
        };
        process.stdout.write(terminalJson(json) + '\n');
      } else {
        const out: string[] = [];
        out.push(
          `Rerank query for ${file.path}:`,
          ...rerankQuery.text
            .split('\n')
            .slice(-6)
            .map((l) => `  | ${l}`),
        );
        out.push('', `Candidates in retrieval order (${docs.length}):`);
        docs.forEach((d, i) => out.push(`  ${String(i + 1).padStart(2)}. ${describe(d.id)}`));
        out.push('', `After BestFit reranking with ${result.trace.reranker} (top ${result.top.length}):`);
        result.top.forEach((d, i) => out.push(`  ${String(i + 1).padStart(2)}. ${describe(d.id)}   (was ${byId.get(d.id)?.rank ?? '?'})`));
        out.push('', `Reranker calls: ${result.trace.rerankerCalls} of ${result.trace.calls.length} windows`);
        out.push(...formatCalls(result.trace, (id) => String(byId.get(id)?.rank ?? id)));
        if (result.trace.degraded) out.push(`  note: ${result.trace.degraded}`);
        out.push(
          '',
          `Timings: ${Object.entries(timings)
            .map(([k, v]) => `${k} ${fmtMs(v)}`)
            .join(', ')}`,
        );
        process.stdout.write(showControlChars(out.join('\n') + '\n'));
      }
    } finally {
      prepared.paths.dispose();
      kb.dispose();
      await rerankers.dispose();
    }
    return 0;
  },
};
