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
  return files.map((f) => readFileSync(join(fixturesDir, f), 'utf8')).join('\n').slice(0, 6000);
}
const CONTEXT: Record<CorpusCase['lang'], string> = {
  python: context(['pyshop/pyshop/payments.py', 'pyshop/pyshop/models.py', 'pyshop/pyshop/util.py', 'pyshop/pyshop/config.py', 'pyshop/pyshop/i18n.py']),
  java: context(['service/CheckoutService.java', 'App.java', 'model/Cart.java', 'model/Product.java', 'payment/StripeGateway.java', 'payment/Gateways.java'].map((f) => `javashop/src/main/java/com/example/shop/${f}`)),
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
export async function scoreThroughBoundary(cases: readonly CorpusCase[], redactor: Redactor, server: OllamaTestServer, model: string, signal: AbortSignal): Promise<CorpusScore> {
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
