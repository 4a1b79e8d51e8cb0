// `node --import tsx scripts/pipelineSnapshot.ts [--out FILE]`: a behaviour snapshot of the one
// pipeline, not a test. A fixed set of positions in the pyshop and javashop fixtures runs through
// createPipeline with the shipped embedded model, in line mode, body mode (auto, Rambo with and
// without CodeRAG's knowledge items, the baselines' body through the line stages), similar code (ProCC, lexical) and
// checked decoding (constrain and repair, the embedded model and two recording model servers);
// it writes one JSON of what each request showed: the stages run, the prompt text, the contexts
// (ids and origins), what the model was asked and the completion. Timings are left out, so two runs
// of the same code give the same file: diff the files of two versions to see what a change did.
// Each request's line on stderr gives its completion and how many times it parsed a syntax tree.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Parser } from 'web-tree-sitter';
import { fixturesDir, grammarsDir, repoRoot } from '../test/helpers/paths';
import { KnowledgeBase } from '../src/engine/kb/KnowledgeBase';
import { loadParsers, type Parsers } from '../src/engine/kb/parsers';
import { ModelRegistry, type CausalLM } from '../src/engine/models';
import { EmbeddedClient } from '../src/engine/generate/EmbeddedClient';
import type { GenerateRequest, ModelClient } from '../src/engine/generate/types';
import { RepoMethods } from '../src/engine/body/RepoMethods';
import { originLabel } from '../src/engine/retrieve/types';
import {
  autoRouter,
  bodyMode,
  createPipeline,
  LINE_MODE,
  PIPELINE_DEFAULTS,
  resolveOptions,
  type CompletionMode,
  type Router,
  type CompletionRequest,
  type CompletionResult,
  type RequestEnv,
  type ResearchHooks,
  type PipelineSettings,
} from '../src/engine/pipeline';
import type { ChunkProber } from '../src/engine/query/probeQuery';
import { createRepositoryIndex, type RepositoryIndex } from '../src/engine/index/repositoryIndex';
import { causalLMProber, embeddedLMOf } from '../src/engine/index/pipelineAdapters';
import { lineStagesBodyMode } from '../src/bench/baselines/lineStagesBody';

// Syntax-tree parses per request (printed, not in the JSON): what the request context saves.
let parses = 0;
const parse = Parser.prototype.parse;
Parser.prototype.parse = function (this: Parser, ...args: Parameters<Parser['parse']>) {
  parses++;
  return parse.apply(this, args);
};

const { values } = parseArgs({ options: { out: { type: 'string', default: 'pipeline-snapshot.json' } } });
const never = new AbortController().signal;
const JAVA = 'src/main/java/com/example/shop';

/** A model server that answers `text` and keeps what it was asked (what checking may ask of it: the real client's of that backend). */
function recordingServer(backend: 'openai' | 'ollama', text: string): { client: ModelClient; seen: GenerateRequest[] } {
  const seen: GenerateRequest[] = [];
  const client: ModelClient = {
    backend,
    model: `recording-${backend}`,
    family: 'qwen2.5-coder',
    endpoint: `http://${backend}.test`,
    // As the real clients say: an OpenAI-compatible server may take a member choice, Ollama nothing.
    ...(backend === 'openai' ? { capabilities: { memberChoice: true } } : {}),
    generate: (r) => (seen.push(r), Promise.resolve({ text, model: `recording-${backend}`, elapsedMs: 1, stoppedBy: 'stop' as const })),
  };
  return { client, seen };
}

/** What the model was asked, without functions' bodies. */
function asked(r: GenerateRequest): unknown {
  return {
    prompt: r.prompt,
    maxNewTokens: r.maxNewTokens,
    stop: r.stop,
    constraint: r.constraint !== undefined,
    memberChoice: r.memberChoice,
    holdEnd: r.holdEnd !== undefined,
    holdLine: r.holdLine !== undefined,
    until: r.until !== undefined,
    copyFromChars: r.copyFrom?.length,
  };
}

/** The trace without what differs between two runs of the same code (timings, the trace id, the date). */
function stable(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((v) => stable(v));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (/Ms$|^ms$|^startedAt$|^models$/.test(k)) continue;
      out[k] = stable(v, k);
    }
    return out;
  }
  if (typeof value === 'number' && /score|Score|prob|relevance/.test(key)) return Math.round(value * 1e4) / 1e4;
  return value;
}

function snapshotOf(result: CompletionResult): unknown {
  const { id: _id, ...trace } = result.trace;
  return {
    items: result.items.map((i) => i.text),
    contexts: result.contexts.map((c) => ({ id: c.snippet.id, source: originLabel(c) ?? null })),
    trace: stable(trace),
  };
}

function lineAt(fixture: string, path: string, line: number, tail: string): CompletionRequest {
  const lines = readFileSync(join(fixturesDir, fixture, path), 'utf8').split('\n');
  const prefix = `${lines.slice(0, line).join('\n')}\n${tail}`;
  return {
    filePath: path,
    lang: path.endsWith('.java') ? 'java' : 'python',
    prefix,
    suffix: `\n${lines.slice(line).join('\n')}`,
    repoName: fixture,
  };
}

/** Gateways.create emptied, the cursor in its empty body (the body mode's request). */
function emptiedJavaMethod(): CompletionRequest {
  const rel = `${JAVA}/payment/Gateways.java`;
  const header = 'public static PaymentGateway create(String name, String apiKey) {';
  const text = readFileSync(join(fixturesDir, 'javashop', rel), 'utf8');
  const start = text.indexOf(header) + header.length;
  const end = text.indexOf('\n    }\n', start);
  const edited = `${text.slice(0, start)}\n        \n    }\n${text.slice(end + 7)}`;
  const cursor = start + 9;
  return { filePath: rel, lang: 'java', prefix: edited.slice(0, cursor), suffix: edited.slice(cursor), repoName: 'javashop' };
}

/** A Python method emptied (a def with a docstring only), the cursor on its body's first line. */
function emptiedPythonMethod(): CompletionRequest {
  const rel = 'pyshop/services/checkout.py';
  const text = readFileSync(join(fixturesDir, 'pyshop', rel), 'utf8');
  const at = text.indexOf('    def ', text.indexOf('class '));
  const bodyStart = text.indexOf('\n', at) + 1;
  const next = text.indexOf('\n    def ', bodyStart);
  const rest = next < 0 ? '' : text.slice(next);
  return { filePath: rel, lang: 'python', prefix: `${text.slice(0, bodyStart)}        `, suffix: `\n${rest}`, repoName: 'pyshop' };
}

interface Fixture {
  kb: KnowledgeBase;
  paths: RepositoryIndex;
  repo: RepoMethods;
}

async function main(): Promise<void> {
  const parsers: Parsers = await loadParsers(grammarsDir);
  const registry = new ModelRegistry({ modelsDir: join(repoRoot, 'models'), threads: 2 });
  const lm: CausalLM = await registry.causalLM(undefined, never);
  const encoder = await registry.encoder(undefined, never);
  const embedded = new EmbeddedClient({ load: () => Promise.resolve(embeddedLMOf(lm)) });
  const open = async (name: string, similar: boolean): Promise<Fixture> => {
    const kb = await KnowledgeBase.open({ repoRoot: join(fixturesDir, name), parsers });
    await kb.index(undefined, never);
    const paths = createRepositoryIndex(kb, parsers, { paths: ['sparse', 'dataflow'], ...(similar ? { similar: { encoder, windowLines: 10, nextLine: () => (prompt, n, s) => lm.generate(prompt, { maxNewTokens: n }, s) } } : {}) });
    if (paths.windows) await paths.windows.prepare(never);
    return { kb, paths, repo: new RepoMethods(kb) };
  };
  const py = await open('pyshop', true);
  const java = await open('javashop', false);

  /** What a request is lent besides the fixture's repository and the model: a prober, no model, the windows, research hooks. */
  type Extra = { prober?: ChunkProber; noModel?: boolean; similar?: boolean; hooks?: ResearchHooks };
  const budgets: PipelineSettings = { retrieval: { budgetsMs: { sparse: 60_000, dataflow: 60_000 } } };
  const run = async (
    name: string,
    fx: Fixture,
    request: CompletionRequest,
    overrides: PipelineSettings,
    mode: Router | CompletionMode | ((fx: Fixture) => Router | CompletionMode),
    extra: Extra = {},
    model: ModelClient = embedded,
    seen?: GenerateRequest[],
  ): Promise<unknown> => {
    const chosen = typeof mode === 'function' ? mode(fx) : mode;
    const repo = {
      retrievers: fx.paths.retrievers,
      receivers: fx.paths.receivers,
      methods: fx.repo,
      ...(extra.similar && py.paths.similar ? { similar: py.paths.similar } : {}),
    };
    const env: RequestEnv = { repo, ...(extra.noModel ? {} : { model }), ...(extra.prober ? { prober: extra.prober } : {}) };
    const pipeline = createPipeline(
      resolveOptions({ ...budgets, ...overrides, retrieval: { ...budgets.retrieval, ...overrides.retrieval } }),
      { env, ...(extra.hooks ? { hooks: extra.hooks } : {}), ...(extra.similar ? { offersSimilar: true } : {}) },
      chosen,
    );
    const before = seen?.length ?? 0;
    const parsed = parses;
    const result = await pipeline.complete(request, never);
    process.stderr.write(`${name} (${parses - parsed} parses): ${JSON.stringify(result.items[0]?.text ?? '')}\n`);
    return { name, mode: chosen.name, ...(snapshotOf(result) as object), ...(seen ? { asked: seen.slice(before).map(asked) } : {}) };
  };

  const auto: Router = autoRouter({ parsers });
  const cart = lineAt('pyshop', 'app/main.py', 18, '    cart.');
  const service = lineAt('pyshop', 'app/main.py', 18, '    service = CheckoutService(');
  const javaGateway = lineAt('javashop', `${JAVA}/service/CheckoutService.java`, 30, '            String id = gateway.');
  const openai = recordingServer('openai', 'totl()\n');
  const ollama = recordingServer('ollama', 'totl()\n');
  const out: unknown[] = [];
  // Line mode: the probing query (the shipped LM), a last-10 query, an empty line (primed, held), auto outside a body.
  out.push(
    await run(
      'line probe pyshop',
      py,
      lineAt('pyshop', 'pyshop/services/checkout.py', 20, '        '),
      { query: { strategy: 'probe' } },
      LINE_MODE,
      { prober: causalLMProber(lm) },
    ),
  );
  out.push(
    await run(
      'line last10 javashop',
      java,
      lineAt('javashop', `${JAVA}/App.java`, 14, '        Cart cart = new '),
      { query: { strategy: 'last10' } },
      LINE_MODE,
    ),
  );
  out.push(await run('line empty line pyshop', py, lineAt('pyshop', 'app/main.py', 18, ''), { query: { strategy: 'last10' } }, LINE_MODE));
  out.push(
    await run('auto outside a body', py, lineAt('pyshop', 'app/main.py', 18, '    total = '), { query: { strategy: 'last10' } }, auto),
  );
  out.push(await run('line retrieval only', py, cart, { query: { strategy: 'last10' } }, LINE_MODE, { noModel: true }));
  // Checked decoding: the embedded model constrained (members, call arguments), repaired; two model servers.
  out.push(
    await run(
      'check constrain cart.',
      py,
      cart,
      { query: { strategy: 'last10' }, generate: { maxNewTokens: 8 }, check: { mode: 'constrain' } },
      LINE_MODE,
    ),
  );
  out.push(
    await run(
      'check constrain call',
      py,
      service,
      { query: { strategy: 'last10' }, generate: { maxNewTokens: 16 }, check: { mode: 'constrain' } },
      LINE_MODE,
    ),
  );
  out.push(
    await run(
      'check constrain java gateway.',
      java,
      javaGateway,
      { query: { strategy: 'last10' }, generate: { maxNewTokens: 8 }, check: { mode: 'constrain' } },
      LINE_MODE,
    ),
  );
  out.push(
    await run(
      'check repair cart.',
      py,
      cart,
      { query: { strategy: 'last10' }, generate: { maxNewTokens: 8 }, check: { mode: 'repair' } },
      LINE_MODE,
    ),
  );
  out.push(
    await run(
      'check off cart.',
      py,
      cart,
      { query: { strategy: 'last10' }, generate: { maxNewTokens: 8 }, check: { mode: 'off' } },
      LINE_MODE,
    ),
  );
  out.push(
    await run(
      'check constrain openai server',
      py,
      cart,
      { query: { strategy: 'last10' }, check: { mode: 'constrain' } },
      LINE_MODE,
      {},
      openai.client,
      openai.seen,
    ),
  );
  out.push(
    await run(
      'check constrain ollama server',
      py,
      cart,
      { query: { strategy: 'last10' }, check: { mode: 'constrain' } },
      LINE_MODE,
      {},
      ollama.client,
      ollama.seen,
    ),
  );
  out.push(
    await run(
      'check repair openai server',
      py,
      cart,
      { query: { strategy: 'last10' }, check: { mode: 'repair' } },
      LINE_MODE,
      {},
      openai.client,
      openai.seen,
    ),
  );
  // Body mode: auto in an empty method (Rambo with CodeRAG's items), without the items, no sketch, the line stages' body.
  out.push(await run('body auto java', java, emptiedJavaMethod(), { query: { strategy: 'last10' } }, auto));
  out.push(await run('body auto python', py, emptiedPythonMethod(), { query: { strategy: 'last10' } }, auto));
  out.push(
    await run(
      'body no knowledge',
      java,
      emptiedJavaMethod(),
      { query: { strategy: 'last10' }, body: { knowledge: false } },
      bodyMode({ parsers }),
    ),
  );
  out.push(
    await run('body no sketch', java, emptiedJavaMethod(), { query: { strategy: 'last10' } }, bodyMode({ parsers }), {
      hooks: { body: { sketch: 'none' } },
    }),
  );
  out.push(
    await run(
      'body line retrieval',
      java,
      emptiedJavaMethod(),
      { query: { strategy: 'last10' } },
      lineStagesBodyMode(parsers, PIPELINE_DEFAULTS.body.maxLines),
    ),
  );
  out.push(await run('body checked', py, emptiedPythonMethod(), { query: { strategy: 'last10' }, check: { mode: 'constrain' } }, auto));
  out.push(
    await run('body openai server', java, emptiedJavaMethod(), { query: { strategy: 'last10' } }, auto, {}, openai.client, openai.seen),
  );
  // Similar code (ProCC): the lexical perspective's window beside CodeRAG's items, and the union.
  const similarDeps: Extra = { similar: true };
  out.push(
    await run(
      'similar lexical',
      py,
      lineAt('pyshop', 'app/main.py', 18, '    gateway = '),
      { query: { strategy: 'last10' }, generate: { maxNewTokens: 16 }, similar: { mode: 'lexical' } },
      LINE_MODE,
      similarDeps,
    ),
  );
  out.push(
    await run(
      'similar union',
      py,
      lineAt('pyshop', 'pyshop/services/checkout.py', 20, '        '),
      { query: { strategy: 'last10' }, generate: { maxNewTokens: 16 }, similar: { mode: 'union' } },
      LINE_MODE,
      similarDeps,
    ),
  );
  out.push(
    await run(
      'similar in body',
      py,
      emptiedPythonMethod(),
      { query: { strategy: 'last10' }, similar: { mode: 'lexical' } },
      auto,
      similarDeps,
    ),
  );

  writeFileSync(values.out, `${JSON.stringify(out, null, 1)}\n`);
  process.stderr.write(`wrote ${out.length} requests to ${values.out}\n`);
  for (const fx of [py, java]) {
    fx.repo.dispose();
    fx.paths.dispose();
    fx.kb.dispose();
  }
  await registry.dispose();
}

void main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = 1;
});
