// `node --import tsx scripts/benchOtherFileSecrets.ts [--part dev|heldout|both] [--round v2|v3|v4|v5]`: credentials in files
// that only retrieval reads, measured, not a test (test/faults/otherFileSecrets.test.ts asserts the dev
// parts). Each case of test/fixtures/secrets-v2 (or -v3) is placed as another file of a repository with a
// canary beside it (test/helpers/otherFileRepo.ts); through the real language server, files that use the
// case's names are completed, to the capturing test model server: line and body mode with no reranker, then
// line mode with the LLM reranker and ProCC's union of similar code; then (`self`) the case's own file as
// the one being edited, at its end and in an empty function added to it, with the LLM reranker. Printed per
// part and configuration:
// the credential values that reached any request (as written, escape- or URL-decoded, or a 12-character
// piece of a value of 16 or more), the share of cases whose canary arrived (in any request, in a
// completion request), and the `keep:` values (canaries of the corpus cases, look-alikes of the negative
// cases) that arrived as written, with those that did not (masked as string values of another file).
import { parseArgs } from 'node:util';
import { loadParsers } from '../src/engine/kb/parsers';
import { grammarsDir } from '../test/helpers/paths';
import { loadSecretCorpusV2 } from '../test/helpers/secretCorpus';
import { leakedSecrets, measureOtherFiles, otherFileFixture, type OtherFileConfig } from '../test/helpers/otherFileRepo';

const MODELS = { completion: 'qwen2.5-coder:1.5b-base', reranker: 'qwen3:8b' };

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { part: { type: 'string', default: 'both' }, round: { type: 'string', default: 'v2' } } });
  if (!['v2', 'v3', 'v4', 'v5'].includes(values.round)) throw new Error('--round must be v2, v3, v4 or v5');
  const round = values.round as 'v2' | 'v3' | 'v4' | 'v5';
  const parts = values.part === 'both' ? (['dev', 'heldout'] as const) : ([values.part as 'dev' | 'heldout'] as const);
  const parsers = await loadParsers(grammarsDir);
  for (const part of parts) {
    const cases = loadSecretCorpusV2(part, round);
    const { placed, root, server, close } = await otherFileFixture(cases, parsers, MODELS);
    try {
      const placements: Record<string, number> = {};
      for (const p of placed) placements[`${p.c.lang} ${p.placement}`] = (placements[`${p.c.lang} ${p.placement}`] ?? 0) + 1;
      const secrets = cases.reduce((s, c) => s + c.secrets.length, 0);
      console.log(`## ${round} ${part}: ${cases.length} cases (${JSON.stringify(placements)}), ${secrets} credential values`);
      for (const config of ['line+body', 'llm+union', 'self'] as OtherFileConfig[]) {
        const t0 = performance.now();
        const m = await measureOtherFiles(root, placed, server, MODELS, config);
        const leaked = leakedSecrets(m.sent, placed);
        const canary = m.runs.filter((r) => r.canary).length;
        const inCompletion = m.runs.filter((r) => r.canaryInCompletion).length;
        // Keep values that the using files do not hold themselves (those arrive with the file being completed).
        const own = (v: string, r: (typeof m.runs)[number]): boolean => r.p.line.text.includes(v) || r.p.body.text.includes(v);
        let keeps = 0;
        let arrived = 0;
        const masked = new Set<string>();
        for (const r of m.runs)
          for (const k of r.p.c.keep) {
            if (own(k, r)) continue;
            keeps++;
            if (r.kept.includes(k)) arrived++;
            else masked.add(`${r.p.c.id}: ${k}`);
          }
        console.log(
          `${config}: ${m.runs.length} completions, ${m.requests.length} requests, ${((performance.now() - t0) / 1000).toFixed(1)} s; ` +
            `credential values reached a request: ${leaked.length}/${secrets}${leaked.length ? ` (${leaked.join('; ')})` : ''}; ` +
            `canary arrived: ${canary}/${m.runs.length} (in a completion request: ${inCompletion}/${m.runs.length}); ` +
            `keep values arrived as written: ${arrived}/${keeps}`,
        );
        console.log(`  keep values not arriving as written (masked): ${[...masked].join(' | ') || 'none'}`);
        // Per class (the case's class words): credential values that reached a request, and cases whose file was not retrieved.
        const classes = new Map<string, { cases: number; secrets: number; leaked: number; notRetrieved: number }>();
        for (const p of placed) {
          const row = classes.get(p.c.form) ?? { cases: 0, secrets: 0, leaked: 0, notRetrieved: 0 };
          row.cases++;
          row.secrets += p.c.secrets.length;
          row.leaked += leakedSecrets(m.sent, [p]).length;
          row.notRetrieved += m.runs.filter((r) => r.p === p && !r.canary).length;
          classes.set(p.c.form, row);
        }
        console.log('  | class | cases | credential values | reached a request | completions whose case file was not retrieved |');
        console.log('  |---|---:|---:|---:|---:|');
        for (const [form, r] of [...classes].sort())
          console.log(`  | ${form} | ${r.cases} | ${r.secrets} | ${r.leaked} | ${r.notRetrieved} |`);
      }
    } finally {
      await close();
    }
  }
}

void main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
