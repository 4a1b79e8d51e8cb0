// What the CodeRAG status-bar item shows for a server status: its text (with a codicon), its
// tooltip (Markdown) and whether it wears the warning colour. Pure and free of `vscode`, so the
// tests check exactly what a user would see.
import type { IndexingProgress, ModelState, StatusParams } from '../protocol/protocol';

export interface StatusBarView {
  /** The item's text, `$(icon)` codicons included. */
  text: string;
  /** Markdown for the item's tooltip. */
  tooltip: string;
  /** Shown on the warning background (a model problem). */
  warning: boolean;
}

/** The words after "CodeRAG:" in the status bar for each model problem. */
export function modelProblemLabel(state: ModelState, backend: string): string {
  switch (state) {
    case 'unreachable':
      return 'model unreachable';
    case 'closed':
      return 'model connection closed';
    case 'timeout':
      return 'model timed out';
    case 'httpStatus':
      return 'model server error';
    case 'malformed':
      return 'bad model answer';
    case 'modelMissing':
      return backend === 'ollama' ? 'model not pulled' : 'model missing';
    case 'failed':
    case 'error':
      return 'model error';
    default:
      return 'model problem';
  }
}

const UNTRUSTED: StatusBarView = {
  text: '$(shield) CodeRAG',
  tooltip: 'CodeRAG is off in untrusted workspaces: no indexing, no completions. Trust the workspace to turn it on.',
  warning: false,
};

/** `3/40` while parsing; `indexing 41% · dense 12,000/39,000` while the dense path embeds. */
export function indexingLabel(p: IndexingProgress): string {
  const n = (x: number): string => x.toLocaleString('en-US');
  if (p.dense) return `indexing ${p.percent ?? Math.floor((100 * p.dense.done) / Math.max(1, p.dense.total))}% · dense ${n(p.dense.done)}/${n(p.dense.total)}`;
  return `${p.done}/${p.total}`;
}

export function statusBarView(status: StatusParams | undefined, trusted: boolean): StatusBarView {
  if (!trusted) return UNTRUSTED;
  if (!status) return { text: '$(loading~spin) CodeRAG', tooltip: 'CodeRAG is starting', warning: false };
  const reranker = status.reranker.current === 'none' ? 'no reranker' : `${status.reranker.current} reranker`;
  let text: string;
  let warning = false;
  switch (status.state) {
    case 'indexing':
      text = status.indexing ? `$(sync~spin) CodeRAG ${indexingLabel(status.indexing)}` : '$(sync~spin) CodeRAG';
      break;
    case 'starting':
      text = '$(loading~spin) CodeRAG';
      break;
    case 'ready':
      text = `$(check) CodeRAG · ${status.reranker.current}`;
      break;
    case 'modelProblem':
      text = `$(warning) CodeRAG: ${modelProblemLabel(status.model.state, status.model.backend)}`;
      warning = true;
      break;
    case 'disabled':
      text = '$(circle-slash) CodeRAG';
      break;
    case 'untrusted':
      return UNTRUSTED;
  }
  const m = status.model;
  const lines = [`**CodeRAG**: ${status.message}`];
  if (status.state === 'modelProblem') {
    lines.push(`Model: ${m.backend} \`${m.model}\`${m.endpoint ? ` at ${m.endpoint}` : ''}`);
    if (m.action) lines.push(`**What to do:** ${m.action}`);
  } else {
    lines.push(`Model: ${m.backend} \`${m.model}\` (${m.state})`);
  }
  lines.push(`Reranker: ${reranker} — click to switch between LLM and distilled`);
  if (status.models?.length) {
    lines.push(`Local models run on: ${status.models.map((d) => `${d.model} ${d.provider}`).join(', ')}`);
    for (const error of new Set(status.models.flatMap((d) => (d.error ? [d.error] : [])))) lines.push(`**Device error:** ${error}`);
  }
  const o = status.stats.overheadMs;
  if (o) lines.push(`Server overhead per request: median ${o.median.toFixed(1)} ms (p95 ${o.p95.toFixed(1)} ms); ${status.stats.cacheHits}/${status.stats.requests} from the cache`);
  return { text, tooltip: lines.join('\n\n'), warning };
}
