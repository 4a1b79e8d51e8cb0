// The trace as readable Markdown ("Explain Last Completion", `coderag complete`).
import { formatRunsOn, type ModelRunsOn } from '../models/device';
import type { CompletionTrace } from './trace';
import type { CopyPriorStats } from '../generate/copyPrior';
import { showControlChars } from '../util/outsideText';

function ms(n: number | undefined): string {
  return n === undefined ? '-' : `${n.toFixed(1)} ms`;
}

function fence(text: string, lang = ''): string {
  const ticks = text.includes('```') ? '````' : '```';
  return `${ticks}${lang}\n${text}\n${ticks}`;
}

/** Markdown view of a trace: stages and timings, the query, candidates per path, rerank picks, the prompt, the model's answer. */
/** `models`: where the host's local models ran (its own facts, kept beside the trace). */
export function formatTraceMarkdown(
  trace: CompletionTrace,
  options: { includePrompt?: boolean; models?: readonly ModelRunsOn[] } = {},
): string {
  const out = [
    ...headerSection(trace),
    ...completionSection(trace),
    ...stagesSection(trace),
    ...(trace.body ? bodySection(trace.body, trace.lang) : []),
    ...(trace.query ? querySection(trace.query, trace.lang) : []),
    ...(trace.retrieval ? retrievalSection(trace.retrieval) : []),
    ...(trace.rerank ? rerankSection(trace.rerank) : []),
    ...(trace.similar ? similarSection(trace.similar) : []),
    ...(trace.model ? modelSection(trace.model) : []),
    ...(trace.junk?.length ? junkSection(trace.junk) : []),
    ...(trace.check ? checkSection(trace.check) : []),
    ...(options.models?.length ? ['## Local models', '', ...options.models.map((m) => `- ${formatRunsOn(m)}`), ''] : []),
    ...(trace.prompt ? promptSection(trace.prompt, options.includePrompt !== false) : []),
  ];
  // The trace quotes repository code (query, prompt, windows): its control characters are shown, never obeyed.
  return showControlChars(out.join('\n'));
}

/** The title, the file, the mode and the total time, and why there is no completion when there is none. */
function headerSection(trace: CompletionTrace): string[] {
  const out = [
    `# CodeRAG completion ${trace.id}`,
    '',
    `File \`${trace.filePath}\` (${trace.lang}), ${trace.mode} mode, ${trace.startedAt}, total ${ms(trace.totalMs)} ` +
      `(outside the model ${ms(trace.nonModelMs)})`,
    '',
  ];
  if (trace.error) out.push(`**No completion: ${trace.error.stage} ${trace.error.kind}** — ${trace.error.message}`, '');
  return out;
}

/** The suggestion (or why there is none) and the show gate's decision. */
function completionSection(trace: CompletionTrace): string[] {
  if (trace.completion === undefined) return [];
  return [
    '## Completion',
    '',
    trace.completion ? fence(trace.completion, trace.lang) : `_(no suggestion: ${trace.empty ?? 'empty after postprocessing'})_`,
    '',
    ...(trace.gate ? [showGateLine(trace.gate), ''] : []),
  ];
}

/** One table row per stage: status, time and note. */
function stagesSection(trace: CompletionTrace): string[] {
  const out = ['## Stages', '', '| stage | status | time | note |', '|---|---|---|---|'];
  for (const s of trace.stages)
    out.push(`| ${s.stage} | ${s.status} | ${ms(s.elapsedMs)} | ${(s.message ?? '').replace(/\|/g, '\\|').replace(/\n/g, ' ')} |`);
  out.push('');
  return out;
}

/** Rambo's steps: the target method, signature-similar methods, the sketch, its elements and their usages. */
function bodySection(b: NonNullable<CompletionTrace['body']>, lang: CompletionTrace['lang']): string[] {
  const out = [
    '## Body (Rambo)',
    '',
    `Method \`${b.target.className ? `${b.target.className}.` : ''}${b.target.name}\` at line ${b.target.line + 1} ` +
      `(${b.target.detected ? 'empty body found in the syntax tree' : 'declaration guessed from the text'}); sketch: ` +
      `${b.sketchSource}`,
    '',
    `Signature-similar methods${b.signatureMatch ? ` (${b.signatureMatch})` : ''}:`,
    '',
    ...(b.signatureSimilar.length ? b.signatureSimilar.map((s) => `- ${s.score.toFixed(3)} \`${s.id}\``) : ['- none']),
    '',
  ];
  if (b.sketch !== undefined) out.push('Sketch:', '', fence(b.sketch, lang), '');
  out.push(
    `Elements found${b.elementsFrom ? ` (from the ${b.elementsFrom})` : ''}:`,
    '',
    ...(b.elements.length
      ? b.elements.map(
          (e) =>
            `- ${e.kind} \`${e.name}\` -> \`${e.matched}\` (${e.how} ${e.score.toFixed(2)}, ` +
            `${e.path}${e.members !== undefined ? `, ${e.members} members` : ''})`,
        )
      : ['- none']),
    '',
  );
  if (b.unmapped.length) out.push(`Not in the repository: ${b.unmapped.map((n) => `\`${n}\``).join(', ')}`, '');
  out.push(
    'Usages:',
    '',
    ...(b.usages.length ? b.usages.map((u) => `- ${u.score.toFixed(3)} \`${u.id}\` via ${u.via.join(', ')}`) : ['- none']),
    '',
  );
  return out;
}

/** The query's strategy, its lines, the probed chunks' scores and its text. */
function querySection(q: NonNullable<CompletionTrace['query']>, lang: CompletionTrace['lang']): string[] {
  const out = [
    '## Query',
    '',
    `Strategy **${q.strategy}**${q.fallbackReason ? ` (fallback: ${q.fallbackReason})` : ''}; lines ` +
      `${q.spans.map((s) => `${s.startLine + 1}-${s.endLine + 1}`).join(', ') || '-'}`,
    '',
  ];
  if (q.chunkScores && q.chunkScores.length > 0) {
    out.push('Chunks probed (score = sum of max log-probs):', '');
    for (const c of q.chunkScores) out.push(`- lines ${c.startLine + 1}-${c.endLine + 1}: ${c.score.toFixed(3)}`);
    out.push('');
  }
  out.push(fence(q.text, lang), '');
  return out;
}

/** Each retrieval path's status, notes and first 15 results, and the merged candidates' count. */
function retrievalSection(retrieval: NonNullable<CompletionTrace['retrieval']>): string[] {
  const out = ['## Retrieval', ''];
  for (const p of retrieval.paths) {
    out.push(`### ${p.path}: ${p.status}, ${ms(p.elapsedMs)} of ${p.budgetMs} ms${p.message ? ` — ${p.message}` : ''}`, '');
    for (const n of p.notes ?? []) out.push(`_${n}_`);
    for (const r of p.results.slice(0, 15)) out.push(`- ${r.score.toFixed(3)} \`${r.id}\`${r.reason ? ` (${r.reason})` : ''}`);
    out.push('');
  }
  out.push(`Merged candidates: ${retrieval.candidates.length}`, '');
  return out;
}

/** The reranker, each call's window and pick, and the snippets in prompt order. */
function rerankSection(r: NonNullable<CompletionTrace['rerank']>): string[] {
  const notes = r.notes ? `; ${r.notes.join('; ')}` : '';
  const redacted = r.redactions ? `; ${r.redactions} credential-looking values redacted from what the reranker was sent` : '';
  const out = ['## Rerank', '', `Reranker **${r.reranker}**, ${r.calls.length} calls${notes}${redacted}`, ''];
  for (const c of r.calls)
    out.push(
      `- window [${c.window.map((w) => `\`${w}\``).join(', ')}] -> ` +
        `${c.picked ? `\`${c.picked}\`` : `kept order (${c.failure ?? 'no pick'})`} in ${ms(c.elapsedMs)}`,
    );
  out.push('', 'Top snippets in prompt order:', '', ...r.picked.map((id, i) => `${i + 1}. \`${id}\``), '');
  return out;
}

/** ProCC: the arm and how it was chosen, one table row per perspective, the bandit's features and scores. */
function similarSection(s: NonNullable<CompletionTrace['similar']>): string[] {
  const chosenBy =
    s.chosenBy === 'bandit' ? 'chosen by the bandit' : s.chosenBy === 'union' ? 'union of the perspectives' : 'fixed perspective';
  const windows = s.snippets.map((id) => `\`${id}\``).join(', ') || 'none';
  const reward = s.reward !== undefined ? `; reward ${s.reward.toFixed(3)}` : '';
  const out = ['## Similar code (ProCC)', '', `Arm **${s.arm}** (${chosenBy}); windows in the prompt: ${windows}${reward}`, ''];
  out.push('| perspective | status | time | top-1 | score | note |', '|---|---|---|---|---:|---|');
  for (const p of s.perspectives) {
    const top = p.top ? `\`${p.top.path}\` ${p.top.startLine + 1}-${p.top.endLine + 1}` : '-';
    const score = p.top ? p.top.score.toFixed(3) : '-';
    const note = [p.message, p.query ? `query: ${p.query.split('\n')[0]!.slice(0, 80)}` : ''].filter(Boolean).join('; ');
    out.push(`| ${p.name} | ${p.status} | ${ms(p.elapsedMs)} | ${top} | ${score} | ${note.replace(/\|/g, '\\|')} |`);
  }
  out.push(
    '',
    `Features: [${s.features.map((f) => f.toFixed(3)).join(', ')}]${
      s.scores
        ? `; UCB scores: ${Object.entries(s.scores)
            .map(([a, v]) => `${a} ${(v ?? 0).toFixed(3)}`)
            .join(', ')}`
        : ''
    }`,
    '',
  );
  return out;
}

/** The model call: backend, model, endpoint, timings, the copy prior and the raw output. */
function modelSection(m: NonNullable<CompletionTrace['model']>): string[] {
  const firstToken = m.firstTokenMs !== undefined ? `, first token ${ms(m.firstTokenMs)}` : '';
  const tokens = m.tokens !== undefined ? `, ${m.tokens} tokens` : '';
  const stopped = m.stoppedBy ? `, stopped by ${m.stoppedBy}` : '';
  // What the server says it read of the prompt, and what it reused from its cache.
  const read = m.read
    ? [
        `The server read ${m.read.evaluated} prompt tokens` +
          `${m.read.cached !== undefined ? ` and reused ${m.read.cached} from its cache` : ''}` +
          `${m.read.ms !== undefined ? ` in ${ms(m.read.ms)}` : ''}.`,
        '',
      ]
    : [];
  return [
    '## Model',
    '',
    `${m.backend} \`${m.model}\` at ${m.endpoint}: ${ms(m.elapsedMs)}${firstToken}${tokens}${stopped}`,
    '',
    ...read,
    ...(m.copyPrior ? [copyPriorLine(m.copyPrior), ''] : []),
    'Raw output:',
    '',
    fence(m.raw),
    '',
  ];
}

/** What each junk filter cut. */
function junkSection(junk: NonNullable<CompletionTrace['junk']>): string[] {
  return ['## Junk filters', '', ...junk.map((j) => `- ${j.rule}: ${j.note}${j.removed ? `; cut ${fence1(j.removed)}` : ''}`), ''];
}

/** Checking against the repository: what was constrained while decoding, and what was checked, repaired or cut. */
function checkSection(c: NonNullable<CompletionTrace['check']>): string[] {
  const lines = [`mode ${c.mode}${c.note ? ` (${c.note})` : ''}`];
  if (c.atCursor)
    lines.push(`receiver at the cursor \`${c.atCursor.receiver}\`: ${c.atCursor.entities.join('; ')} (${c.atCursor.names} names)`);
  for (const e of c.constrained ?? [])
    lines.push(
      `constrained \`${e.receiver}.\` (${e.at}): ${e.steps} step(s), wrote ` +
        `\`${e.written}\`${e.favoured ? `; the code before it favoured ${e.favoured.map((n) => `\`${n}\``).join(', ')}` : ''}`,
    );
  if (c.server) lines.push(`the model server constrained the member at the cursor (\`${c.server}\`)`);
  for (const g of c.calls ?? [])
    lines.push(
      `call \`${g.callee}(\` (${g.at}): parameters ` +
        `${g.params.map((p) => `\`${p}\``).join(', ') || 'none'}${g.maxArgs === null ? ' and more' : ''}; names in ` +
        `scope ${g.preferred.map((p) => (p ? `\`${p}\`` : '-')).join(', ') || 'none'}; ${g.steps} step(s) guided`,
    );
  if (c.steps !== undefined) lines.push(`${c.steps} decoding step(s), ${ms(c.maskMs ?? 0)} in the constraint`);
  if (c.checked !== undefined) lines.push(`${c.checked} dereference(s) checked`);
  for (const f of c.fixes ?? []) lines.push(fixLine(f));
  return ['## Check', '', ...lines.map((l) => `- ${l}`), ''];
}

/** One repair or cut of the finished completion, with the reason. */
function fixLine(f: NonNullable<NonNullable<CompletionTrace['check']>['fixes']>[number]): string {
  const wrote = f.kind === 'argument' ? `${f.receiver}(…, ${f.wrote}=` : `${f.receiver}.${f.wrote}`;
  const lacks = f.kind === 'argument' ? `${f.receiver} has no parameter \`${f.wrote}\`` : `\`${f.receiver}\` has no member \`${f.wrote}\``;
  return f.action === 'repaired' ? `repaired \`${wrote}\` -> \`${f.became}\` (${lacks})` : `cut before \`${wrote}\` (${lacks})`;
}

/** The prompt's size, family, snippets and redactions, and its text when asked for. */
function promptSection(p: NonNullable<CompletionTrace['prompt']>, includeText: boolean): string[] {
  const fim = p.fim ? ' (FIM)' : '';
  const asFiles = p.format === 'files' ? ', snippets as repository files' : '';
  const snippets = p.snippets.map((s) => `\`${s}\``).join(', ') || 'none';
  const dropped = p.snippetsDropped ? `, ${p.snippetsDropped} dropped for the budget` : '';
  const cut = p.prefixCut ? '; code context cut from the left' : '';
  const size = `${p.tokens} of ${p.budgetTokens} tokens, family ${p.family}${fim}${asFiles}`;
  const out = ['## Prompt', '', `${size}; snippets from ${snippets}${dropped}${cut}; redactions: ${p.redactions}`, ''];
  if (includeText) out.push(fence(p.text), '');
  return out;
}

/** A cut text on one line, at most 120 characters, in backticks. */
function fence1(text: string): string {
  const one = text.replace(/\s*\n\s*/g, ' ⏎ ');
  return `\`${one.length > 120 ? `${one.slice(0, 120)}…` : one}\``;
}

/** The show gate's decision, score and features in one line. */
function showGateLine(g: NonNullable<CompletionTrace['gate']>): string {
  const decision = !g.logprobs
    ? 'shown (the model gave no log-probabilities: the gate abstains)'
    : g.threshold === 0
      ? 'shown (the gate is off)'
      : g.shown
        ? `shown (score ≥ ${g.threshold.toFixed(2)})`
        : `**not shown** (score < ${g.threshold.toFixed(2)}: CodeRAG stayed silent)`;
  const features = Object.entries(g.features)
    .filter(([name]) => name !== 'bias')
    .map(([name, v]) => `${name} ${Number.isInteger(v) ? v : v.toFixed(2)}`)
    .join(', ');
  return `Show gate: ${decision}; score ${g.score.toFixed(3)}${g.learned ? ` (after ${g.learned} outcomes)` : ''}; ${features}.`;
}

/** What the embedded model's copy prior did, in a sentence. */
function copyPriorLine(c: CopyPriorStats): string {
  if (c.voted === 0) return `Copy prior: no part of the text matched the prompt or the file above it in ${c.steps} steps.`;
  return (
    `Copy prior: the prompt and the file above it voted on ${c.voted} of ${c.steps} steps and changed the model's ` +
    `first choice on ${c.changed} (longest match ${c.longestMatch} characters).`
  );
}
