import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, readdirSync } from 'node:fs';
import { indexFilePath, indexFolderFor, INDEX_FORMAT_VERSION, loadIndex, saveIndex, type StoredIndex } from '../../../src/engine/kb/store';
import { tempDir } from '../../helpers/paths';

const sample: StoredIndex = {
  repoRoot: '/repo',
  savedAt: '2026-01-01T00:00:00.000Z',
  files: {
    'a.py': {
      hash: 'abc',
      size: 10,
      lines: 2,
      extraction: { path: 'a.py', lang: 'python', items: [], classes: [], imports: [], hasSyntaxErrors: false },
    },
  },
};

test('an index round-trips through disk and leaves no temp files', async () => {
  const dir = tempDir();
  try {
    const folder = indexFolderFor(dir.path, '/some/repo');
    await saveIndex(folder, sample);
    const loaded = await loadIndex(folder);
    assert.equal(loaded.status, 'ok');
    assert.deepEqual(loaded.status === 'ok' && loaded.index, sample);
    assert.deepEqual(readdirSync(folder), ['kb.index']);
  } finally {
    dir.cleanup();
  }
});

test('an index of many files is written as one JSON document, byte for byte what JSON.stringify gives, and reads back', async () => {
  const dir = tempDir();
  try {
    const files: StoredIndex['files'] = {};
    for (let i = 0; i < 3000; i++) {
      const path = `pkg/m${i}.py`;
      const item = {
        id: `${path}#function:f${i}`,
        kind: 'function' as const,
        lang: 'python' as const,
        path,
        name: `f${i}`,
        qualifiedName: `f${i}`,
        signature: `def f${i}(x):`,
        docstring: 'Doc "quoted" \\ \u00e9',
        range: { startLine: 0, endLine: 1 },
        text: `# ${path}\ndef f${i}(x):\n    return x`,
      };
      files[path] = {
        hash: `h${i}`,
        size: 40,
        lines: 2,
        extraction: { path, lang: 'python', items: [item], classes: [], imports: [], hasSyntaxErrors: false },
      };
    }
    const index: StoredIndex = { repoRoot: '/repo "x"', savedAt: sample.savedAt, files };
    const folder = indexFolderFor(dir.path, '/many');
    await saveIndex(folder, index);
    const raw = readFileSync(indexFilePath(folder));
    assert.equal(raw.subarray(raw.indexOf(0x0a) + 1).toString('utf8'), JSON.stringify(index));
    const loaded = await loadIndex(folder);
    assert.equal(loaded.status, 'ok');
    assert.deepEqual(loaded.status === 'ok' && loaded.index, index);
    const empty: StoredIndex = { repoRoot: '/e', savedAt: sample.savedAt, files: {} };
    await saveIndex(folder, empty);
    assert.deepEqual(await loadIndex(folder), { status: 'ok', index: empty });
  } finally {
    dir.cleanup();
  }
});

test('a missing index is reported as missing', async () => {
  const dir = tempDir();
  try {
    assert.deepEqual(await loadIndex(indexFolderFor(dir.path, '/nowhere')), { status: 'missing' });
  } finally {
    dir.cleanup();
  }
});

test('truncated, flipped, foreign-version and garbage indexes are detected', async () => {
  const dir = tempDir();
  try {
    const folder = indexFolderFor(dir.path, '/some/repo');
    const file = indexFilePath(folder);
    await saveIndex(folder, sample);
    const good = readFileSync(file);

    writeFileSync(file, good.subarray(0, good.length - 7));
    let r = await loadIndex(folder);
    assert.equal(r.status, 'invalid');
    assert.match(r.status === 'invalid' ? r.reason : '', /truncated/);

    const flipped = Buffer.from(good);
    const at = flipped.length - 20;
    flipped[at] = (flipped[at] ?? 0) ^ 0x01;
    writeFileSync(file, flipped);
    r = await loadIndex(folder);
    assert.match(r.status === 'invalid' ? r.reason : '', /checksum/);

    const text = good.toString('utf8').replace(`"version":${INDEX_FORMAT_VERSION}`, `"version":${INDEX_FORMAT_VERSION + 1}`);
    writeFileSync(file, text);
    r = await loadIndex(folder);
    assert.match(r.status === 'invalid' ? r.reason : '', /version/);

    writeFileSync(file, Buffer.from([1, 2, 3]));
    r = await loadIndex(folder);
    assert.equal(r.status, 'invalid');
  } finally {
    dir.cleanup();
  }
});

test('index folders are distinct per repository path', () => {
  assert.notEqual(indexFolderFor('/c', '/a/repo'), indexFolderFor('/c', '/b/repo'));
  assert.equal(indexFolderFor('/c', '/a/repo'), indexFolderFor('/c', '/a/repo/'));
});

test('an index with a valid checksum but a wrong shape is invalid, naming the field', async () => {
  const dir = tempDir();
  try {
    const folder = indexFolderFor(dir.path, '/some/repo');
    const file = sample.files['a.py']!;
    const item = {
      id: 'a.py#function:f',
      kind: 'function',
      lang: 'python',
      path: 'a.py',
      name: 'f',
      qualifiedName: 'f',
      signature: 'def f():',
      docstring: '',
      range: { startLine: 0, endLine: 1 },
      text: 'def f():',
    };
    const bad: Array<[unknown, RegExp]> = [
      [{ ...sample, files: { 'a.py': { ...file, extraction: null } } }, /files\["a\.py"\]\.extraction/],
      [
        { ...sample, files: { 'a.py': { ...file, extraction: { ...file.extraction, items: [{ ...item, range: null }] } } } },
        /items\[0\]\.range/,
      ],
      [
        { ...sample, files: { 'a.py': { ...file, extraction: { ...file.extraction, items: [{ ...item, kind: 'macro' }] } } } },
        /items\[0\]\.kind/,
      ],
      [{ ...sample, files: { 'a.py': { ...file, extraction: { ...file.extraction, classes: {} } } } }, /extraction\.classes/],
      [
        { ...sample, files: { 'a.py': { ...file, extraction: { ...file.extraction, imports: [{ module: 3, line: 1 }] } } } },
        /imports\[0\]\.module/,
      ],
      [{ ...sample, files: { 'a.py': { ...file, hash: 7 } } }, /\.hash/],
      [{ ...sample, files: [] }, /files is not an object/],
    ];
    for (const [index, reason] of bad) {
      await saveIndex(folder, index as StoredIndex);
      const r = await loadIndex(folder);
      assert.equal(r.status, 'invalid');
      assert.match(r.status === 'invalid' ? r.reason : '', reason);
    }
    const good = { ...sample, files: { 'a.py': { ...file, extraction: { ...file.extraction, items: [item] } } } } as StoredIndex;
    await saveIndex(folder, good);
    assert.equal((await loadIndex(folder)).status, 'ok');
  } finally {
    dir.cleanup();
  }
});
