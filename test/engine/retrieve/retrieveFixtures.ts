// Shared set-up for the retrieval tests: in-memory knowledge bases over the fixture repositories.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KnowledgeBase } from '../../../src/engine/kb/KnowledgeBase';
import { loadParsers, type Parsers } from '../../../src/engine/kb/parsers';
import type { KbItem } from '../../../src/engine/kb/types';
import { prefixAt, type UnfinishedFile } from '../../../src/engine/query/unfinishedFile';
import type { DenseEncoder } from '../../../src/engine/retrieve/dense/denseRetrieve';
import { fixturesDir, grammarsDir } from '../../helpers/paths';

let parsersPromise: Promise<Parsers> | undefined;
export const parsers = (): Promise<Parsers> => (parsersPromise ??= loadParsers(grammarsDir));

const kbs = new Map<string, Promise<KnowledgeBase>>();

/** One indexed, in-memory knowledge base per folder for the whole test file (read-only use). */
export function knowledgeBase(repoRoot: string): Promise<KnowledgeBase> {
  let kb = kbs.get(repoRoot);
  if (!kb) {
    kb = (async () => {
      const k = await KnowledgeBase.open({ repoRoot, parsers: await parsers() });
      await k.index(undefined, new AbortController().signal);
      return k;
    })();
    kbs.set(repoRoot, kb);
  }
  return kb;
}

export function fixtureKb(name: 'pyshop' | 'javashop'): Promise<KnowledgeBase> {
  return knowledgeBase(join(fixturesDir, name));
}

/** The unfinished file at a 1-based line (and column) of a fixture file. */
export function unfinishedAt(fixture: string, path: string, line: number, column?: number): UnfinishedFile {
  const text = readFileSync(join(fixturesDir, fixture, path), 'utf8');
  return { path, lang: path.endsWith('.java') ? 'java' : 'python', prefix: prefixAt(text, line, column) };
}

/** The unfinished file with the cursor right after the first `marker` on a 1-based line. */
export function unfinishedAfter(fixture: string, path: string, line: number, marker: string): UnfinishedFile {
  const text = readFileSync(join(fixturesDir, fixture, path), 'utf8');
  const lineText = text.replace(/\r\n?/g, '\n').split('\n')[line - 1] ?? '';
  const at = lineText.indexOf(marker);
  if (at < 0) throw new Error(`"${marker}" is not on line ${line} of ${path}: ${lineText}`);
  return unfinishedAt(fixture, path, line, at + marker.length + 1);
}

/** A synthetic knowledge-base item for unit tests that need no parsing. */
export function fakeItem(path: string, name: string, text: string, kind: KbItem['kind'] = 'function'): KbItem {
  return {
    id: `${path}#${kind}:${name}`,
    kind,
    lang: 'python',
    path,
    name,
    qualifiedName: name,
    signature: `def ${name}():`,
    docstring: '',
    range: { startLine: 0, endLine: 1 },
    text,
  };
}

export const JAVA_ROOT = 'src/main/java/com/example/shop';

/**
 * A deterministic stand-in encoder (hashed bag of words, normalised) that records every embed
 * call: `seen` holds the texts, `calls` the batches.
 */
export function bagOfWordsEncoder(name = 'bow-test', dim = 64): DenseEncoder & { seen: string[]; calls: string[][] } {
  const seen: string[] = [];
  const calls: string[][] = [];
  return {
    name,
    dim,
    seen,
    calls,
    embed(texts) {
      seen.push(...texts);
      calls.push([...texts]);
      return Promise.resolve(
        texts.map((t) => {
          const v = new Float32Array(dim);
          for (const w of t.toLowerCase().match(/[a-z_][a-z0-9_]+/g) ?? []) {
            let h = 0;
            for (let i = 0; i < w.length; i++) h = (h * 31 + w.charCodeAt(i)) >>> 0;
            v[h % dim]! += 1;
          }
          const n = Math.hypot(...v) || 1;
          return v.map((x) => x / n);
        }),
      );
    },
  };
}
