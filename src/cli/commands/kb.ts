// `coderag kb <repo> --name NAME`: print the stubs of the knowledge-base items with that name.
import type { CliCommand } from '../command';
import { parseCommandArgs, UsageError } from '../command';
import { requireRepo } from '../context';
import { indexedKnowledgeBase, indexOptions } from './index';
import { UserError } from '../../engine/util/errors';
import { showControlChars, terminalJson } from '../../engine/util/outsideText';

export const kbCommand: CliCommand = {
  name: 'kb',
  usage: 'kb <repo> --name NAME [--json] [--index-dir DIR]   (NAME or Class.member)',
  async run(argv, signal) {
    const { values, positionals } = parseCommandArgs(argv, { ...indexOptions, name: { type: 'string' } });
    if (positionals.length !== 1) throw new UsageError('expected exactly one repository folder');
    const name = values.name as string | undefined;
    if (!name) throw new UsageError('--name is required');
    const repo = requireRepo(positionals[0]);
    const { kb } = await indexedKnowledgeBase(repo, values, signal);
    const items = kb.itemsNamed(name);
    const classes = kb.classes().filter((c) => c.name === name || c.qualifiedName === name);
    if (items.length === 0 && classes.length === 0) {
      kb.dispose();
      throw new UserError(`no knowledge-base item named "${name}" in ${repo}`);
    }
    if (values.json) {
      process.stdout.write(terminalJson({ classes, items }) + '\n');
    } else {
      for (const c of classes) {
        // A class is structure, not an item: show its header and the signatures of its members.
        const members = kb.items().filter((i) => i.path === c.path && i.className === c.qualifiedName);
        const comment = c.lang === 'python' ? '#' : '//';
        const body = members.map((m) => `    ${m.signature}`).join('\n');
        // Repository text goes to a terminal: its control characters are shown, never obeyed.
        process.stdout.write(
          showControlChars(
            `=== ${c.kind} ${c.qualifiedName}  ${c.path}:${c.range.startLine + 1}-${c.range.endLine + 1}\n${comment} ` +
              `${c.path}\n${c.header}\n${body}\n\n`,
          ),
        );
      }
      for (const item of items) {
        process.stdout.write(
          showControlChars(
            `=== ${item.kind} ${item.qualifiedName}  ${item.path}:${item.range.startLine + 1}-${item.range.endLine + 1}\n${item.text}\n\n`,
          ),
        );
      }
    }
    kb.dispose();
    return 0;
  },
};
