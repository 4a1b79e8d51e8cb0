// What the CodeRAG status-bar item shows for a server status: its text (with a codicon), its
// tooltip (Markdown) and whether it wears the warning colour. Pure and free of `vscode`, so the
// tests check exactly what a user would see.
import type { BackgroundBuild, FolderIndexSummary, IndexingProgress, ModelState, StatusParams } from '../protocol/protocol';

export interface StatusBarView {
  /** The item's text, `$(icon)` codicons included. */
  text: string;
  /** Markdown for the item's tooltip. */
  tooltip: string;
  /** Shown on the warning background (a model problem). */
  warning: boolean;
  /** What a click runs: the fix of a model problem, else the reranker switch. */
  command: typeof FIX_MODEL_COMMAND | typeof TOGGLE_RERANKER_COMMAND;
}

const FIX_MODEL_COMMAND = 'coderag.fixModel';
const TOGGLE_RERANKER_COMMAND = 'coderag.toggleReranker';

/** One way out of a model problem, as the status item's click offers it. */
interface ModelFix {
  label: string;
  detail: string;
  action: 'walkthrough' | 'download' | 'useEmbedded' | 'pull' | 'settings' | 'log';
}

/** `auto` found no model server and the shipped model writes the suggestions (the server's note says why). */
function onFallbackModel(status: StatusParams): boolean {
  return status.model.backend === 'embedded' && /^using the embedded model\b/.test(status.model.message ?? '');
}

/** The fixes offered for the model the status shows: the first is the likeliest. */
export function modelFixes(status: StatusParams | undefined): ModelFix[] {
  const m = status?.model;
  const fixes: ModelFix[] = [];
  if (m?.state === 'modelMissing' && m.backend === 'ollama')
    fixes.push({
      label: `Pull ${m.model} in Ollama`,
      detail: 'Downloads the model into your Ollama server, with progress.',
      action: 'pull',
    });
  fixes.push({
    label: 'Connect a model server',
    detail: 'The setup guide: Ollama on this machine, or an OpenAI-compatible server (vLLM, llama.cpp, TGI).',
    action: 'walkthrough',
  });
  fixes.push({
    label: 'Download a local model',
    detail: "One GGUF file (coderag.local.downloadUrl), downloaded once with your consent into VS Code's storage, checked by its SHA-256.",
    action: 'download',
  });
  if (m && m.backend !== 'embedded')
    fixes.push({
      label: 'Use the shipped model',
      detail: 'Sets coderag.model.provider to embedded: works offline, modest quality.',
      action: 'useEmbedded',
    });
  fixes.push({ label: 'Open the CodeRAG settings', detail: 'Model provider, Ollama host, OpenAI-compatible server.', action: 'settings' });
  fixes.push({ label: 'Show the server log', detail: 'What the server tried and what answered.', action: 'log' });
  return fixes;
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
    case 'certificate':
      return 'model certificate not trusted';
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
  command: TOGGLE_RERANKER_COMMAND,
};

/** `3/40` while parsing; `indexing 41% · dense 12,000/39,000` while the dense path embeds. */
function indexingLabel(p: IndexingProgress): string {
  const n = (x: number): string => x.toLocaleString('en-US');
  if (p.dense)
    return (
      `indexing ${p.percent ?? Math.floor((100 * p.dense.done) / Math.max(1, p.dense.total))}% · dense ` +
      `${n(p.dense.done)}/${n(p.dense.total)}`
    );
  return `${p.done}/${p.total}`;
}

/** A background build's state in words: `ready (3,200 items)`, `building`, `off (why)`, `failed: why`. */
function buildWords(b: BackgroundBuild, count: number, noun: string): string {
  switch (b.state) {
    case 'ready':
      return `ready (${count.toLocaleString('en-US')} ${noun})`;
    case 'failed':
      return `failed${b.message ? `: ${b.message}` : ''}`;
    case 'off':
      return `off${b.message ? ` (${b.message})` : ''}`;
    default:
      return b.state;
  }
}

/** A folder URI's last segment, as people read it. */
function folderName(uri: string): string {
  const last = uri.replace(/\/+$/, '').split('/').pop() ?? uri;
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

/** Files each folder leaves out of the index, the first few with why, so a user learns why a file is never used. */
const SKIPPED_SHOWN = 3;
function skippedLines(folders: readonly FolderIndexSummary[]): string[] {
  return folders.flatMap((f) => {
    const count = f.skippedCount ?? f.skipped?.length ?? 0;
    if (count === 0 || !f.skipped) return [];
    const name = decodeURIComponent(f.uri.replace(/\/+$/, '').split('/').pop() ?? f.uri);
    const shown = f.skipped.slice(0, SKIPPED_SHOWN).map((s) => `\`${s.path}\` (${s.detail})`);
    const more = count > shown.length ? `, and ${count - shown.length} more` : '';
    return [`Not indexed in ${name}: ${count} file${count === 1 ? '' : 's'}: ${shown.join(', ')}${more}`];
  });
}

/**
 * The tooltip's line for one background build over the folders, e.g. `Dense retrieval: ready
 * (3,200 items)`; each folder named when there are several; undefined when no folder was opened.
 */
function backgroundLine(
  folders: readonly FolderIndexSummary[],
  label: string,
  words: (f: FolderIndexSummary) => string | undefined,
): string | undefined {
  const parts = folders.flatMap((f) => {
    const w = words(f);
    return w === undefined ? [] : [{ name: folderName(f.uri), words: w }];
  });
  if (parts.length === 0) return undefined;
  if (parts.length === 1) return `${label}: ${parts[0]!.words}`;
  return `${label}: ${parts.map((p) => `${p.name} ${p.words}`).join('; ')}`;
}

export function statusBarView(status: StatusParams | undefined, trusted: boolean): StatusBarView {
  if (!trusted) return UNTRUSTED;
  if (!status) return { text: '$(loading~spin) CodeRAG', tooltip: 'CodeRAG is starting', warning: false, command: TOGGLE_RERANKER_COMMAND };
  const fallback = onFallbackModel(status);
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
      // No model server answered: say so in the text, not only the tooltip (a click offers the fix).
      text = fallback
        ? '$(info) CodeRAG · shipped model'
        : status.warming
          ? '$(sync~spin) CodeRAG · reading context'
          : status.model.backend === 'local'
            ? `$(check) CodeRAG · llama.cpp · ${status.reranker.current}`
            : `$(check) CodeRAG · ${status.reranker.current}`;
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
  } else if (fallback) {
    lines.push(`No model server answered, so the small model shipped with the extension writes the suggestions (${m.message ?? ''}).`);
    lines.push('**Click** to connect Ollama or an OpenAI-compatible server.');
  } else if (m.backend === 'local') {
    // Where the in-process model runs (CPU or which GPU), and what its file lacks.
    lines.push(`Model: \`${m.model}\`, run by ${m.endpoint} (${m.state})${m.message ? `: ${m.message}` : ''}`);
  } else {
    lines.push(`Model: ${m.backend} \`${m.model}\` (${m.state})`);
  }
  const fix = status.state === 'modelProblem' || fallback;
  if (status.state === 'modelProblem') lines.push('**Click** for the ways to fix it.');
  lines.push(`Reranker: ${reranker}${fix ? '' : ' — click to switch between LLM and distilled'}`);
  if (status.models?.length) {
    lines.push(`Local models run on: ${status.models.map((d) => `${d.model} ${d.provider}`).join(', ')}`);
    for (const error of new Set(status.models.flatMap((d) => (d.error ? [d.error] : [])))) lines.push(`**Device error:** ${error}`);
  }
  const dense = backgroundLine(status.folders, 'Dense retrieval', (f) => f.dense && buildWords(f.dense, f.dense.items, 'items'));
  const similar = backgroundLine(
    status.folders,
    'Similar code',
    (f) => f.similar && buildWords(f.similar, f.similar.windows, 'code windows'),
  );
  for (const line of [dense, similar]) if (line) lines.push(line);
  for (const line of skippedLines(status.folders)) lines.push(line);
  const o = status.stats.overheadMs;
  if (o)
    lines.push(
      `Server overhead per request: median ${o.median.toFixed(1)} ms (p95 ${o.p95.toFixed(1)} ms); ` +
        `${status.stats.cacheHits}/${status.stats.requests} from the cache`,
    );
  return { text, tooltip: lines.join('\n\n'), warning, command: fix ? FIX_MODEL_COMMAND : TOGGLE_RERANKER_COMMAND };
}
