// Choose the completion model from the settings slice: Ollama for users, an OpenAI-compatible
// server for teams, a GGUF run in-process by llama.cpp (`local`), the embedded ONNX model when
// nothing else is configured or answers.
import type { ModelFamily } from '../prompt/templates';
import { EmbeddedClient, type EmbeddedLM } from './EmbeddedClient';
import { OllamaClient } from './OllamaClient';
import { OpenAICompatibleClient } from './OpenAICompatibleClient';
import type { ModelClient, ModelProblem } from './types';

export interface ModelSettings {
  provider: 'auto' | 'ollama' | 'openai' | 'embedded' | 'local';
  family: ModelFamily | 'auto';
  timeoutMs: number;
  ollama: { host: string; completionModel: string; keepAlive: string };
  openai: { baseUrl: string; model: string; apiKey: string };
  /** The local model file (the setting, else the downloaded one; empty: none). */
  local: { modelPath: string };
}

/** Makes (or reuses) the client of the local model file; the caller owns its lifetime (it holds a loaded model). */
export type LocalClientFactory = (modelPath: string) => ModelClient;

interface ResolvedModel {
  client: ModelClient;
  /** Why `auto` chose what it chose, or what is wrong with the explicit choice. */
  note?: string;
  problem?: ModelProblem;
}

function family(settings: ModelSettings): { family?: ModelFamily } {
  return settings.family === 'auto' ? {} : { family: settings.family };
}

export function ollamaClientOf(settings: ModelSettings): OllamaClient {
  return new OllamaClient({
    host: settings.ollama.host,
    model: settings.ollama.completionModel,
    keepAlive: settings.ollama.keepAlive,
    timeoutMs: settings.timeoutMs,
    ...family(settings),
  });
}

function openAiClientOf(settings: ModelSettings): OpenAICompatibleClient {
  return new OpenAICompatibleClient({
    baseUrl: settings.openai.baseUrl,
    model: settings.openai.model,
    apiKey: settings.openai.apiKey || undefined,
    timeoutMs: settings.timeoutMs,
    ...family(settings),
  });
}

/** The configured client and its start-up check (the models exist, the server answers). */
export async function resolveModelClient(
  settings: ModelSettings,
  loadEmbedded: () => Promise<EmbeddedLM>,
  signal: AbortSignal,
  localClient?: LocalClientFactory,
): Promise<ResolvedModel> {
  const embedded = (): EmbeddedClient => new EmbeddedClient({ load: loadEmbedded });
  const checked = async (client: ModelClient): Promise<ResolvedModel> => {
    const problem = await client.check?.(signal);
    return problem ? { client, problem } : { client };
  };
  switch (settings.provider) {
    case 'embedded':
      return { client: embedded() };
    case 'local':
      if (!settings.local.modelPath || !localClient)
        return {
          client: embedded(),
          note:
            'no local model file: run "CodeRAG: Download a Local Completion Model" or set coderag.local.modelPath; ' +
            'using the embedded model',
        };
      return checked(localClient(settings.local.modelPath));
    case 'ollama':
      return checked(ollamaClientOf(settings));
    case 'openai':
      if (!settings.openai.baseUrl || !settings.openai.model)
        return { client: embedded(), note: 'coderag.openai.baseUrl and coderag.openai.model are not both set; using the embedded model' };
      return checked(openAiClientOf(settings));
    case 'auto': {
      if (settings.openai.baseUrl && settings.openai.model) return checked(openAiClientOf(settings));
      const ollama = ollamaClientOf(settings);
      const problem = await ollama.check(signal);
      if (!problem) return { client: ollama, note: `Ollama answers at ${ollama.endpoint} with ${ollama.model}` };
      if (settings.local.modelPath && localClient) {
        const local = localClient(settings.local.modelPath);
        if (!(await local.check?.(signal))) return { client: local, note: `using the local model ${local.model} (${problem.message})` };
      }
      return { client: embedded(), note: `using the embedded model (${problem.message})` };
    }
  }
}
