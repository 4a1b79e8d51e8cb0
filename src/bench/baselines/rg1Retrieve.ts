// RG-1 baseline (RepoCoder's one-shot retrieval, the baseline of CodeRAG Table 1): fixed
// 10-line windows of the repository's files, the last 10 lines as the query, bag-of-words
// Jaccard similarity.
import { join } from 'node:path';
import type { KnowledgeBase } from '../../engine/kb/KnowledgeBase';
import { wordSet } from '../../engine/query/bagOfWords';
import { lastLinesQuery } from '../../engine/query/lastLinesQuery';
import type { Disposable } from '../../engine/util/disposable';
import { throwIfAborted } from '../../engine/util/errors';
import { TopK } from '../../engine/retrieve/topK';
import type { PathName, PathResult, RetrievalRequest, Retriever, Snippet } from '../../engine/retrieve/types';
import type { RepositoryIndex } from '../../engine/index/repositoryIndex';
import { readIndexedText } from '../../engine/util/safeFile';

interface Rg1Options {
  windowLines?: number;
  /** Lines between window starts (default half a window). */
  strideLines?: number;
  /** The file text for a repo-relative path (default: read it from the repository folder). */
  readText?: (path: string) => Promise<string>;
  /** Use the request's query instead of the last `windowLines` lines (RG-1 proper uses the last lines). */
  useRequestQuery?: boolean;
}

interface Window {
  path: string;
  startLine: number;
  endLine: number;
  text: string;
  words: Int32Array;
}

type Rg1Source = Pick<KnowledgeBase, 'paths' | 'onDidChange' | 'repoRoot'>;

/** RG-1's path name (the bench's methods, the CLI's `--paths rg1`, traces and timings). */
export const RG1 = 'rg1';

export class Rg1Retriever implements Retriever, Disposable {
  readonly name = RG1;
  private readonly vocabulary = new Map<string, number>();
  private readonly windows = new Map<string, Window[]>();
  private readonly pending = new Set<string>();
  private loaded = false;
  private readonly subscription: Disposable;
  private readonly windowLines: number;
  private readonly stride: number;

  constructor(
    private readonly kb: Rg1Source,
    private readonly options: Rg1Options = {},
  ) {
    this.windowLines = options.windowLines ?? 10;
    this.stride = options.strideLines ?? Math.max(1, Math.floor(this.windowLines / 2));
    this.subscription = kb.onDidChange((e) => {
      for (const p of [...e.changed, ...e.removed]) this.pending.add(p);
    });
  }

  async prepare(signal: AbortSignal): Promise<void> {
    const paths = this.loaded ? [...this.pending] : this.kb.paths();
    this.pending.clear();
    this.loaded = true;
    const known = new Set(this.kb.paths());
    const read = this.options.readText ?? ((p: string) => readIndexedText(join(this.kb.repoRoot, p)));
    for (let i = 0; i < paths.length; i++) {
      if (signal.aborted) {
        for (const rest of paths.slice(i)) this.pending.add(rest);
        throwIfAborted(signal);
      }
      const path = paths[i]!;
      if (!known.has(path)) {
        this.windows.delete(path);
        continue;
      }
      let text: string;
      try {
        text = await read(path);
      } catch {
        this.windows.delete(path);
        continue;
      }
      this.windows.set(path, this.slice(path, text));
    }
  }

  private slice(path: string, text: string): Window[] {
    const lines = text.split('\n');
    const out: Window[] = [];
    for (let start = 0; start < lines.length; start += this.stride) {
      const end = Math.min(lines.length, start + this.windowLines) - 1;
      const body = lines.slice(start, end + 1).join('\n');
      if (body.trim() !== '') out.push({ path, startLine: start, endLine: end, text: body, words: this.ids(wordSet(body)) });
      if (end >= lines.length - 1) break;
    }
    return out;
  }

  private ids(words: Set<string>): Int32Array {
    const out = new Int32Array(words.size);
    let i = 0;
    for (const w of words) {
      let id = this.vocabulary.get(w);
      if (id === undefined) {
        id = this.vocabulary.size;
        this.vocabulary.set(w, id);
      }
      out[i++] = id;
    }
    return out;
  }

  async retrieve(request: RetrievalRequest, signal: AbortSignal): Promise<PathResult> {
    if (!this.loaded || this.pending.size > 0) await this.prepare(signal);
    throwIfAborted(signal);
    const queryText = this.options.useRequestQuery ? request.query.text : lastLinesQuery(request.file.prefix, this.windowLines).text;
    const mark = new Uint8Array(this.vocabulary.size);
    let qSize = 0;
    for (const w of wordSet(queryText)) {
      const id = this.vocabulary.get(w);
      if (id !== undefined) mark[id] = 1;
      qSize++;
    }
    const k = 2 * request.topJ + 1;
    const top = new TopK<Window>(k);
    if (qSize > 0) {
      for (const path of [...this.windows.keys()].sort()) {
        if (path === request.file.path) continue;
        for (const w of this.windows.get(path)!) {
          let common = 0;
          for (let i = 0; i < w.words.length; i++) common += mark[w.words[i]!]!;
          if (common === 0) continue;
          const score = common / (qSize + w.words.length - common);
          if (score > top.threshold) top.offer(w, score);
        }
      }
    }
    return {
      results: top.sorted().map(({ value: w, score }) => ({ snippet: windowSnippet(w), score })),
      notes: [`${[...this.windows.values()].reduce((n, ws) => n + ws.length, 0)} windows`],
    };
  }

  dispose(): void {
    this.subscription.dispose();
  }
}

function windowSnippet(w: Window): Snippet {
  const comment = w.path.endsWith('.java') ? '//' : '#';
  return {
    id: `${w.path}#window:${w.startLine}-${w.endLine}`,
    kind: 'window',
    path: w.path,
    name: (w.text.split('\n').find((l) => l.trim() !== '') ?? '').trim().slice(0, 60),
    qualifiedName: `${w.path}:${w.startLine + 1}-${w.endLine + 1}`,
    range: { startLine: w.startLine, endLine: w.endLine },
    text: `${comment} ${w.path}\n${w.text}`,
  };
}

/** `paths` with RG-1 beside them where `wanted` names it (the engine builds CodeRAG's paths only). */
export function withRg1(paths: RepositoryIndex, kb: Rg1Source, wanted: readonly PathName[]): RepositoryIndex {
  if (!wanted.includes(RG1)) return paths;
  const rg1 = new Rg1Retriever(kb);
  const byName = new Map(paths.byName);
  byName.set(RG1, rg1);
  return {
    ...paths,
    byName,
    retrievers: [...paths.retrievers, rg1],
    dispose: () => {
      rg1.dispose();
      paths.dispose();
    },
  };
}
