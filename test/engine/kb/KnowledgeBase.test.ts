import test from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KnowledgeBase, type KbChangeEvent } from '../../../src/engine/kb/KnowledgeBase';
import { loadParsers, type Parsers } from '../../../src/engine/kb/parsers';
import { indexFilePath, indexFolderFor } from '../../../src/engine/kb/store';
import { copyFixture, grammarsDir, tempDir } from '../../helpers/paths';
import { INDEX_CORRUPTIONS } from '../../faults/helpers';

let parsersPromise: Promise<Parsers> | undefined;
const parsers = (): Promise<Parsers> => (parsersPromise ??= loadParsers(grammarsDir));

async function setup(
  fixture: string,
): Promise<{ repo: string; indexFolder: string; open: () => Promise<KnowledgeBase>; cleanup: () => void }> {
  const repo = copyFixture(fixture);
  const cache = tempDir();
  const indexFolder = indexFolderFor(cache.path, repo.path);
  const p = await parsers();
  return {
    repo: repo.path,
    indexFolder,
    open: () => KnowledgeBase.open({ repoRoot: repo.path, indexFolder, parsers: p }),
    cleanup: () => {
      repo.cleanup();
      cache.cleanup();
    },
  };
}

for (const fixture of ['pyshop', 'javashop']) {
  test(`${fixture}: a second index run reuses every file from disk; editing one file re-parses only it`, async () => {
    const s = await setup(fixture);
    try {
      const kb1 = await s.open();
      const cold = await kb1.index(undefined, new AbortController().signal);
      assert.equal(cold.savedIndex, 'missing');
      assert.ok(cold.files > 3, 'fixture has several files');
      assert.equal(cold.parsed, cold.files);
      kb1.dispose();

      const kb2 = await s.open();
      const events: KbChangeEvent[] = [];
      kb2.onDidChange((e) => events.push(e));
      const warm = await kb2.index(undefined, new AbortController().signal);
      assert.equal(warm.savedIndex, 'loaded');
      assert.equal(warm.parsed, 0);
      assert.equal(warm.reused, cold.files);
      assert.deepEqual(warm.items, cold.items);
      assert.deepEqual(events, [], 'nothing changed, no event');

      const target = kb2.paths().find((p) => (kb2.file(p)?.items.length ?? 0) > 0);
      assert.ok(target);
      const addition = fixture === 'pyshop' ? '\n\ndef added_by_test():\n    return 42\n' : '\nclass AddedByTest { int addedField; }\n';
      appendFileSync(join(s.repo, target), addition);
      const after = await kb2.index(undefined, new AbortController().signal);
      assert.equal(after.parsed, 1);
      assert.equal(after.reused, cold.files - 1);
      assert.deepEqual(events, [{ changed: [target], removed: [] }]);
      const name = fixture === 'pyshop' ? 'added_by_test' : 'addedField';
      assert.equal(kb2.itemsNamed(name)[0]?.path, target);

      rmSync(join(s.repo, target));
      const removed = await kb2.index(undefined, new AbortController().signal);
      assert.equal(removed.removed, 1);
      assert.equal(removed.files, cold.files - 1);
      assert.deepEqual(kb2.itemsNamed(name), []);
      assert.ok(!kb2.items().some((i) => i.path === target));
      kb2.dispose();
    } finally {
      s.cleanup();
    }
  });
}

test('updateFile and removeFile change one file and fire one event each', async () => {
  const s = await setup('pyshop');
  try {
    const kb = await s.open();
    await kb.index(undefined, new AbortController().signal);
    const events: KbChangeEvent[] = [];
    kb.onDidChange((e) => events.push(e));
    const target = kb.paths().find((p) => p.endsWith('.py') && (kb.file(p)?.items.length ?? 0) > 0);
    assert.ok(target);
    const text = readFileSync(join(s.repo, target), 'utf8') + '\n\nUNSAVED_GLOBAL = 1\n';
    assert.equal(await kb.updateFile(target, text), true);
    assert.equal(kb.itemsNamed('UNSAVED_GLOBAL')[0]?.kind, 'globalVariable');
    assert.equal(await kb.updateFile(target, text), false, 'same content, no change');
    assert.equal(await kb.removeFile(target), true);
    assert.deepEqual(kb.itemsNamed('UNSAVED_GLOBAL'), []);
    assert.deepEqual(events, [
      { changed: [target], removed: [] },
      { changed: [], removed: [target] },
    ]);
    // A secret or ignored path never enters, even when pushed directly.
    writeFileSync(join(s.repo, '.env.test'), 'X=1\n');
    assert.equal(await kb.updateFile('.env.test'), false);
    kb.dispose();
  } finally {
    s.cleanup();
  }
});

for (const { label, corrupt, reason } of INDEX_CORRUPTIONS) {
  test(`a ${label} saved index is rebuilt and the reason reported`, async () => {
    const s = await setup('pyshop');
    try {
      const kb1 = await s.open();
      const cold = await kb1.index(undefined, new AbortController().signal);
      kb1.dispose();
      corrupt(indexFilePath(s.indexFolder));
      const kb2 = await s.open();
      const report = await kb2.index(undefined, new AbortController().signal);
      assert.equal(typeof report.savedIndex, 'object');
      assert.match((report.savedIndex as { invalid: string }).invalid, reason);
      assert.equal(report.parsed, cold.files, 'every file re-parsed');
      assert.deepEqual(report.items, cold.items);
      kb2.dispose();
      const kb3 = await s.open();
      assert.equal((await kb3.index(undefined, new AbortController().signal)).savedIndex, 'loaded', 'the rebuilt index is saved again');
      kb3.dispose();
    } finally {
      s.cleanup();
    }
  });
}

test("a save mid-edit that costs a class its extraction keeps the file's previous items until it parses again", async () => {
  const s = await setup('javashop');
  try {
    const kb = await s.open();
    await kb.index(undefined, new AbortController().signal);
    const rel = 'src/main/java/com/example/shop/payment/StripeGateway.java';
    const text = readFileSync(join(s.repo, rel), 'utf8');
    // The class name deleted mid-edit: no class can be read from the file.
    await kb.updateFile(rel, text.replace('class StripeGateway', 'class '));
    assert.ok(kb.itemsNamed('StripeGateway.charge').length > 0, 'the previous items stay');
    await kb.updateFile(rel, text.replace('return charges;', 'return this.charges;'));
    assert.ok(
      kb.itemsNamed('StripeGateway.getCharges')[0]?.text.includes('return this.charges;'),
      'a file that parses again replaces them',
    );
    kb.dispose();
  } finally {
    s.cleanup();
  }
});
