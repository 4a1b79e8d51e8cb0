// `node --import tsx scripts/benchSecrets.ts [--corpus corpus|heldout|v2-dev|v2-heldout|v3-dev|v3-heldout|v4-heldout|v5-heldout]`: the measure of
// secret detection, not a test. Every case of test/fixtures/secrets/corpus.json (or heldout.json,
// cases written after the rules were fixed) (credential forms and look-alikes, each inside a
// prompt of about 6,000 characters of fixture code) goes through the real redaction boundary
// (generate/redactBoundary) to the capturing test model server, once per rule set:
//   (a) the hand-written patterns before secretlint (src/engine/prompt/redact.ts at LEGACY_COMMIT),
//   (b) secretlint's recommended preset alone, (c) the project's generic rules alone,
//   (d) the chosen set: the generic rules, then secretlint.
// It prints recall (share of the credentials that never reached the server), the false-positive
// rate (share of the look-alikes that did not arrive intact) and the redactor's median and p95
// time per prompt (after one warm-up call; secretlint's one-time load is printed apart). With
// `--scan DIR` it also counts the values each set redacts in the .py and .java files under DIR
// (ordinary code, e.g. /usr/lib/python3.11: nearly every redaction there is a false positive).
// `--corpus v2-dev` / `v2-heldout` score test/fixtures/secrets-v2 (the file being completed, up to the
// cursor; every credential value counts, and every look-alike and canary must arrive intact) with the
// candidates of the second round: the rules at V2_BASE_COMMIT + secretlint, secretlint alone, the v2
// context rules alone, the token-shape rule alone, the own rules without the token-shape rule, the chosen set.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { redactGeneric, redactSecrets, redactWithSecretlint, type Redacted } from '../src/engine/prompt/redact';
import { GENERIC_RULES, redactRules, SHAPE_RULES, V2_CONTEXT_RULES } from '../src/engine/prompt/secretRules';
import type { Redactor } from '../src/engine/generate/redactBoundary';
import { startOllamaTestServer } from '../test/helpers/ollamaServer';
import {
  corpusPrompt,
  corpusV2Prompt,
  loadSecretCorpus,
  loadSecretCorpusV2,
  scoreThroughBoundary,
  scoreV2ThroughBoundary,
  type CorpusScore,
  type CorpusV2Case,
  type CorpusV2Score,
} from '../test/helpers/secretCorpus';
import { repoRoot } from '../test/helpers/paths';

/** The last commit with the hand-written patterns. */
const LEGACY_COMMIT = 'fe9dad1';
const MODEL = 'qwen2.5-coder:1.5b-base';
/** The last commit with the rules the v2 corpus was written against. */
const V2_BASE_COMMIT = '7e9dae0';
/** The last commit with the rules the v3 corpus was written against. */
const V3_BASE_COMMIT = 'bdbdccd';
/** The last commit with the rules before the v4 round (the v3 held-out part not yet developed on). */
const V4_BASE_COMMIT = 'e04137c';
/** The rules the v4 held-out part was scored on, before the round that developed on it. */
const V5_BASE_COMMIT = '49c863c';

/** The own rules at V2_BASE_COMMIT, then secretlint (unchanged since). */
async function baseRedactor(dir: string): Promise<Redactor> {
  const source = execFileSync('git', ['show', `${V2_BASE_COMMIT}:src/engine/prompt/secretRules.ts`], { cwd: repoRoot, encoding: 'utf8' });
  const file = join(dir, 'baseSecretRules.ts');
  writeFileSync(file, source);
  const mod = (await import(pathToFileURL(file).href)) as { redactGeneric: (text: string) => Redacted };
  return async (text) => {
    const own = mod.redactGeneric(text);
    const known = await redactWithSecretlint(own.text);
    return { text: known.text, count: own.count + known.count };
  };
}

async function mainV2(part: 'dev' | 'heldout'): Promise<void> {
  const corpus = loadSecretCorpusV2(part);
  const dir = mkdtempSync(join(tmpdir(), 'coderag-bench-secrets-'));
  const server = await startOllamaTestServer(() => Promise.resolve({ text: 'x' }), { models: [MODEL] });
  const signal = new AbortController().signal;
  try {
    await redactWithSecretlint('warm = 1');
    const before = GENERIC_RULES.filter((n) => !V2_CONTEXT_RULES.includes(n) && !SHAPE_RULES.includes(n));
    const sets: Array<[string, Redactor]> = [
      [`(a) rules at ${V2_BASE_COMMIT} + secretlint`, await baseRedactor(dir)],
      ['(b) secretlint recommended preset alone', redactWithSecretlint],
      ['(c) v2 context rules alone', (text) => Promise.resolve(redactRules(text, V2_CONTEXT_RULES))],
      ['(d) token shape in an auth context alone', (text) => Promise.resolve(redactRules(text, SHAPE_RULES))],
      ['(e) own rules without (d)', (text) => Promise.resolve(redactRules(text, [...before, ...V2_CONTEXT_RULES]))],
      ['(f) chosen: all own rules + secretlint', redactSecrets],
    ];
    const chars = corpus.map((c) => corpusV2Prompt(c).length).sort((a, b) => a - b);
    const secrets = corpus.reduce((n, c) => n + c.secrets.length, 0);
    console.log(
      `v2-${part}: ${corpus.length} cases, ${secrets} credential values; prompts ${chars[0]}-${chars.at(-1)} characters (median ${chars[Math.floor(chars.length / 2)]})\n`,
    );
    console.log(
      '| rule set | recall | false positives (look-alikes) | canaries lost | median ms/prompt | p95 ms/prompt | missed | look-alikes or canaries redacted |',
    );
    console.log('|---|---:|---:|---:|---:|---:|---|---|');
    for (const [name, redactor] of sets) {
      await redactor(corpusV2Prompt(corpus[0]!));
      const s = await scoreV2ThroughBoundary(corpus, redactor, server, MODEL, signal);
      const missed = s.missed.length > 6 ? `${s.missed.slice(0, 6).join(', ')} and ${s.missed.length - 6} more` : s.missed.join(', ');
      const lost = s.canaryLossRate * s.canaries;
      console.log(
        `| ${name} | ${(100 * s.recall).toFixed(1)}% (${s.secrets - s.missed.length}/${s.secrets}) | ${(100 * s.falsePositiveRate).toFixed(1)}% (${Math.round(s.falsePositiveRate * s.negatives)}/${s.negatives}) | ${Math.round(lost)}/${s.canaries} | ${s.medianMs.toFixed(2)} | ${s.p95Ms.toFixed(2)} | ${missed || '-'} | ${s.overRedacted.join(', ') || '-'} |`,
      );
    }
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The own rules at `commit` (the build before a round), then today's secretlint. */
async function rulesAt(commit: string, dir: string): Promise<Redactor> {
  const file = join(dir, `rules-${commit}`);
  mkdirSync(file, { recursive: true });
  // The rules' modules at that commit (they were split into several since the first rounds).
  const listed = execFileSync('git', ['ls-tree', '--name-only', `${commit}:src/engine/prompt`], { cwd: repoRoot, encoding: 'utf8' });
  const modules = listed.split('\n').filter((n) => /^(?:secret\w*|tokenFormats)\.ts$/.test(n));
  for (const name of modules) {
    try {
      const source = execFileSync('git', ['show', `${commit}:src/engine/prompt/${name}`], {
        cwd: repoRoot,
        encoding: 'utf8',
        stdio: 'pipe',
      });
      writeFileSync(join(file, name), source);
    } catch {
      // A module the commit did not have yet.
    }
  }
  const mod = (await import(pathToFileURL(join(file, 'secretRules.ts')).href)) as { redactGeneric: (text: string) => Redacted };
  return async (text) => {
    const own = mod.redactGeneric(text);
    const known = await redactWithSecretlint(own.text);
    return { text: known.text, count: own.count + known.count };
  };
}

/**
 * The third or fourth round (test/fixtures/secrets-v3, -v4) as the file being completed: the rules before it (V3_BASE_COMMIT,
 * V4_BASE_COMMIT) with secretlint, secretlint alone and the chosen set, then the chosen set's recall per class (the case's class words).
 */
async function mainRound(round: 'v3' | 'v4' | 'v5', part: 'dev' | 'heldout'): Promise<void> {
  const corpus = loadSecretCorpusV2(part, round);
  const base = { v3: V3_BASE_COMMIT, v4: V4_BASE_COMMIT, v5: V5_BASE_COMMIT }[round];
  const dir = mkdtempSync(join(tmpdir(), 'coderag-bench-secrets-'));
  const server = await startOllamaTestServer(() => Promise.resolve({ text: 'x' }), { models: [MODEL] });
  const signal = new AbortController().signal;
  try {
    await redactWithSecretlint('warm = 1');
    const sets: Array<[string, Redactor]> = [
      [`(a) rules at ${base} + secretlint`, await rulesAt(base, dir)],
      ['(b) secretlint recommended preset alone', redactWithSecretlint],
      ['(c) chosen: all own rules + secretlint', redactSecrets],
    ];
    const secrets = corpus.reduce((n, c) => n + c.secrets.length, 0);
    console.log(`${round}-${part}: ${corpus.length} cases, ${secrets} credential values\n`);
    console.log('| rule set | recall | false positives (look-alikes) | canaries lost | median ms/prompt | p95 ms/prompt |');
    console.log('|---|---:|---:|---:|---:|---:|');
    let chosen: CorpusV2Score | undefined;
    for (const [name, redactor] of sets) {
      await redactor(corpusV2Prompt(corpus[0]!));
      const s = await scoreV2ThroughBoundary(corpus, redactor, server, MODEL, signal);
      chosen = s;
      const lost = s.canaryLossRate * s.canaries;
      console.log(
        `| ${name} | ${(100 * s.recall).toFixed(1)}% (${s.secrets - s.missed.length}/${s.secrets}) | ${(100 * s.falsePositiveRate).toFixed(1)}% (${Math.round(s.falsePositiveRate * s.negatives)}/${s.negatives}) | ${Math.round(lost)}/${s.canaries} | ${s.medianMs.toFixed(2)} | ${s.p95Ms.toFixed(2)} |`,
      );
    }
    console.log('\n| class (chosen set) | cases | credential values | reached the server | look-alikes or canaries lost |');
    console.log('|---|---:|---:|---:|---:|');
    const classes = new Map<string, CorpusV2Case[]>();
    for (const c of corpus) classes.set(c.form, [...(classes.get(c.form) ?? []), c]);
    for (const [form, cases] of [...classes].sort()) {
      const ids = new Set(cases.map((c) => c.id));
      const hit = (list: readonly string[]): number => list.filter((m) => ids.has(m.slice(0, m.indexOf(':')))).length;
      console.log(
        `| ${form} | ${cases.length} | ${cases.reduce((n, c) => n + c.secrets.length, 0)} | ${hit(chosen!.missed)} | ${hit(chosen!.overRedacted)} |`,
      );
    }
    console.log(`\nmissed: ${chosen!.missed.join(', ') || '-'}\nlost: ${chosen!.overRedacted.join(', ') || '-'}`);
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function legacyRedactor(dir: string): Promise<Redactor> {
  const source = execFileSync('git', ['show', `${LEGACY_COMMIT}:src/engine/prompt/redact.ts`], { cwd: repoRoot, encoding: 'utf8' });
  const file = join(dir, 'legacyRedact.ts');
  writeFileSync(file, source);
  const mod = (await import(pathToFileURL(file).href)) as { redactSecrets: (text: string) => Redacted };
  return (text) => Promise.resolve(mod.redactSecrets(text));
}

/** Values `redactor` replaces in the .py and .java files under `dir`. */
async function scan(dir: string, redactor: Redactor): Promise<{ files: number; lines: number; values: number }> {
  const files: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const s = statSync(p, { throwIfNoEntry: false });
      if (s?.isDirectory() && name !== '__pycache__' && name !== 'site-packages' && name !== 'node_modules') walk(p);
      else if (s?.isFile() && /\.(py|java)$/.test(name)) files.push(p);
    }
  };
  walk(dir);
  let lines = 0;
  let values = 0;
  for (const f of files) {
    const text = readFileSync(f, 'utf8');
    lines += text.split('\n').length;
    values += (await redactor(text)).count;
  }
  return { files: files.length, lines, values };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { corpus: { type: 'string', default: 'corpus' }, scan: { type: 'string' } } });
  if (values.corpus === 'v3-dev' || values.corpus === 'v3-heldout') return mainRound('v3', values.corpus === 'v3-dev' ? 'dev' : 'heldout');
  if (values.corpus === 'v4-heldout') return mainRound('v4', 'heldout');
  if (values.corpus === 'v5-heldout') return mainRound('v5', 'heldout');
  if (values.corpus === 'v2-dev' || values.corpus === 'v2-heldout') return mainV2(values.corpus === 'v2-dev' ? 'dev' : 'heldout');
  if (values.corpus !== 'corpus' && values.corpus !== 'heldout') throw new Error('--corpus must be corpus, heldout, v2-dev or v2-heldout');
  const corpus = loadSecretCorpus(values.corpus);
  const dir = mkdtempSync(join(tmpdir(), 'coderag-bench-secrets-'));
  const server = await startOllamaTestServer(() => Promise.resolve({ text: 'x' }), { models: [MODEL] });
  const signal = new AbortController().signal;
  try {
    const t0 = performance.now();
    await redactWithSecretlint('warm = 1');
    const loadMs = performance.now() - t0;
    const sets: Array<[string, Redactor]> = [
      [`(a) hand-written patterns (${LEGACY_COMMIT})`, await legacyRedactor(dir)],
      ['(b) secretlint recommended preset alone', redactWithSecretlint],
      ['(c) generic rules alone', (text) => Promise.resolve(redactGeneric(text))],
      ['(d) chosen: generic rules + secretlint', redactSecrets],
    ];
    const prompts = corpus.map(corpusPrompt);
    const chars = prompts.map((p) => p.length).sort((a, b) => a - b);
    console.log(
      `${values.corpus}: ${corpus.filter((c) => c.kind === 'secret').length} credential forms, ${corpus.filter((c) => c.kind === 'lookalike').length} look-alikes; prompts ${chars[0]}-${chars.at(-1)} characters (median ${chars[Math.floor(chars.length / 2)]}); secretlint's first load ${loadMs.toFixed(0)} ms\n`,
    );
    console.log(
      `| rule set | recall | false positives | median ms/prompt | p95 ms/prompt | missed | look-alikes redacted |${values.scan ? ` redacted in ${values.scan} |` : ''}`,
    );
    console.log(`|---|---:|---:|---:|---:|---|---|${values.scan ? '---|' : ''}`);
    const scores: CorpusScore[] = [];
    for (const [, redactor] of sets) {
      await redactor(prompts[0]!);
      scores.push(await scoreThroughBoundary(corpus, redactor, server, MODEL, signal));
    }
    // The scans after every corpus run: a long pause would leave the kept-alive socket to the test server stale.
    const scans = values.scan ? await Promise.all(sets.map(([, redactor]) => scan(values.scan!, redactor))) : [];
    sets.forEach(([name], i) => {
      const s = scores[i]!;
      const scanned = scans[i];
      const missed = s.missed.length > 8 ? `${s.missed.slice(0, 8).join(', ')} and ${s.missed.length - 8} more` : s.missed.join(', ');
      console.log(
        `| ${name} | ${(100 * s.recall).toFixed(1)}% (${s.secrets - s.missed.length}/${s.secrets}) | ${(100 * s.falsePositiveRate).toFixed(1)}% (${s.overRedacted.length}/${s.lookalikes}) | ${s.medianMs.toFixed(2)} | ${s.p95Ms.toFixed(2)} | ${missed || '-'} | ${s.overRedacted.join(', ') || '-'} |${scanned ? ` ${scanned.values} in ${scanned.lines} lines of ${scanned.files} files |` : ''}`,
      );
    });
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
