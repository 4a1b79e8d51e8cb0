// `coderag complete <repo> <file>:<line>[:<col>]`: one completion through the whole pipeline
// (index, probing query, multi-path retrieval, rerank, prompt, model, postprocess), printed with
// its trace. Embedded model unless --provider names a model server.
import { basename, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { CliCommand } from '../command';
import { parseCommandArgs, positiveInt, UsageError } from '../command';
import { parsers, readCursorFile, requireRepo } from '../context';
import { openModels, openRerankers, preparedPaths } from '../pipelineHost';
import { indexedKnowledgeBase, indexOptions, parseMaxBytes } from './index';
import { documentAround } from '../../engine/kb/documentWindow';
import { DEFAULT_MAX_FILE_BYTES, isOutsideRelative } from '../../engine/kb/scan';
import { langOfPath } from '../../engine/kb/parsers';
import {
  autoRouter,
  bodyMode,
  CHECK_MODES,
  createPipeline,
  formatTraceMarkdown,
  LINE_MODE,
  MODEL_DEFAULTS,
  PIPELINE_DEFAULTS,
  rerankerNow,
  resolveOptions,
  similarModeFor,
  type BodyModeDeps,
  type CompletionMode,
  type Router,
} from '../../engine/pipeline';
import { causalLMProber, embeddedLMOf } from '../../engine/index/pipelineAdapters';
import { resolveModelClient, type ModelSettings } from '../../engine/generate/createModelClient';
import type { RerankerChoice } from '../../engine/rerank/types';
import type { QueryStrategy } from '../../engine/query/types';
import { UserError } from '../../engine/util/errors';
import { clampToCharBoundary, engineText } from '../../engine/util/documentText';
import { apiKeyProblem } from '../../protocol/protocol';
import { runsOn } from '../../engine/models/device';
import type { CheckMode } from '../../engine/pipeline';
import { DEFAULT_RERANKER } from '../../engine/rerank/DistilledReranker';
import { stripControlChars } from '../../engine/generate/postprocess/controlChars';
import { showControlChars, terminalJson } from '../../engine/util/outsideText';
import { readRegularFile } from '../../engine/util/safeFile';
import { createSimilarBandit } from '../../engine/similar/bandit';
import type { LinUcb } from '../../engine/similar/linUcb';
import { readsWordSets, SIMILAR_MODES, type SimilarMode } from '../../engine/similar/chooseWindows';
import { DEFAULT_SHOW_LEVEL, gateOptionsOf, SHOW_LEVELS, type ShowLevel } from '../../engine/gate/levels';
import type { SimilarArm } from '../../engine/similar/types';

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
  mode: { type: 'string' },
  check: { type: 'string' },
  similar: { type: 'string' },
  show: { type: 'string' },
  'bandit-state': { type: 'string' },
} as const;

/** A saved bandit state is a few KiB; a larger --bandit-state file is not one. */
const MAX_BANDIT_STATE_BYTES = 1024 * 1024;

/** `path/to/file.py:12:5` (1-based line and column; the column defaults to the end of the line). */
function parseLocation(spec: string): { file: string; line: number; column?: number } {
  const m = /^(.*?):(\d+)(?::(\d+))?$/.exec(spec);
  if (!m || !m[1]) throw new UsageError(`expected <file>:<line>[:<col>], got "${spec}"`);
  const line = Number(m[2]);
  const column = m[3] !== undefined ? Number(m[3]) : undefined;
  if (line < 1 || (column !== undefined && column < 1)) throw new UsageError('line and column are 1-based');
  return { file: m[1], line, ...(column !== undefined ? { column } : {}) };
}

/** Offset of a 1-based line and column in `text`; the column defaults to the end of the line. */
function offsetAt(text: string, line: number, column?: number): number {
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

/** `stage: message`, once: a model client's message already names its operation (`generate: ...`). */
function stageMessage(error: { stage: string; message: string }): string {
  return error.message.startsWith(`${error.stage}:`) ? error.message : `${error.stage}: ${error.message}`;
}

export const completeCommand: CliCommand = {
  name: 'complete',
  usage:
    'complete <repo> <file>:<line>[:<col>] [--provider embedded|ollama|openai|auto] [--model M] [--ollama-host URL] ' +
    '[--openai-url URL] [--reranker none|llm|distilled] [--query probe|last10|jaccard] [--mode auto|line|body] ' +
    '[--no-dense] [--check constrain|repair|off] [--similar auto|off|bandit|union|lexical|hypothetical|summary] ' +
    '[--bandit-state FILE] [--show fewer-but-better|balanced|more|all] [--json] [--no-prompt]',
  async run(argv, signal) {
    const { values, positionals } = parseCommandArgs(argv, options);
    if (positionals.length !== 2) throw new UsageError('expected a repository folder and <file>:<line>[:<col>]');
    const repo = requireRepo(positionals[0]);
    const loc = parseLocation(positionals[1] ?? '');
    const abs = isAbsolute(loc.file) ? loc.file : resolve(repo, loc.file);
    const rel = relative(repo, abs).split(sep).join('/');
    if (isOutsideRelative(rel)) throw new UserError(`${loc.file} is not inside ${repo}`);
    const lang = langOfPath(rel);
    if (!lang) throw new UserError(`${rel}: only Python and Java files are completed`);
    // The engine's view of the file, as the language server makes it of an open document: LF line
    // breaks, the cursor on a character boundary, and past the limits a window around the cursor.
    const text = engineText(await readCursorFile(abs), 0).text;
    const offset = clampToCharBoundary(text, offsetAt(text, loc.line, loc.column));
    const view = documentAround(text, offset, { maxBytes: parseMaxBytes(values['max-file-bytes']) ?? DEFAULT_MAX_FILE_BYTES });
    if (view.windowed)
      process.stderr.write(`note: ${rel} is over the document limits (${view.windowed}); completing from a window around the cursor\n`);

    const provider = (values.provider as string | undefined) ?? 'embedded';
    if (!['embedded', 'ollama', 'openai', 'auto'].includes(provider))
      throw new UsageError('--provider must be embedded, ollama, openai or auto');
    const reranker = ((values.reranker as string | undefined) ?? 'none') as RerankerChoice;
    if (!['none', 'llm', 'distilled'].includes(reranker)) throw new UsageError('--reranker must be none, llm or distilled');
    const strategy = ((values.query as string | undefined) ?? PIPELINE_DEFAULTS.query.strategy) as QueryStrategy;
    if (!['probe', 'last3', 'last10', 'jaccard'].includes(strategy))
      throw new UsageError('--query must be probe, last3, last10 or jaccard');
    const modeName = (values.mode as string | undefined) ?? 'auto';
    if (!['auto', 'line', 'body'].includes(modeName)) throw new UsageError('--mode must be auto, line or body');
    const check = ((values.check as string | undefined) ?? 'constrain') as CheckMode;
    if (!CHECK_MODES.includes(check)) throw new UsageError(`--check must be ${CHECK_MODES.join(', ')}`);
    const show = ((values.show as string | undefined) ?? DEFAULT_SHOW_LEVEL) as ShowLevel;
    if (!SHOW_LEVELS.includes(show)) throw new UsageError(`--show must be ${SHOW_LEVELS.join(', ')}`);
    const similarMode = ((values.similar as string | undefined) ?? 'off') as SimilarMode;
    if (!SIMILAR_MODES.includes(similarMode)) throw new UsageError(`--similar must be ${SIMILAR_MODES.join(', ')}`);
    let bandit: LinUcb<SimilarArm> | undefined;
    const banditFile = values['bandit-state'] as string | undefined;
    if (banditFile) {
      const made = createSimilarBandit(JSON.parse((await readRegularFile(banditFile, MAX_BANDIT_STATE_BYTES)).toString('utf8')) as unknown);
      if (made.error) process.stderr.write(`warning: --bandit-state not used (${made.error}); a fresh bandit chooses\n`);
      bandit = made.bandit;
    }
    const timeoutMs = positiveInt(values, 'timeout-ms', 30_000);
    // One request from a terminal, not a keystroke: each path gets a generous budget (the editor's are tight).
    const settings = resolveOptions({
      query: { strategy },
      retrieval: { budgetsMs: { sparse: 2000, dense: 2000, dataflow: 2000 } },
      prompt: { budgetTokens: positiveInt(values, 'budget-tokens') },
      generate: { maxNewTokens: positiveInt(values, 'max-new-tokens') },
      check: { mode: check },
      similar: { mode: similarMode, budgetsMs: { lexical: 2000, hypothetical: 5000, summary: 2000 } },
      gate: gateOptionsOf(show),
    });

    const { kb } = await indexedKnowledgeBase(repo, values, signal);
    const warn = (m: string): boolean => process.stderr.write(`warning: ${m}\n`);
    const models = await openModels({ lm: true, encoder: values['no-dense'] !== true }, warn, signal);
    const host = (values['ollama-host'] as string | undefined) ?? MODEL_DEFAULTS.ollamaHost;
    const rerankers = await openRerankers({
      choice: reranker,
      ollamaHost: host,
      ...(values['rerank-model'] ? { model: values['rerank-model'] as string } : {}),
    }).catch((e: unknown) => {
      if (e instanceof UserError) warn(`${e.message}; candidates stay in retrieval order`);
      else throw e;
      return undefined;
    });
    const apiKey = process.env.OPENAI_API_KEY ?? '';
    const keyProblem = apiKeyProblem(apiKey);
    if (keyProblem) throw new UserError(`OPENAI_API_KEY: ${keyProblem}`);
    const modelSettings: ModelSettings = {
      provider: provider as ModelSettings['provider'],
      family: 'auto',
      timeoutMs,
      ollama: {
        host,
        completionModel: (values.model as string | undefined) ?? MODEL_DEFAULTS.completionModel,
        keepAlive: MODEL_DEFAULTS.keepAlive,
      },
      openai: { baseUrl: (values['openai-url'] as string | undefined) ?? '', model: (values.model as string | undefined) ?? '', apiKey },
      // The CLI has no local model of its own: `local` falls back to the embedded model, with a note.
      local: { modelPath: '' },
    };
    const lm = models.lm;
    const resolved = await resolveModelClient(
      modelSettings,
      () => (lm ? Promise.resolve(embeddedLMOf(lm)) : models.registry.causalLM(undefined, signal).then(embeddedLMOf)),
      signal,
    );
    if (resolved.note) process.stderr.write(`${resolved.note}\n`);
    if (resolved.problem) warn(resolved.problem.message);
    const lmForLine = models.lm;
    const { paths } = await preparedPaths(
      kb,
      repo,
      ['sparse', 'dataflow', 'dense'],
      models.encoder,
      values['index-dir'] as string | undefined,
      signal,
      // `auto` wants windows only where the model that answers is the in-process one, for Java.
      similarModeFor(similarMode, lang, resolved.client?.backend) === 'off'
        ? undefined
        : {
            wordSets: readsWordSets(similarMode),
            ...(lmForLine
              ? { nextLine: (prompt: string, maxNewTokens: number, s: AbortSignal) => lmForLine.generate(prompt, { maxNewTokens }, s) }
              : {}),
          },
      lm ? (t) => lm.encode(t) : undefined,
    );
    try {
      const prober = lm ? causalLMProber(lm) : undefined;
      const retrievers = [...paths.byName.values()];
      // The body mode (Rambo) reads the repository's methods; auto picks it inside an empty method body.
      const repoMethods = modeName === 'line' ? undefined : paths.methods;
      const bodyDeps: BodyModeDeps | undefined = repoMethods
        ? { parsers: await parsers(), ...(lm ? { tokenize: (t: string) => lm.encode(t) } : {}) }
        : undefined;
      const reranker = rerankers ? rerankerNow(rerankers.switcher) : undefined;
      const route: Router | CompletionMode = !bodyDeps ? LINE_MODE : modeName === 'body' ? bodyMode(bodyDeps) : autoRouter(bodyDeps);
      const pipeline = createPipeline(
        settings,
        {
          env: {
            repo: {
              retrievers,
              receivers: paths.receivers,
              ...(paths.similar ? { similar: paths.similar } : {}),
              ...(repoMethods ? { methods: repoMethods } : {}),
            },
            ...(prober ? { prober } : {}),
            ...(resolved.client ? { model: resolved.client } : {}),
            ...(bandit ? { bandit } : {}),
            ...(reranker ? { reranker } : {}),
          },
        },
        route,
      );
      const result = await pipeline.complete(
        { filePath: rel, lang, prefix: view.prefix, suffix: view.suffix, repoName: basename(repo) },
        signal,
      );
      // Where each local model ran: the host's own facts, beside the trace.
      const ranOn = [
        ...models.registry.placements().map((p) => runsOn(p.name, p.placement)),
        ...(rerankers?.placement ? [runsOn(DEFAULT_RERANKER, rerankers.placement)] : []),
      ];
      const suppressed = result.outcomes.gate && !result.outcomes.gate.shown ? result.outcomes.gate.text : undefined;
      if (values.json) {
        process.stdout.write(terminalJson({ ...result, models: ranOn }) + '\n');
      } else {
        const item = result.items[0];
        process.stdout.write(
          showControlChars(
            item
              ? `Completion at ${rel}:${loc.line}${loc.column ? `:${loc.column}` : ''}:\n${item.text}\n\n`
              : suppressed
                ? `No completion shown at ${rel}:${loc.line} (the show gate stayed silent: score ` +
                  `${result.trace.gate!.score.toFixed(3)} < ${result.trace.gate!.threshold}; --show all shows it):\n` +
                  `${suppressed}\n\n`
                : `No completion at ${rel}:${loc.line} ` +
                  `(${result.trace.error ? stripControlChars(stageMessage(result.trace.error)) : 'empty after postprocessing'})\n\n`,
          ),
        );
        process.stdout.write(formatTraceMarkdown(result.trace, { includePrompt: values['no-prompt'] !== true, models: ranOn }) + '\n');
      }
      return result.items.length > 0 ? 0 : 1;
    } finally {
      paths.dispose();
      kb.dispose();
      await rerankers?.dispose();
      await models.registry.dispose().catch(() => undefined);
    }
  },
};
