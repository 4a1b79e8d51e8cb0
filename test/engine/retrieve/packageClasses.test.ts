// The classes a Java line uses without an import (its own package, a wildcard import)
// reach the top of retrieval ahead of the files that merely use them.
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DataflowRetriever } from '../../../src/engine/retrieve/dataflow/dataflowRetrieve';
import { multiPathRetrieve } from '../../../src/engine/retrieve/multiPathRetrieve';
import { SparseRetriever } from '../../../src/engine/retrieve/sparse/sparseRetrieve';
import { lastLinesQuery } from '../../../src/engine/query/lastLinesQuery';
import { knowledgeBase, parsers } from './retrieveFixtures';
import { tempDir } from '../../helpers/paths';

const ROOT = 'src/main/java/com/acme/cli';

function writeRepo(root: string, files: Record<string, string>): void {
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), text);
  }
}

const REPO: Record<string, string> = {
  [`${ROOT}/internal/Console.java`]: 'package com.acme.cli.internal;\n\npublic interface Console {\n    void println(String msg);\n}\n',
  [`${ROOT}/internal/DefaultConsole.java`]:
    'package com.acme.cli.internal;\n\npublic class DefaultConsole implements Console {\n    private final StringBuilder out = new StringBuilder();\n\n' +
    '    public DefaultConsole() {\n    }\n\n    public void println(String msg) {\n        out.append(msg);\n    }\n}\n',
  [`${ROOT}/internal/Lists.java`]:
    'package com.acme.cli.internal;\n\npublic class Lists {\n    public static int size() {\n        return 0;\n    }\n}\n',
  [`${ROOT}/ParameterException.java`]:
    'package com.acme.cli;\n\npublic class ParameterException extends RuntimeException {\n    public ParameterException(String msg) {\n        super(msg);\n    }\n}\n',
  [`${ROOT}/Unrelated.java`]: 'package com.acme.cli;\n\npublic class Unrelated {\n    public int value() {\n        return 1;\n    }\n}\n',
  // A usage of the console classes in another file: it shares the words, but it is not the definition.
  [`${ROOT}/Runner.java`]:
    'package com.acme.cli;\n\nimport com.acme.cli.internal.*;\n\npublic class Runner {\n    private Console console;\n\n' +
    '    public Console console() {\n        if (console == null) {\n            console = new DefaultConsole();\n        }\n        return console;\n    }\n}\n',
};

/** Commander.java up to a blank line inside `getConsole()`, which goes on `console = new DefaultConsole();`. */
function commanderPrefix(): string {
  const filler = Array.from({ length: 170 }, (_, i) => `        int v${i} = ${i};`).join('\n');
  return [
    'package com.acme.cli;',
    '',
    'import com.acme.cli.internal.*;',
    '',
    'public class Commander {',
    '    private static Console console;',
    '',
    '    public void parse(String arg) {',
    '        if (arg == null) {',
    '            throw new ParameterException("no argument");',
    '        }',
    filler,
    '    }',
    '',
    '    public static Console getConsole() {',
    '        if (console == null) {',
    '            ',
  ].join('\n');
}

void test('Java: classes visible without an import (own package, wildcard import) that the lines above name or use reach the dataflow results', async () => {
  const dir = tempDir();
  try {
    writeRepo(dir.path, REPO);
    const kb = await knowledgeBase(dir.path);
    const df = new DataflowRetriever(kb, await parsers());
    try {
      const prefix = commanderPrefix();
      const file = { path: `${ROOT}/Commander.java`, lang: 'java' as const, prefix };
      const r = await df.retrieve({ file, query: lastLinesQuery(prefix, 3), topJ: 15 }, new AbortController().signal);
      const ids = r.results.map((x) => x.snippet.id);
      const at = (id: string): number => ids.indexOf(id);
      // `console` two lines up shares a word with DefaultConsole (wildcard-imported package): its summary, constructor included.
      const consoleAt = at(`${ROOT}/internal/DefaultConsole.java#class:DefaultConsole`);
      assert.ok(consoleAt >= 0 && consoleAt < 5, `expected DefaultConsole in the first 5, got:\n${ids.join('\n')}`);
      assert.match(r.results[consoleAt]!.snippet.text, /public DefaultConsole\(\)/);
      // ParameterException (same package) was used 170 lines up, beyond the chains the walk resolves.
      assert.ok(
        at(`${ROOT}/ParameterException.java#class:ParameterException`) >= 0,
        `expected ParameterException, got:\n${ids.join('\n')}`,
      );
      // Neither named nor sharing a word: left out.
      assert.equal(at(`${ROOT}/Unrelated.java#class:Unrelated`), -1);
      assert.equal(at(`${ROOT}/internal/Lists.java#class:Lists`), -1);
    } finally {
      df.dispose();
    }
  } finally {
    dir.cleanup();
  }
});

void test('Java: merged with sparse retrieval, the class the line uses comes ahead of a file that uses it', async () => {
  const dir = tempDir();
  try {
    writeRepo(dir.path, REPO);
    const kb = await knowledgeBase(dir.path);
    const sparse = new SparseRetriever(kb);
    const df = new DataflowRetriever(kb, await parsers());
    try {
      const prefix = commanderPrefix();
      const file = { path: `${ROOT}/Commander.java`, lang: 'java' as const, prefix };
      const t = await multiPathRetrieve(
        [sparse, df],
        { file, query: lastLinesQuery(prefix, 3), topJ: 15 },
        { budgetsMs: { sparse: 5000, dataflow: 5000 } },
        new AbortController().signal,
      );
      const paths = t.candidates.map((c) => `${c.snippet.path}#${c.snippet.name}`);
      const definition = paths.findIndex((p) => p.startsWith(`${ROOT}/internal/DefaultConsole.java#`));
      const usage = paths.findIndex((p) => p.startsWith(`${ROOT}/Runner.java#`));
      assert.ok(definition >= 0 && definition < 5, `expected DefaultConsole in the first 5, got:\n${paths.join('\n')}`);
      assert.ok(usage < 0 || usage > definition, `expected the definition ahead of Runner's usage, got:\n${paths.join('\n')}`);
    } finally {
      sparse.dispose();
      df.dispose();
    }
  } finally {
    dir.cleanup();
  }
});

const POOL = 'src/main/java/com/acme/pool/proxy';
const POOL_REPO: Record<string, string> = {
  [`${POOL}/ProxySource.java`]: 'package com.acme.pool.proxy;\n\npublic interface ProxySource<T> {\n    T createProxy(T pooled);\n}\n',
  [`${POOL}/ProxyHandler.java`]: 'package com.acme.pool.proxy;\n\npublic class ProxyHandler {\n    public void handle() {\n    }\n}\n',
  [`${POOL}/ObjectPool.java`]: 'package com.acme.pool.proxy;\n\npublic interface ObjectPool<T> {\n    T borrowObject();\n}\n',
  [`${POOL}/KeyedObjectPool.java`]:
    'package com.acme.pool.proxy;\n\npublic interface KeyedObjectPool<K, V> {\n    V borrowObject(K key);\n}\n',
  // The sibling of the class being written: the same words in its name, a field of the type the new class needs too.
  [`${POOL}/ProxiedObjectPool.java`]:
    'package com.acme.pool.proxy;\n\npublic class ProxiedObjectPool<T> implements ObjectPool<T> {\n    private final ObjectPool<T> pool;\n' +
    '    private final ProxySource<T> proxySource;\n\n    public ProxiedObjectPool(ObjectPool<T> pool, ProxySource<T> proxySource) {\n' +
    '        this.pool = pool;\n        this.proxySource = proxySource;\n    }\n\n    public T borrowObject() {\n        return proxySource.createProxy(pool.borrowObject());\n    }\n}\n',
};

void test("Java: a class written beside a sibling (two or more words of its name nearby) gets the types of the sibling's fields", async () => {
  const dir = tempDir();
  try {
    writeRepo(dir.path, POOL_REPO);
    const kb = await knowledgeBase(dir.path);
    const df = new DataflowRetriever(kb, await parsers());
    try {
      // ProxiedKeyedObjectPool.java, about to declare `private final ProxySource<V> proxySource;`: the prefix never names ProxySource.
      const prefix = [
        'package com.acme.pool.proxy;',
        '',
        'public class ProxiedKeyedObjectPool<K, V> implements KeyedObjectPool<K, V> {',
        '',
        '    private final KeyedObjectPool<K, V> pool;',
        '',
        '    ',
      ].join('\n');
      const file = { path: `${POOL}/ProxiedKeyedObjectPool.java`, lang: 'java' as const, prefix };
      const r = await df.retrieve({ file, query: lastLinesQuery(prefix, 3), topJ: 15 }, new AbortController().signal);
      const ids = r.results.map((x) => x.snippet.id);
      assert.ok(ids.includes(`${POOL}/ProxiedObjectPool.java#class:ProxiedObjectPool`), `expected the sibling, got:\n${ids.join('\n')}`);
      assert.ok(ids.includes(`${POOL}/ProxySource.java#class:ProxySource`), `expected the sibling's field type, got:\n${ids.join('\n')}`);
      // A package class that shares one word and types no field of the sibling is not brought by it.
      const handler = r.results.find((x) => x.snippet.id === `${POOL}/ProxyHandler.java#class:ProxyHandler`);
      assert.ok(handler === undefined || !/field's type/.test(JSON.stringify(handler)), 'ProxyHandler is no field type of the sibling');
    } finally {
      df.dispose();
    }
  } finally {
    dir.cleanup();
  }
});
