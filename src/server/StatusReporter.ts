// The server's status in one snapshot (indexing progress, ready, model problems, reranker in
// use), sent as `coderag/status` whenever a part changes (coalesced so progress cannot flood).
import type { Connection } from 'vscode-languageserver/node';
import {
  StatusNotification,
  type FolderIndexSummary,
  type IndexingProgress,
  type ModelState,
  type ModelStatus,
  type RerankerChoice,
  type ServerStats,
  type StatusParams,
} from '../protocol/protocol';
import type { Disposable } from '../engine/util/disposable';
import type { ModelRunsOn } from '../engine/models/device';

interface StatusParts {
  trusted: boolean;
  completionsEnabled: boolean;
  folders: FolderIndexSummary[];
  indexing?: IndexingProgress;
  model: ModelStatus;
  reranker: { current: RerankerChoice; available: RerankerChoice[] };
  stats: ServerStats;
  /** Where each loaded local model runs (`coderag.models.device`). */
  models?: ModelRunsOn[];
  /** A warm-up request is reading a new place's context into the model server (StatusParams.warming). */
  warming?: boolean;
  /** Settings that were not used (out of range, wrong type, not in their list), each with the value used instead. */
  settingsProblems?: string[];
}

const MODEL_PROBLEMS: readonly ModelState[] = [
  'unreachable',
  'closed',
  'timeout',
  'httpStatus',
  'rateLimited',
  'malformed',
  'modelMissing',
  'certificate',
  'failed',
  'error',
];

export function isModelProblem(state: ModelState): boolean {
  return MODEL_PROBLEMS.includes(state);
}

/** What the user can do about a model problem (undefined when the model is fine). */
export function modelAction(model: Pick<ModelStatus, 'backend' | 'model' | 'endpoint' | 'state'>): string | undefined {
  const at = model.endpoint ? ` at ${model.endpoint}` : '';
  const ollama = model.backend === 'ollama';
  const openai = model.backend === 'openai';
  const urlSetting = ollama ? '`coderag.ollama.host`' : openai ? '`coderag.openai.baseUrl`' : '`coderag.model.provider`';
  const retry = 'CodeRAG checks again by itself and completes as soon as the server answers.';
  switch (model.state) {
    case 'unreachable':
      if (ollama) return `Start Ollama (\`ollama serve\`) or point ${urlSetting} at where it runs. ${retry}`;
      return `Start the model server${at} or correct ${urlSetting}. ${retry}`;
    case 'closed':
      return (
        `The model server${at} closed the connection in the middle of an answer (it may have restarted or run out ` +
        `of memory): see its log. ${retry}`
      );
    case 'timeout':
      return (
        `The model server${at} did not answer in time (it may be loading the model or busy): wait, raise ` +
        `\`coderag.model.timeoutMs\`, or choose a smaller model. ${retry}`
      );
    case 'httpStatus':
      return (
        `The model server${at} answered with an error: see its log, and check the model ` +
        `name${openai ? ' and the API key (**CodeRAG: Set OpenAI-compatible API Key**)' : ''}. ${retry}`
      );
    case 'rateLimited':
      return (
        `The model server${at} asked CodeRAG to wait (HTTP 429): nothing is sent to it until the time it named has ` +
        `passed, and completions resume by themselves.`
      );
    case 'malformed':
      return (
        `The server${at} does not answer like ` +
        `${ollama ? 'Ollama' : openai ? 'an OpenAI-compatible completions server' : 'a model server'}: check ` +
        `${urlSetting} and \`coderag.model.provider\`.`
      );
    case 'modelMissing':
      if (ollama)
        return (
          `Run "CodeRAG: Pull the Completion Model" (or \`ollama pull ${model.model}\`), or set ` +
          `\`coderag.ollama.completionModel\` to a model you have.`
        );
      if (openai) return `Set \`coderag.openai.model\` to a model the server${at} serves.`;
      return (
        'The shipped model files are missing or damaged: reinstall the extension, or set `coderag.model.provider` ' +
        'to `ollama` or `openai`.'
      );
    case 'certificate':
      return (
        `The model server${at} answers https with a certificate CodeRAG does not trust: give it one for the host name ` +
        `in ${urlSetting}, signed by a public authority or by one in the file that the NODE_EXTRA_CA_CERTS environment ` +
        `variable names where VS Code starts. ${retry}`
      );
    case 'failed':
    case 'error':
      return `See "CodeRAG: Show Server Log" for what went wrong. ${retry}`;
    default:
      return undefined;
  }
}

function headline(p: StatusParts): Pick<StatusParams, 'state' | 'message'> {
  if (!p.trusted) return { state: 'untrusted', message: 'Workspace not trusted: CodeRAG does not index or complete here' };
  if (!p.completionsEnabled) return { state: 'disabled', message: 'CodeRAG completions are disabled' };
  if (isModelProblem(p.model.state))
    return { state: 'modelProblem', message: p.model.message ?? `model ${p.model.model}: ${p.model.state}` };
  if (p.indexing?.dense) {
    const { folder, percent, dense } = p.indexing;
    const n = (x: number): string => x.toLocaleString('en-US');
    return {
      state: 'indexing',
      message:
        `Indexing ${folder} ${percent ?? 0}% · dense ${n(dense.done)}/${n(dense.total)} (completions use the ` +
        `other paths until it ends)`,
    };
  }
  if (p.indexing) return { state: 'indexing', message: `Indexing ${p.indexing.folder} ${p.indexing.done}/${p.indexing.total}` };
  if (p.folders.some((f) => f.state === 'pending' || f.state === 'indexing'))
    return { state: 'starting', message: 'Opening the repository index' };
  const items = p.folders.reduce((n, f) => n + (f.items ?? 0), 0);
  // A folder that was refused or stopped (home folder, too many files) says why in the headline too.
  const failed = p.folders.filter((f) => f.state === 'failed' && f.message).map((f) => f.message);
  const warming = p.warming ? ". Reading this place's repository context into the model: the next suggestion comes when it ends" : '';
  return {
    state: 'ready',
    message:
      `Ready: ${items} items indexed; ${p.model.backend} ${p.model.model}; reranker ` +
      `${p.reranker.current}${failed.length > 0 ? `. Not indexed: ${failed.join('; ')}` : ''}` +
      `${p.settingsProblems?.length ? `. Settings not used: ${p.settingsProblems.join('; ')}` : ''}${warming}`,
  };
}

export class StatusReporter implements Disposable {
  private parts: StatusParts = {
    trusted: true,
    completionsEnabled: true,
    folders: [],
    model: { backend: 'embedded', model: '', endpoint: '', state: 'unknown' },
    reranker: { current: 'none', available: ['none'] },
    stats: { requests: 0, cacheHits: 0, modelCalls: 0, maxModelInFlight: 0 },
  };
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastSent = '';
  private connection: Connection | undefined;

  attach(connection: Connection): void {
    this.connection = connection;
  }

  snapshot(): StatusParams {
    const { indexing, ...rest } = this.parts;
    const action = modelAction(rest.model);
    return {
      ...headline(this.parts),
      ...(indexing ? { indexing } : {}),
      folders: rest.folders,
      model: { ...rest.model, ...(action ? { action } : {}) },
      reranker: rest.reranker,
      completionsEnabled: rest.trusted && rest.completionsEnabled,
      stats: rest.stats,
      ...(rest.models?.length ? { models: rest.models } : {}),
      ...(rest.warming ? { warming: true } : {}),
      ...(rest.settingsProblems?.length ? { settingsProblems: rest.settingsProblems } : {}),
    };
  }

  update(change: Partial<StatusParts>, urgent = false): void {
    this.parts = { ...this.parts, ...change };
    if ('indexing' in change && change.indexing === undefined) delete this.parts.indexing;
    if (urgent) return this.flush();
    this.timer ??= setTimeout(() => this.flush(), 100);
  }

  get current(): Readonly<StatusParts> {
    return this.parts;
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const status = this.snapshot();
    // Stats alone change on every request; they ride along with the next real change.
    const key = JSON.stringify({ ...status, stats: undefined });
    if (key === this.lastSent || !this.connection) return;
    this.lastSent = key;
    void this.connection.sendNotification(StatusNotification.type, status).catch(() => undefined);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}
