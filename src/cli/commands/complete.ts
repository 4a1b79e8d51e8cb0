// `coderag complete <repo> <file>:<line>[:<col>]`: one completion through the whole pipeline
// (index, probing query, multi-path retrieval, rerank, prompt, model, postprocess), printed with
// its trace. Embedded model unless --provider names a model server.
import { readFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { CliCommand } from '../command';
import { parseCommandArgs, UsageError } from '../command';
import { assetsDir, cacheRoot, modelDevice, parsers, requireRepo } from '../context';
import { indexedKnowledgeBase, indexOptions } from './index';
import { langOfPath } from '../../engine/kb/parsers';
import { ModelRegistry } from '../../engine/models';
import type { CausalLM, Encoder, ModelPlacement } from '../../engine/models';
import { runsOn } from '../../engine/models/device';
import { indexFolderFor } from '../../engine/kb/store';
import { bestFitStage, causalLMProber, codeRagRetrievers, complete, DEFAULT_PIPELINE_OPTIONS, embeddedLMOf, formatTraceMarkdown, multiPathStage, probingQueryBuilder, type PipelineOptions } from '../../engine/pipeline';
import { resolveModelClient, type ModelSettings } from '../../engine/generate/createModelClient';
import { ollamaReranker } from '../../engine/rerank/LlmReranker';
import { RerankerSwitch } from '../../engine/rerank/RerankerSwitch';
import { DEFAULT_RERANKER, loadDistilledReranker } from '../../engine/rerank/DistilledReranker';
import type { RerankerChoice } from '../../engine/rerank/types';
import type { QueryStrategy } from '../../engine/query/types';
import { UserError } from '../../engine/util/errors';

const options = {
  ...indexOptions,
  provider: { type: 'string' },
  model: { type: 'string' },
  'ollama-host': { type: 'string' },
  'openai-url': { type: 'string' },
  reranker: { type: 'string' },
  'rerank-model': { type: 'string' },
  query: { type: 'string' },
  'max-new-tokens': { type: 'string' },
  'budget-tokens': { type: 'string' },
  'timeout-ms': { type: 'string' },
  'no-prompt': { type: 'boolean' },
  'no-dense': { type: 'boolean' },
} as const;

/** `path/to/file.py:12:5` (1-based line and column; the column defaults to the end of the line). */
export function parseLocation(spec: string): { file: string; line: number; column?: number } {
  const m = /^(.*?):(\d+)(?::(\d+))?$/.exec(spec);
  if (!m || !m[1]) throw new UsageError(`expected <file>:<line>[:<col>], got "${spec}"`);
  const line = Number(m[2]);
  const column = m[3] !== undefined ? Number(m[3]) : undefined;
  if (line < 1 || (column !== undefined && column < 1)) throw new UsageError('line and column are 1-based');
  return { file: m[1], line, ...(column !== undefined ? { column } : {}) };
}

/** Offset of a 1-based line and column in `text`; the column defaults to the end of the line. */
export function offsetAt(text: string, line: number, column?: number): number {
  let offset = 0;
  for (let l = 1; l < line; l++) {
    const next = text.indexOf('\n', offset);
    if (next < 0) throw new UserError(`line ${line} is past the end of the file (${l} lines)`);
    offset = next + 1;
  }
  const end = text.indexOf('\n', offset);
  const lineEnd = end < 0 ? text.length : end;
  return column === undefined ? lineEnd : Math.min(offset + column - 1, lineEnd);
}

function positiveInt(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--${name} must be a positive integer`);
  return n;
}

export const completeCommand: CliCommand = {
  name: 'complete',
  usage: 'complete <repo> <file>:<line>[:<col>] [--provider embedded|ollama|openai|auto] [--model M] [--ollama-host URL] [--openai-url URL] [--reranker none|llm|distilled] [--query probe|last10|jaccard] [--no-dense] [--json] [--no-prompt]',
  async run(argv) {
    const { values, positionals } = parseCommandArgs(argv, options);
    if (positionals.length !== 2) throw new UsageError('expected a repository folder and <file>:<line>[:<col>]');
    const repo = requireRepo(positionals[0]);
    const loc = parseLocation(positionals[1] ?? '');
    const abs = isAbsolute(loc.file) ? loc.file : resolve(repo, loc.file);
    const rel = relative(repo, abs).split(sep).join('/');
    if (rel.startsWith('..')) throw new UserError(`${loc.file} is not inside ${repo}`);
    const lang = langOfPath(rel);
    if (!lang) throw new UserError(`${rel}: only Python and Java files are completed`);
    let text: string;
    try {
      text = readFileSync(abs, 'utf8').replace(/\r\n?/g, '\n');
    } catch {
      throw new UserError(`cannot read ${abs}`);
    }
    const offset = offsetAt(text, loc.line, loc.column);

    const provider = (values.provider as string | undefined) ?? 'embedded';
    if (!['embedded', 'ollama', 'openai', 'auto'].includes(provider)) throw new UsageError('--provider must be embedded, ollama, openai or auto');
    const reranker = ((values.reranker as string | undefined) ?? 'none') as RerankerChoice;
    if (!['none', 'llm', 'distilled'].includes(reranker)) throw new UsageError('--reranker must be none, llm or distilled');
    const strategy = ((values.query as string | undefined) ?? 'probe') as QueryStrategy;
    const timeoutMs = positiveInt(values['timeout-ms'], 'timeout-ms') ?? 30_000;

    const { kb } = await indexedKnowledgeBase(repo, values);
    const registry = new ModelRegistry({ modelsDir: join(assetsDir(), 'models'), threads: 2, device: modelDevice() });
    let encoder: Encoder | undefined;
    if (values['no-dense'] !== true) {
      try {
        encoder = await registry.encoder();
      } catch (e) {
        process.stderr.write(`warning: the code encoder did not load (${e instanceof Error ? e.message : String(e)}); dense retrieval is off\n`);
      }
    }
    const paths = codeRagRetrievers(kb, await parsers(), encoder ? { encoder, indexFolder: indexFolderFor(cacheRoot(values['index-dir'] as string | undefined), repo) } : undefined);
    const retrievers = paths.dense ? [...paths.retrievers, paths.dense] : paths.retrievers;
    for (const r of retrievers) await r.prepare?.();

    let lm: CausalLM | undefined;
    try {
      lm = await registry.causalLM();
    } catch (e) {
      process.stderr.write(`warning: the embedded model did not load (${e instanceof Error ? e.message : String(e)}); probing falls back to a model-free query\n`);
    }
    const host = (values['ollama-host'] as string | undefined) ?? 'http://127.0.0.1:11434';
    const settings: ModelSettings = {
      provider: provider as ModelSettings['provider'],
      family: 'auto',
      timeoutMs,
      ollama: { host, completionModel: (values.model as string | undefined) ?? 'qwen2.5-coder:1.5b-base', keepAlive: '30m' },
      openai: { baseUrl: (values['openai-url'] as string | undefined) ?? '', model: (values.model as string | undefined) ?? '', apiKey: process.env.OPENAI_API_KEY ?? '' },
    };
    const signal = new AbortController().signal;
    const resolved = await resolveModelClient(
      settings,
      () => (lm ? Promise.resolve(embeddedLMOf(lm)) : registry.causalLM().then(embeddedLMOf)),
      signal,
    );
    if (resolved.note) process.stderr.write(`${resolved.note}\n`);
    if (resolved.problem) process.stderr.write(`warning: ${resolved.problem.message}\n`);
    const switcher = new RerankerSwitch(reranker, reranker === 'llm' ? { llm: ollamaReranker({ host, model: (values['rerank-model'] as string | undefined) ?? 'qwen3:8b' }) } : {});
    let distilledPlacement: ModelPlacement | undefined;
    if (reranker === 'distilled') {
      try {
        const loaded = await loadDistilledReranker(join(assetsDir(), 'models', DEFAULT_RERANKER), DEFAULT_RERANKER, { threads: 2, device: modelDevice() });
        switcher.register('distilled', loaded.reranker);
        distilledPlacement = loaded.scorer.placement;
      } catch (e) {
        process.stderr.write(`warning: the distilled reranker did not load (${e instanceof Error ? e.message : String(e)}); candidates stay in retrieval order\n`);
      }
    }

    const pipelineOptions: PipelineOptions = {
      ...DEFAULT_PIPELINE_OPTIONS,
      query: { ...DEFAULT_PIPELINE_OPTIONS.query, strategy },
      prompt: { ...DEFAULT_PIPELINE_OPTIONS.prompt, budgetTokens: positiveInt(values['budget-tokens'], 'budget-tokens') ?? DEFAULT_PIPELINE_OPTIONS.prompt.budgetTokens },
      generate: { ...DEFAULT_PIPELINE_OPTIONS.generate, maxNewTokens: positiveInt(values['max-new-tokens'], 'max-new-tokens') ?? DEFAULT_PIPELINE_OPTIONS.generate.maxNewTokens },
    };
    const prober = lm ? causalLMProber(lm) : undefined;
    const result = await complete(
      { filePath: rel, lang, prefix: text.slice(0, offset), suffix: text.slice(offset) },
      { query: probingQueryBuilder(() => prober), retrieval: multiPathStage(() => retrievers), reranker: bestFitStage(switcher), model: () => resolved.client },
      pipelineOptions,
      signal,
    );
    result.trace.models = [...registry.placements().map((p) => runsOn(p.name, p.placement)), ...(distilledPlacement ? [runsOn(DEFAULT_RERANKER, distilledPlacement)] : [])];
    paths.dispose();
    kb.dispose();
    await registry.dispose().catch(() => undefined);

    if (values.json) {
      process.stdout.write(JSON.stringify(result, null, 2) + '\n');
    } else {
      const item = result.items[0];
      process.stdout.write(item ? `Completion at ${rel}:${loc.line}${loc.column ? `:${loc.column}` : ''}:\n${item.text}\n\n` : `No completion at ${rel}:${loc.line} (${result.trace.error ? `${result.trace.error.stage}: ${result.trace.error.message}` : 'empty after postprocessing'})\n\n`);
      process.stdout.write(formatTraceMarkdown(result.trace, { includePrompt: values['no-prompt'] !== true }) + '\n');
    }
    return result.items.length > 0 ? 0 : 1;
  },
};
