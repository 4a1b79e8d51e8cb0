// The models an evaluation run needs, chosen by the command line and checked before the first
// case (docs/BENCHMARKS.md: a method that needs something absent fails fast with a clear message):
// the completion model (`embedded`, `ollama:<model>`, `openai:<url>#<model>`) and the BestFit
// reranker of the `+lr` / `+dr` variants (CodeRAG section 2.3).
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { EmbeddedClient, type EmbeddedLM } from '../engine/generate/EmbeddedClient';
import { LocalClient } from '../engine/generate/LocalClient';
import { LlamaEngine } from '../engine/models/LlamaEngine';
import { OllamaClient } from '../engine/generate/OllamaClient';
import { OpenAICompatibleClient } from '../engine/generate/OpenAICompatibleClient';
import type { ModelClient } from '../engine/generate/types';
import type { ModelDevice } from '../engine/models/device';
import { DEFAULT_RERANKER, loadDistilledReranker } from '../engine/rerank/DistilledReranker';
import { ollamaReranker, openAiReranker } from '../engine/rerank/LlmReranker';
import type { Reranker } from '../engine/rerank/types';
import { errorMessage, isCancellationError, throwIfAborted, UserError } from '../engine/util/errors';

type GeneratorSpec =
  | { kind: 'embedded' }
  | { kind: 'ollama'; model: string; host: string }
  | { kind: 'openai'; baseUrl: string; model: string }
  | { kind: 'local'; modelPath: string };

/** `embedded`, `ollama:<model>` (host from `ollamaHost`), `openai:<url>#<model>`, `local:<file.gguf>` (llama.cpp in this process). */
export function parseGenerator(value: string, ollamaHost = 'http://127.0.0.1:11434'): GeneratorSpec {
  if (value === 'embedded') return { kind: 'embedded' };
  if (value.startsWith('local:') && value.length > 'local:'.length) return { kind: 'local', modelPath: value.slice('local:'.length) };
  if (value.startsWith('ollama:') && value.length > 'ollama:'.length)
    return { kind: 'ollama', model: value.slice('ollama:'.length), host: ollamaHost };
  const m = /^openai:(.+)#(.+)$/.exec(value);
  if (m) return { kind: 'openai', baseUrl: m[1]!, model: m[2]! };
  throw new UserError(`unknown generator "${value}": use embedded, ollama:<model>, openai:<url>#<model> or local:<file.gguf>`);
}

export function describeGenerator(g: GeneratorSpec): string {
  if (g.kind === 'local') return `local ${g.modelPath}`;
  return g.kind === 'embedded' ? 'embedded' : g.kind === 'ollama' ? `ollama ${g.model} @ ${g.host}` : `openai ${g.model} @ ${g.baseUrl}`;
}

/** The `local` generator's engine settings: CPU threads, and the embedded client's decoding (`shipped`, for the shipped LM's GGUF). */
export interface LocalGeneratorOptions {
  threads: number;
  shippedDecoding: boolean;
}

/**
 * The completion client, checked: the embedded model loads, the server answers with the model.
 * `embedded.loopGuard` / `copyPrior` false: that rule of the embedded model's decoding off (an A/B of it).
 */
export async function openGenerator(
  g: GeneratorSpec,
  loadEmbedded: () => Promise<EmbeddedLM>,
  timeoutMs: number,
  signal?: AbortSignal,
  embedded: { loopGuard?: boolean; copyPrior?: boolean } = {},
  local: LocalGeneratorOptions = { threads: 1, shippedDecoding: false },
): Promise<ModelClient & { dispose?(): Promise<void> }> {
  const check = signal ?? new AbortController().signal;
  if (g.kind === 'local') {
    // The CPU only: a benchmark's figures do not depend on which GPU backend a platform build finds.
    const engine = new LlamaEngine({ modelPath: g.modelPath, threads: local.threads, contextTokens: 8192, gpu: false });
    const client = new LocalClient(engine, { idleUnloadMs: 0, shippedDecoding: local.shippedDecoding });
    try {
      const problem = await client.check(check);
      if (problem) throw new UserError(problem.message);
      await client.prepare(check);
    } catch (e) {
      await client.dispose().catch(() => undefined);
      if (isCancellationError(e)) throw e;
      throw new UserError(`generator ${describeGenerator(g)}: ${errorMessage(e)}`);
    }
    return client;
  }
  if (g.kind === 'embedded') {
    const client = new EmbeddedClient({
      load: loadEmbedded,
      ...(embedded.loopGuard === false ? { loopGuard: false as const } : {}),
      ...(embedded.copyPrior === false ? { copyPrior: false as const } : {}),
    });
    try {
      await client.prepare(check);
    } catch (e) {
      throw new UserError(`generator embedded: ${errorMessage(e)}`);
    }
    return client;
  }
  const client: ModelClient =
    g.kind === 'ollama'
      ? new OllamaClient({ host: g.host, model: g.model, keepAlive: '30m', timeoutMs })
      : new OpenAICompatibleClient({ baseUrl: g.baseUrl, model: g.model, timeoutMs });
  const problem = await client.check?.(check);
  if (problem) throw new UserError(`generator ${describeGenerator(g)}: ${problem.message}`);
  return client;
}

type RerankerSpec = { kind: 'ollama'; model: string; host: string } | { kind: 'openai'; baseUrl: string; model: string };

/** `--reranker-llm ollama:<model>` or `openai:<url>#<model>`. */
export function parseLlmReranker(value: string, ollamaHost = 'http://127.0.0.1:11434'): RerankerSpec {
  if (value.startsWith('ollama:') && value.length > 'ollama:'.length)
    return { kind: 'ollama', model: value.slice('ollama:'.length), host: ollamaHost };
  const m = /^openai:(.+)#(.+)$/.exec(value);
  if (m) return { kind: 'openai', baseUrl: m[1]!, model: m[2]! };
  throw new UserError(`unknown LLM reranker "${value}": use ollama:<model> or openai:<url>#<model>`);
}

async function reachable(url: string, timeoutMs: number, signal?: AbortSignal): Promise<string | undefined> {
  try {
    const res = await fetch(url, {
      signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs),
    });
    return res.ok ? undefined : `HTTP ${res.status} from ${url}`;
  } catch (e) {
    throwIfAborted(signal);
    return `${url} did not answer (${errorMessage((e as { cause?: unknown }).cause ?? e)})`;
  }
}

/** The LLM reranker of `+lr`, after checking its server answers; fails fast otherwise. */
export async function openLlmReranker(spec: RerankerSpec | undefined, timeoutMs: number, signal?: AbortSignal): Promise<Reranker> {
  if (!spec)
    throw new UserError(
      'the +lr methods need an LLM reranker server: pass --reranker-llm ollama:<model> (e.g. ollama:qwen3:8b, with ' +
        '--ollama-host) or openai:<url>#<model>',
    );
  const probeUrl =
    spec.kind === 'ollama'
      ? `${spec.host.replace(/\/+$/, '')}/api/tags`
      : `${spec.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '')}/v1/models`;
  const problem = await reachable(probeUrl, 3000, signal);
  if (problem) throw new UserError(`LLM reranker not reachable: ${problem}`);
  return spec.kind === 'ollama'
    ? ollamaReranker({ host: spec.host, model: spec.model, timeoutMs })
    : openAiReranker({ baseUrl: spec.baseUrl, model: spec.model, timeoutMs });
}

/** The distilled reranker of `+dr` from `<modelsDir>/coderag-reranker`; fails fast when it is absent. */
export async function openDistilledReranker(modelsDir: string, device: ModelDevice = 'auto', signal?: AbortSignal): Promise<Reranker> {
  const dir = join(modelsDir, DEFAULT_RERANKER);
  const exists = await fs.stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!exists)
    throw new UserError(
      `the +dr methods need the distilled reranker, but ${dir} is absent (train it with npm run models:train, or use +lr)`,
    );
  try {
    const loaded = (await loadDistilledReranker(dir, DEFAULT_RERANKER, { threads: 2, device })).reranker;
    throwIfAborted(signal);
    return loaded;
  } catch (e) {
    if (isCancellationError(e)) throw e;
    throw new UserError(`the distilled reranker in ${dir} did not load: ${errorMessage(e)}`);
  }
}
