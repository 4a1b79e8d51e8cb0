// `coderag rerank <repo> <file>:<line>[:<col>]`: multi-path retrieval for one cursor, then BestFit
// reranking (CodeRAG section 2.3) with the LLM reranker (Ollama or an OpenAI-compatible server)
// or the distilled reranker; prints the candidates before and after, every reranker call, the time.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { CliCommand } from '../command';
import { parseCommandArgs, UsageError } from '../command';
import { assetsDir, modelDevice, parsers, requireRepo } from '../context';
import { indexedKnowledgeBase, indexOptions } from './index';
import { parseCursor, parsePaths } from './retrieve';
import { langOfPath } from '../../engine/kb/parsers';
import { buildQuery } from '../../engine/query/buildQuery';
import type { QueryStrategy } from '../../engine/query/types';
import { prefixAt, type UnfinishedFile } from '../../engine/query/unfinishedFile';
import { DataflowRetriever } from '../../engine/retrieve/dataflow/dataflowRetrieve';
import { multiPathRetrieve } from '../../engine/retrieve/multiPathRetrieve';
import { Rg1Retriever } from '../../engine/retrieve/rg1/rg1Retrieve';
import { SparseRetriever } from '../../engine/retrieve/sparse/sparseRetrieve';
import type { Retriever } from '../../engine/retrieve/types';
import { bestFitRerank } from '../../engine/rerank/bestFitRerank';
import { buildRerankQuery, labelOf } from '../../engine/rerank/bestFitPrompt';
import { candidateDocs } from '../../engine/rerank/rerankStage';
import { DEFAULT_RERANK_MODEL, ollamaReranker, openAiReranker } from '../../engine/rerank/LlmReranker';
import { DEFAULT_RERANKER, loadDistilledReranker } from '../../engine/rerank/DistilledReranker';
import type { Reranker, RerankerChoice, RerankTrace } from '../../engine/rerank/types';
import { UserError } from '../../engine/util/errors';

const CHOICES: readonly RerankerChoice[] = ['llm', 'distilled', 'none'];
const QUERIES: readonly QueryStrategy[] = ['last3', 'last10', 'jaccard'];

function repoRelative(repo: string, file: string): string {
  for (const abs of isAbsolute(file) ? [file] : [join(repo, file), resolve(file)]) {
    if (existsSync(abs) && statSync(abs).isFile()) {
      const rel = relative(repo, abs).split('\\').join('/');
      if (rel.startsWith('..')) throw new UserError(`${file} is not inside the repository ${repo}`);
      return rel;
    }
  }
  throw new UserError(`file not found: ${file}`);
}

function positiveInt(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${name} must be a positive integer`);
  return n;
}

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
    'rerank <repo> <file>:<line>[:<col>] [--reranker llm|distilled|none (default: llm with --ollama/--openai, else distilled)] [--ollama URL | --openai URL] [--model NAME] [--reranker-model DIR] [--top-u N] [--timeout-ms N] [--paths s,df,rg1] [--query last3|last10|jaccard] [--top-j N] [--json] [--index-dir DIR]',
  async run(argv) {
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
    const choice = ((values.reranker as string | undefined) ?? (values.ollama !== undefined || values.openai !== undefined ? 'llm' : 'distilled')) as RerankerChoice;
    if (!CHOICES.includes(choice)) throw new UsageError(`--reranker must be one of ${CHOICES.join(', ')}`);
    if (values.ollama && values.openai) throw new UsageError('give either --ollama or --openai, not both');
    const strategy = ((values.query as string | undefined) ?? 'jaccard') as QueryStrategy;
    if (!QUERIES.includes(strategy)) throw new UsageError(`--query must be one of ${QUERIES.join(', ')}`);
    const topU = positiveInt(values['top-u'], '--top-u', 10);
    const topJ = positiveInt(values['top-j'], '--top-j', 15);
    const timeoutMs = positiveInt(values['timeout-ms'], '--timeout-ms', 10_000);
    const paths = parsePaths((values.paths as string | undefined) ?? 's,df');
    if (paths.includes('dense')) throw new UserError('dense retrieval: use --paths s,df,rg1 until the code encoder is wired into the CLI');
    const repo = requireRepo(positionals[0]);
    const cursor = parseCursor(positionals[1]!);
    const path = repoRelative(repo, cursor.file);
    const lang = langOfPath(path);
    if (!lang) throw new UserError(`${path} is not a Python or Java file`);
    const file: UnfinishedFile = { path, lang, prefix: prefixAt(readFileSync(join(repo, path), 'utf8'), cursor.line, cursor.column) };

    let reranker: Reranker | undefined;
    let dispose: (() => Promise<void>) | undefined;
    const model = (values.model as string | undefined) ?? DEFAULT_RERANK_MODEL;
    if (choice === 'llm') {
      reranker = values.openai
        ? openAiReranker({ baseUrl: values.openai as string, model, timeoutMs })
        : ollamaReranker({ host: (values.ollama as string | undefined) ?? process.env.OLLAMA_HOST ?? 'http://127.0.0.1:11434', model, timeoutMs });
    } else if (choice === 'distilled') {
      const dir = resolve((values['reranker-model'] as string | undefined) ?? join(assetsDir(), 'models', DEFAULT_RERANKER));
      if (!existsSync(dir)) throw new UserError(`distilled reranker model not found at ${dir} (give --reranker-model DIR, or use --reranker llm)`);
      const loaded = await loadDistilledReranker(dir, DEFAULT_RERANKER, { device: modelDevice() });
      reranker = loaded.reranker;
      dispose = () => loaded.scorer.dispose();
    }

    const timings: Record<string, number> = {};
    let t = performance.now();
    const { kb } = await indexedKnowledgeBase(repo, values);
    timings.index = performance.now() - t;
    const retrievers: Array<Retriever & { dispose(): void }> = [];
    for (const p of paths) {
      if (p === 'sparse') retrievers.push(new SparseRetriever(kb));
      else if (p === 'dataflow') retrievers.push(new DataflowRetriever(kb, await parsers()));
      else if (p === 'rg1') retrievers.push(new Rg1Retriever(kb));
    }
    try {
      t = performance.now();
      for (const r of retrievers) await r.prepare?.();
      timings.prepare = performance.now() - t;
      const query = await buildQuery(file.prefix, { strategy });
      const retrieval = await multiPathRetrieve(retrievers, { file, query, topJ });
      timings.retrieve = retrieval.elapsedMs;
      const docs = candidateDocs(retrieval.candidates);
      const rerankQuery = buildRerankQuery(file.path, file.prefix);
      const result = await bestFitRerank(rerankQuery, docs, reranker, { topU });
      timings.rerank = result.trace.elapsedMs;
      const byId = new Map(docs.map((d, i) => [d.id, { doc: d, rank: i + 1 }]));
      const describe = (id: string): string => {
        const entry = byId.get(id);
        const s = entry?.doc.candidate.snippet;
        return s ? `${s.kind.padEnd(14)} ${s.path}:${s.range.startLine + 1}  ${s.qualifiedName}` : id;
      };
      if (values.json) {
        const json = { repo, file: path, cursor, reranker: result.trace.reranker, before: result.trace.before, after: result.trace.after, calls: result.trace.calls, rerankerCalls: result.trace.rerankerCalls, degraded: result.trace.degraded, timings };
        process.stdout.write(JSON.stringify(json, null, 2) + '\n');
      } else {
        const out: string[] = [];
        out.push(`Rerank query for ${file.path}:`, ...rerankQuery.text.split('\n').slice(-6).map((l) => `  | ${l}`));
        out.push('', `Candidates in retrieval order (${docs.length}):`);
        docs.forEach((d, i) => out.push(`  ${String(i + 1).padStart(2)}. ${describe(d.id)}`));
        out.push('', `After BestFit reranking with ${result.trace.reranker} (top ${result.top.length}):`);
        result.top.forEach((d, i) => out.push(`  ${String(i + 1).padStart(2)}. ${describe(d.id)}   (was ${byId.get(d.id)?.rank ?? '?'})`));
        out.push('', `Reranker calls: ${result.trace.rerankerCalls} of ${result.trace.calls.length} windows`);
        out.push(...formatCalls(result.trace, (id) => String(byId.get(id)?.rank ?? id)));
        if (result.trace.degraded) out.push(`  note: ${result.trace.degraded}`);
        out.push('', `Timings: ${Object.entries(timings).map(([k, v]) => `${k} ${fmtMs(v)}`).join(', ')}`);
        process.stdout.write(out.join('\n') + '\n');
      }
    } finally {
      for (const r of retrievers) r.dispose();
      kb.dispose();
      await dispose?.();
    }
    return 0;
  },
};
