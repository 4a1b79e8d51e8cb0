// One symbol table per knowledge base: dataflow retrieval and receiver typing read the same one,
// and both see a change of the knowledge base.
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { KnowledgeBase } from '../../../src/engine/kb/KnowledgeBase';
import { DataflowRetriever } from '../../../src/engine/retrieve/dataflow/dataflowRetrieve';
import { ReceiverTyper } from '../../../src/engine/check/receiverMembers';
import { lastLinesQuery } from '../../../src/engine/query/lastLinesQuery';
import { parsers } from '../retrieve/retrieveFixtures';
import { tempDir } from '../../helpers/paths';

function write(root: string, path: string, text: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

void test('dataflow retrieval and receiver typing share the knowledge base symbol table, which follows its changes', async () => {
  const dir = tempDir();
  const signal = new AbortController().signal;
  try {
    write(dir.path, 'tools/__init__.py', '');
    write(dir.path, 'tools/b.py', 'def old_thing():\n    return 1\n');
    const kb = await KnowledgeBase.open({ repoRoot: dir.path, parsers: await parsers() });
    await kb.index(undefined, new AbortController().signal);
    const p = await parsers();
    const df = new DataflowRetriever(kb, p);
    const typer = new ReceiverTyper(kb, p);
    const file = { path: 'main.py', lang: 'python' as const, prefix: 'from tools import b\nb.' };
    const retrieved = async (): Promise<string[]> =>
      (await df.retrieve({ file, query: lastLinesQuery(file.prefix, 10), topJ: 15 }, signal)).results.map(
        (r) => `${r.snippet.id}: ${r.snippet.text}`,
      );
    const members = (): string[] => [...(typer.membersAt(file, signal)?.names ?? [])].filter((n) => n.endsWith('_thing'));
    await df.prepare();
    const table = kb.symbols.table();
    assert.deepEqual(members(), ['old_thing']);
    assert.deepEqual(await retrieved(), ['tools/b.py#module: # tools/b.py\ndef old_thing(): ...']);
    assert.equal(kb.symbols.table(), table, 'both read the one table');

    write(dir.path, 'tools/b.py', 'def new_thing():\n    return 2\n');
    await kb.updateFile('tools/b.py');
    assert.deepEqual(members(), ['new_thing']);
    // The module summary was built from the old table: it is built again from the new one.
    assert.deepEqual(await retrieved(), ['tools/b.py#module: # tools/b.py\ndef new_thing(): ...']);
    assert.notEqual(kb.symbols.table(), table);
    df.dispose();
    typer.dispose();
    kb.dispose();
  } finally {
    dir.cleanup();
  }
});

void test('a module inside a package is not the standard library module of its last name: `import typing as t` in flask is not flask/typing.py', async () => {
  const dir = tempDir();
  const signal = new AbortController().signal;
  try {
    // Flask's layout: flask/typing.py defines its own callables; flask/app.py imports the standard library's typing as t.
    write(dir.path, 'flask/__init__.py', '');
    write(dir.path, 'flask/typing.py', 'AfterRequestCallable = int\nTemplateFilterCallable = int\n');
    write(dir.path, 'scripts/helpers.py', 'def shared_step():\n    return 1\n');
    const kb = await KnowledgeBase.open({ repoRoot: dir.path, parsers: await parsers() });
    await kb.index(undefined, signal);
    const typer = new ReceiverTyper(kb, await parsers());
    const membersAt = (path: string, prefix: string): string[] | undefined => {
      const names = typer.membersAt({ path, lang: 'python', prefix }, signal)?.names;
      return names ? [...names].sort() : undefined;
    };
    // The standard library's typing is not in the repository: `t.` is not typed (the model writes t.TypeVar freely).
    assert.equal(membersAt('flask/app.py', 'import typing as t\nt.'), undefined);
    // The package's own module, imported as such, is typed.
    assert.deepEqual(
      membersAt('flask/app.py', 'from . import typing as ft\nft.')?.filter((n) => n.endsWith('Callable')),
      ['AfterRequestCallable', 'TemplateFilterCallable'],
    );
    assert.deepEqual(
      membersAt('flask/app.py', 'import flask.typing as ft\nft.')?.filter((n) => n.endsWith('Callable')),
      ['AfterRequestCallable', 'TemplateFilterCallable'],
    );
    // Outside packages a folder's module keeps its short name (a script imports its neighbour).
    assert.ok(membersAt('scripts/run.py', 'import helpers\nhelpers.')?.includes('shared_step'));
    typer.dispose();
    kb.dispose();
  } finally {
    dir.cleanup();
  }
});
