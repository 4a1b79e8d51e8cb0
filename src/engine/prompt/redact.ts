// Credentials are replaced before any text leaves for a model (generate/redactBoundary.ts is the
// one place that calls this for the wire). The rule set: secretlint's recommended preset
// (@secretlint/core 12.0.0 in-process, the last release for Node 20; maintained shapes of AWS, GCP,
// GitHub, GitLab, Slack, OpenAI, Anthropic, Hugging Face, Databricks, Vault, Grafana, npm, SendGrid,
// Shopify, 1Password, Linear, Notion, Vercel keys, private keys, database connection strings and
// basic-auth URLs) for known token formats, then the project's own rules
// (secretRules.ts) for the generic forms no format scanner knows: a literal bound to a name, key,
// property or header that says secret, URL userinfo, comments stating a password, config lines,
// random literals. scripts/benchSecrets.ts on test/fixtures/secrets/corpus.json (49 credential
// forms, 45 look-alikes, ~6,000-character prompts): recall / false positives / median ms per prompt
// 36.7% / 20.0% / 0.47 for the old hand-written patterns, 12.2% / 0% / 0.59 for the preset alone
// (it knows formats, not names), 98.0% / 0% / 0.77 for the own rules alone (they miss a Slack
// webhook) and 100% / 0% / 1.09 for this set; on heldout.json, written after the rules, this set
// first scored 81.8% / 4.3% (setter and builder calls, INI text in a string, `token <hex>`, a
// `sha256:` digest), now 100% / 0%. In ordinary code (`--scan /usr/lib/python3.11`, 305k lines)
// it redacts 2 values (the old patterns 167, mostly paths and format strings taken for random).
// Kept on purpose: hex digests, UUIDs, URLs and paths, placeholders (`${DB_PASSWORD}`, `<token>`,
// `changeme`), names of settings (`"DB_PASSWORD"`), empty values. On the v2 corpus
// (test/fixtures/secrets-v2: forms written without sight of the first corpus) this set went from
// 27.9% to 100% recall on dev (61 values, 0 of 29 look-alikes) and scored 95.7% (44/46, 0 of 10) on
// its held-out part, once; see BENCHMARKS "Secret redaction". The third corpus (test/fixtures/secrets-v3):
// 100% of 158 dev values, 83% of 100 held-out values scored once (BENCHMARKS "Trust round: forms nobody listed").
import { performance } from 'node:perf_hooks';
import { getLogger } from '../util/logger';
import { errorMessage } from '../util/errors';
import { REDACTED, redactGeneric, type Redacted } from './secretRules';

export { REDACTED, isSecretName, looksRandom, shannonEntropy, redactGeneric, type Redacted } from './secretRules';

const log = getLogger('redact');

type LintSource = typeof import('@secretlint/core').lintSource;
type CoreConfig = Parameters<LintSource>[0]['options']['config'];

let secretlint: Promise<{ lint: LintSource; config: CoreConfig }> | undefined;

/**
 * secretlint's profiler marks the start and end of every rule of every lint on Node's performance timeline and, in an observer,
 * keeps each mark in an array it never empties and scans whole at every new mark: in a long-lived server each lint costs more than
 * the one before, and the timeline and the array grow without end (three 9,400-character pieces with the event loop let through
 * between them: 4.9 ms per prompt at the 40th prompt, 25 ms at the 80th; 0.9 ms with the marks dropped). Its marks, named
 * `…::start` / `…::end` (with `||id`), are dropped here; every other mark is made as before.
 */
function dropProfilerMarks(): void {
  const mark = performance.mark.bind(performance);
  const profilerMark = /::(?:start|end)(?:\|\||$)/;
  performance.mark = ((name: string, options?: Parameters<typeof performance.mark>[1]) =>
    profilerMark.test(name) ? undefined : mark(name, options)) as typeof performance.mark;
}

/** The preset, loaded once (ESM, so through import()). */
function loadSecretlint(): Promise<{ lint: LintSource; config: CoreConfig }> {
  if (secretlint === undefined) dropProfilerMarks();
  secretlint ??= Promise.all([import('@secretlint/core'), import('@secretlint/secretlint-rule-preset-recommend')]).then(
    ([core, preset]) => ({
      lint: core.lintSource,
      config: {
        rules: [
          {
            id: '@secretlint/secretlint-rule-preset-recommend',
            rule: preset.creator,
            rules: [
              // AWS access key ids are reported only with this option.
              { id: '@secretlint/secretlint-rule-aws', options: { enableIDScanRule: true } },
              // A `secretlint-disable` comment in a repository file must not turn redaction off for the rest of the prompt.
              { id: '@secretlint/secretlint-rule-filter-comments', disabled: true },
            ],
          },
        ],
      } as CoreConfig,
    }),
  );
  return secretlint;
}

/**
 * Characters secretlint reads in one turn of the event loop: its rules run synchronously (0.1-0.5 ms
 * for a 6,000-character prompt, but 224 ms for 66,000 characters of `retries=3, ` repeated, under 10
 * ms per 12,000-character piece of it). A prompt up to this size is one piece, with no extra turn.
 */
const CHUNK_CHARS = 12_000;

/** `text` cut at line ends into pieces of about CHUNK_CHARS (a longer line is a piece of its own). */
function chunks(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + CHUNK_CHARS);
    if (end < text.length) {
      const nl = text.lastIndexOf('\n', end);
      end = nl > start ? nl + 1 : Math.max(end, text.indexOf('\n', end) + 1 || text.length);
    }
    out.push(text.slice(start, end));
    start = end;
  }
  return out;
}

/** The values secretlint reports in `text`, a piece at a time with the event loop let through between pieces. */
async function secretlintValues(text: string): Promise<string[]> {
  const values: string[] = [];
  const pieces = chunks(text);
  for (let i = 0; i < pieces.length; i++) {
    if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    values.push(...(await secretlintPiece(pieces[i]!)));
  }
  return values;
}

/**
 * The values secretlint reports in `text`: each finding's reported range, or the value its message data names when the range does not hold
 * it.
 */
async function secretlintPiece(text: string): Promise<string[]> {
  const { lint, config } = await loadSecretlint();
  const result = await lint({
    source: { filePath: '/prompt.txt', content: text, contentType: 'text' },
    options: { config, noPhysicFilePath: true },
  });
  const values: string[] = [];
  for (const m of result.messages) {
    const ranged = text.slice(m.range[0], m.range[1]);
    const data = Object.values((m as { data?: Record<string, unknown> }).data ?? {}).filter(
      (v): v is string => typeof v === 'string' && v.length >= 8 && text.includes(v) && !/^[A-Za-z ()]+$/.test(v),
    );
    // Some rules report the start of the whole match with the value's length (AWS secret keys): the data names the value.
    const value = data.includes(ranged) ? ranged : (data.sort((a, b) => b.length - a.length)[0] ?? ranged);
    // A finding that holds the placeholder (a connection string whose password the own rules replaced) has nothing left to hide.
    if (value.length >= 8 && !value.includes(REDACTED)) values.push(value);
  }
  return values;
}

/** secretlint's recommended preset alone. */
export async function redactWithSecretlint(text: string): Promise<Redacted> {
  let out = text;
  let count = 0;
  for (const value of await secretlintValues(text)) {
    if (!out.includes(value)) continue;
    const parts = out.split(value);
    count += parts.length - 1;
    out = parts.join(REDACTED);
  }
  return { text: out, count };
}

/** Load secretlint's preset now (a host at start-up), so the first completion does not wait for it. */
export function preloadRedaction(): Promise<void> {
  return loadSecretlint().then(
    () => undefined,
    (e: unknown) => log.warn(`secretlint did not load (the generic rules redact alone): ${errorMessage(e)}`),
  );
}

/** Results of recent texts: the trace and the wire redact the same prompt, the reranker the same snippet in several windows. */
const cache = new Map<string, Redacted>();
const CACHE_ENTRIES = 128;
/** Texts longer than this are not kept (at most about 16 MB held: 128 entries, text and result). */
const CACHE_CHARS = 32_000;

function remember(text: string, result: Redacted): void {
  if (text.length > CACHE_CHARS) return;
  if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
  cache.set(text, result);
  // Redacting the result again changes nothing: a caller that passes it on costs no second pass.
  if (result.count > 0 && !cache.has(result.text)) cache.set(result.text, { text: result.text, count: 0 });
}

/**
 * The chosen rule set: the project's generic rules, then secretlint's preset over what they left.
 * A failure of secretlint keeps the generic rules' result and is logged.
 */
export async function redactSecrets(text: string): Promise<Redacted> {
  if (text === '') return { text, count: 0 };
  const hit = cache.get(text);
  if (hit) return hit;
  const generic = redactGeneric(text);
  let result = generic;
  try {
    const known = await redactWithSecretlint(generic.text);
    result = { text: known.text, count: generic.count + known.count };
  } catch (e) {
    log.warn(`secretlint failed; the generic rules alone redacted this text: ${errorMessage(e)}`);
  }
  remember(text, result);
  return result;
}
