// The credential corpus (test/fixtures/secrets/corpus.json): credential forms that must never reach
// a model, and look-alikes (hashes, UUIDs, placeholders, names of settings) that must arrive as
// written. Scored through the real redaction boundary (generate/redactBoundary) against the
// capturing test model server: a case counts by what that server received.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OllamaClient } from '../../src/engine/generate/OllamaClient';
import { redactingClient, type Redactor } from '../../src/engine/generate/redactBoundary';
import { fixturesDir } from './paths';
import type { OllamaTestServer } from './ollamaServer';

export interface CorpusCase {
  id: string;
  kind: 'secret' | 'lookalike';
  lang: 'python' | 'java';
  /** The form, in words (`annotated assignment`, `UUID`). */
  form: string;
  /** The code as a file holds it. */
  code: string;
  /** The credential (secret) or the text that must arrive intact (look-alike). */
  value: string;
}

/** `corpus` (the rules were written against it) or `heldout` (written after the rules were fixed, never tuned on). */
export function loadSecretCorpus(name: 'corpus' | 'heldout' = 'corpus'): CorpusCase[] {
  return JSON.parse(readFileSync(join(fixturesDir, 'secrets', `${name}.json`), 'utf8')) as CorpusCase[];
}

/** Retrieved code around the case: fixture files up to about 6,000 characters, the size of a 2,048-token prompt. */
function context(files: readonly string[]): string {
  return files
    .map((f) => readFileSync(join(fixturesDir, f), 'utf8'))
    .join('\n')
    .slice(0, 6000);
}
const CONTEXT: Record<CorpusCase['lang'], string> = {
  python: context([
    'pyshop/pyshop/payments.py',
    'pyshop/pyshop/models.py',
    'pyshop/pyshop/util.py',
    'pyshop/pyshop/config.py',
    'pyshop/pyshop/i18n.py',
  ]),
  java: context(
    [
      'service/CheckoutService.java',
      'App.java',
      'model/Cart.java',
      'model/Product.java',
      'payment/StripeGateway.java',
      'payment/Gateways.java',
    ].map((f) => `javashop/src/main/java/com/example/shop/${f}`),
  ),
};

/** The prompt a completion in the case's file sends (a retrieved snippet, then the file up to the cursor). */
export function corpusPrompt(c: CorpusCase): string {
  const comment = c.lang === 'python' ? '#' : '//';
  return `${comment} Retrieved from the repository:\n${CONTEXT[c.lang]}\n${comment} The file being completed:\n${c.code}\n${c.lang === 'python' ? 'result = ' : '        return '}`;
}

/** Whether `value` is in what the server received (as written, or JSON-escaped once). */
export function arrived(sent: string, value: string): boolean {
  return sent.includes(value) || sent.includes(JSON.stringify(value).slice(1, -1));
}

export interface CorpusScore {
  secrets: number;
  lookalikes: number;
  /** Share of the credential forms that never reached the server. */
  recall: number;
  /** Share of the look-alikes that did not reach it intact. */
  falsePositiveRate: number;
  missed: string[];
  overRedacted: string[];
  /** Time of the redactor per prompt. */
  medianMs: number;
  p95Ms: number;
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** Every case's prompt through the boundary with `redactor` to `server` (an Ollama-compatible capturing server). */
export async function scoreThroughBoundary(
  cases: readonly CorpusCase[],
  redactor: Redactor,
  server: OllamaTestServer,
  model: string,
  signal: AbortSignal,
): Promise<CorpusScore> {
  const times: number[] = [];
  const timed: Redactor = async (text) => {
    const t0 = performance.now();
    const r = await redactor(text);
    times.push(performance.now() - t0);
    return r;
  };
  const client = redactingClient(new OllamaClient({ host: server.url, model, family: 'plain', timeoutMs: 10_000 }), timed);
  const missed: string[] = [];
  const overRedacted: string[] = [];
  for (const c of cases) {
    const before = server.requests.length;
    await client.generate({ prompt: corpusPrompt(c), maxNewTokens: 4, stop: [] }, signal);
    const sent = JSON.stringify(server.requests.slice(before).map((q) => q.body));
    if (server.requests.length === before) throw new Error(`no request reached the server for ${c.id}`);
    if (c.kind === 'secret' && arrived(sent, c.value)) missed.push(c.id);
    if (c.kind === 'lookalike' && !arrived(sent, c.value)) overRedacted.push(c.id);
  }
  const secrets = cases.filter((c) => c.kind === 'secret').length;
  const lookalikes = cases.length - secrets;
  const sorted = [...times].sort((a, b) => a - b);
  return {
    secrets,
    lookalikes,
    recall: secrets ? (secrets - missed.length) / secrets : 1,
    falsePositiveRate: lookalikes ? overRedacted.length / lookalikes : 0,
    missed,
    overRedacted,
    medianMs: quantile(sorted, 0.5),
    p95Ms: quantile(sorted, 0.95),
  };
}

/** A case of the v2 corpus (test/fixtures/secrets-v2): the file being completed, up to the cursor. */
export interface CorpusV2Case {
  id: string;
  lang: 'python' | 'java';
  /** The form, in words (`azure sas signature`, `negative: labels`). */
  form: string;
  /** Values that must not reach the model (none in a negative case). */
  secrets: string[];
  /** Values that must arrive intact: the canary of a credential case, the look-alikes of a negative one. */
  keep: string[];
  code: string;
}

/**
 * `dev` (rules are measured on it) or `heldout` (scored once, never tuned on), of the second round (test/fixtures/secrets-v2) or the
 * third (secrets-v3: forms written without sight of the rules or of the earlier rounds, and used as other files too).
 */
export function loadSecretCorpusV2(part: 'dev' | 'heldout', round: 'v2' | 'v3' | 'v4' | 'v5' = 'v2'): CorpusV2Case[] {
  const text = readFileSync(join(fixturesDir, `secrets-${round}`, `${part}.txt`), 'utf8');
  return text
    .split(/^@@@ /m)
    .slice(1)
    .map((block) => {
      const [head = '', ...rest] = block.split('\n');
      const [id = '', lang = '', form = ''] = head.split('|').map((s) => s.trim());
      const sep = rest.indexOf('---');
      if (sep < 0 || (lang !== 'python' && lang !== 'java')) throw new Error(`bad case ${id}`);
      const meta = rest.slice(0, sep);
      const values = (key: string): string[] => meta.filter((l) => l.startsWith(`${key}: `)).map((l) => l.slice(key.length + 2));
      return {
        id,
        lang,
        form,
        secrets: values('secret'),
        keep: values('keep'),
        code: rest
          .slice(sep + 1)
          .join('\n')
          .replace(/\s+$/, ''),
      };
    });
}

/** The prompt a completion at the end of the case's code sends: retrieved code, then the file up to the cursor. */
export function corpusV2Prompt(c: CorpusV2Case): string {
  const comment = c.lang === 'python' ? '#' : '//';
  return `${comment} Retrieved from the repository:\n${CONTEXT[c.lang]}\n${comment} The file being completed:\n${c.code}`;
}

export interface CorpusV2Score {
  secrets: number;
  /** Share of the credential values that never reached the server. */
  recall: number;
  /** Look-alike values of the negative cases, and the share that did not arrive intact. */
  negatives: number;
  falsePositiveRate: number;
  /** Canaries of the credential cases, and the share that did not arrive intact. */
  canaries: number;
  canaryLossRate: number;
  missed: string[];
  overRedacted: string[];
  medianMs: number;
  p95Ms: number;
}

/** Scores `redact`'s output for every case (a credential counts once per value; `sentOf` gives what reached the model). */
export async function scoreCorpusV2(
  cases: readonly CorpusV2Case[],
  sentOf: (prompt: string, c: CorpusV2Case) => Promise<string>,
): Promise<Omit<CorpusV2Score, 'medianMs' | 'p95Ms'>> {
  const missed: string[] = [];
  const overRedacted: string[] = [];
  let secrets = 0;
  let negatives = 0;
  let canaries = 0;
  let lostNeg = 0;
  let lostCanary = 0;
  for (const c of cases) {
    const sent = await sentOf(corpusV2Prompt(c), c);
    for (const v of c.secrets) {
      secrets++;
      if (arrived(sent, v)) missed.push(`${c.id}:${v.slice(0, 12)}`);
    }
    for (const v of c.keep) {
      const negative = c.secrets.length === 0;
      if (negative) negatives++;
      else canaries++;
      if (!arrived(sent, v)) {
        overRedacted.push(`${c.id}:${v.slice(0, 16)}`);
        if (negative) lostNeg++;
        else lostCanary++;
      }
    }
  }
  return {
    secrets,
    recall: secrets ? (secrets - missed.length) / secrets : 1,
    negatives,
    falsePositiveRate: negatives ? lostNeg / negatives : 0,
    canaries,
    canaryLossRate: canaries ? lostCanary / canaries : 0,
    missed,
    overRedacted,
  };
}

/** Every v2 case's prompt through the boundary with `redactor` to the capturing `server`. */
export async function scoreV2ThroughBoundary(
  cases: readonly CorpusV2Case[],
  redactor: Redactor,
  server: OllamaTestServer,
  model: string,
  signal: AbortSignal,
): Promise<CorpusV2Score> {
  const times: number[] = [];
  const timed: Redactor = async (text) => {
    const t0 = performance.now();
    const r = await redactor(text);
    times.push(performance.now() - t0);
    return r;
  };
  const client = redactingClient(new OllamaClient({ host: server.url, model, family: 'plain', timeoutMs: 10_000 }), timed);
  const score = await scoreCorpusV2(cases, async (prompt, c) => {
    const before = server.requests.length;
    await client.generate({ prompt, maxNewTokens: 4, stop: [] }, signal);
    if (server.requests.length === before) throw new Error(`no request reached the server for ${c.id}`);
    return JSON.stringify(server.requests.slice(before).map((q) => q.body));
  });
  const sorted = [...times].sort((a, b) => a - b);
  return { ...score, medianMs: quantile(sorted, 0.5), p95Ms: quantile(sorted, 0.95) };
}
