// `node --import tsx scripts/benchJunk.ts --cases F --repos DIR PREDS.jsonl...`: the junk rate of
// predictions files, not a test. For each file, the share of shown (non-empty)
// predictions with each junk kind: a line or block written three times in a row (junk.ts
// cutRepeatedLines), the redaction placeholder in any form, a member a repository-typed receiver
// lacks or a keyword argument a repository callee lacks (re-checked here with the current
// receiver typing, so files of two versions are judged alike), and a prediction that only
// re-types the case's right context. Prints one Markdown row per file.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { grammarsDir } from '../test/helpers/paths';
import { KnowledgeBase } from '../src/engine/kb/KnowledgeBase';
import { loadParsers } from '../src/engine/kb/parsers';
import { ReceiverTyper } from '../src/engine/check/receiverMembers';
import { checkCompletion } from '../src/engine/check/repairCompletion';
import { checkKeywordArguments } from '../src/engine/check/keywordArguments';
import { cutRepeatedLines, placeholderAt, repeatsRightContext } from '../src/engine/generate/postprocess/junk';
import { caseLang, readCases, readPredictions } from '../src/bench/cases';

const KINDS = ['repeat', 'placeholder', 'member', 'rightContext'] as const;
type Kind = (typeof KINDS)[number];

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: { cases: { type: 'string' }, repos: { type: 'string' }, examples: { type: 'boolean' } },
    allowPositionals: true,
  });
  if (!values.cases || !values.repos || positionals.length === 0)
    throw new Error('usage: benchJunk.ts --cases F --repos DIR PREDS.jsonl...');
  const signal = new AbortController().signal;
  const cases = await readCases(values.cases);
  const parsers = await loadParsers(grammarsDir);
  const typers = new Map<string, ReceiverTyper>();
  const typerOf = async (repo: string): Promise<ReceiverTyper> => {
    let t = typers.get(repo);
    if (!t) {
      const kb = await KnowledgeBase.open({ repoRoot: join(values.repos!, repo), parsers });
      await kb.index(undefined, signal);
      t = new ReceiverTyper(kb, parsers);
      typers.set(repo, t);
    }
    return t;
  };
  console.log('| predictions | shown | repeat | placeholder | unknown member/argument | repeats right context | any junk |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const file of positionals) {
    const preds = new Map((await readPredictions(file)).map((p) => [p.task_id, p.prediction]));
    const counts: Record<Kind, number> = { repeat: 0, placeholder: 0, member: 0, rightContext: 0 };
    let shown = 0;
    let any = 0;
    for (const c of cases) {
      const text = preds.get(c.metadata.task_id) ?? '';
      const lang = caseLang(c);
      if (text.trim() === '' || !lang) continue;
      shown++;
      const typer = await typerOf(c.metadata.repository);
      const path = c.metadata.file;
      const kinds: Kind[] = [];
      if (cutRepeatedLines(text).cut) kinds.push('repeat');
      if (placeholderAt(text) >= 0) kinds.push('placeholder');
      const members = checkCompletion(c.prompt, text, (t) => typer.membersAt({ path, lang, prefix: t }, signal), { repair: false, lang });
      const args =
        lang === 'python'
          ? checkKeywordArguments(c.prompt, text, (t) => typer.callAt({ path, lang, prefix: t }, signal), { repair: false })
          : { fixes: [] };
      if (members.fixes.length + args.fixes.length > 0) kinds.push('member');
      if (repeatsRightContext(text, c.right_context ?? '')) kinds.push('rightContext');
      for (const k of kinds) counts[k]++;
      if (kinds.length > 0) {
        any++;
        if (values.examples) console.error(`${file} ${c.metadata.task_id} [${kinds.join(', ')}]: ${JSON.stringify(text.slice(0, 160))}`);
      }
    }
    const pct = (n: number): string => `${n} (${shown ? ((100 * n) / shown).toFixed(1) : '0.0'}%)`;
    console.log(`| ${file} | ${shown} | ${KINDS.map((k) => pct(counts[k])).join(' | ')} | ${pct(any)} |`);
  }
  for (const t of typers.values()) t.dispose();
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
