// Dense path latency at repository scale (CodeRAG section 2.2.1, goal: <= 10 ms median for a
// repository of 2,000 files): a synthetic knowledge base of --files files x --per-file items,
// vectors from a stand-in encoder (no model time), then retrieve() from random cursors, so the
// figure is the search itself (two families, top-j each, the unfinished file skipped). The
// shipped encoder's time for one query is measured separately and added for the path's total.
// --js scans in JavaScript instead of the ONNX row scorer (the fallback).
// Usage: npx tsx scripts/benchDense.ts [--files 2000] [--per-file 31] [--n 200] [--js]
import { join } from 'node:path';
import type { FileExtraction, KbItem } from '../src/engine/kb/types';
import { ModelRegistry } from '../src/engine/models';
import { DenseRetriever, type DenseEncoder } from '../src/engine/retrieve/dense/denseRetrieve';

const args = process.argv.slice(2);
const opt = (name: string, dflt: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) || dflt : dflt;
};
const files = opt('files', 2000);
const perFile = opt('per-file', 31);
const n = opt('n', 200);

function rng(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

function stats(xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number): number => s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
  return `median ${q(0.5).toFixed(2)} ms, p95 ${q(0.95).toFixed(2)} ms (n=${s.length})`;
}

async function main(): Promise<void> {
  const registry = new ModelRegistry({ modelsDir: join(__dirname, '..', 'models') });
  const real = await registry.encoder(undefined, new AbortController().signal);
  const dim = real.dim;
  // A stand-in encoder: a deterministic unit vector per text, no model time.
  const fake: DenseEncoder = {
    name: 'bench-encoder',
    dim,
    fingerprint: 'bench',
    embed(texts) {
      return Promise.resolve(
        texts.map((t) => {
          let h = 0;
          for (let i = 0; i < t.length; i++) h = (Math.imul(h, 31) + t.charCodeAt(i)) >>> 0;
          const r = rng(h);
          const v = new Float32Array(dim);
          let norm = 0;
          for (let d = 0; d < dim; d++) norm += (v[d] = r() - 0.5) ** 2;
          for (let d = 0; d < dim; d++) v[d]! /= Math.sqrt(norm);
          return v;
        }),
      );
    },
  };
  const extractions = new Map<string, FileExtraction>();
  for (let f = 0; f < files; f++) {
    const path = `src/pkg${f % 50}/File${f}.java`;
    const items: KbItem[] = Array.from({ length: perFile }, (_, i) => {
      const kind = i % 3 === 0 ? 'classVariable' : 'classFunction';
      const name = `${kind === 'classFunction' ? 'method' : 'field'}${i}`;
      return { id: `${path}#${kind}:File${f}.${name}`, kind, lang: 'java', path, name, qualifiedName: `File${f}.${name}`, signature: `int ${name}()`, docstring: '', range: { startLine: i, endLine: i }, className: `File${f}`, text: `// ${path}\nclass File${f} {\n  int ${name}() { return ${f * 1000 + i}; }\n}` };
    });
    extractions.set(path, { path, lang: 'java', items, classes: [], imports: [], hasSyntaxErrors: false });
  }
  const kb = { paths: () => [...extractions.keys()], file: (p: string) => extractions.get(p), onDidChange: () => ({ dispose: () => undefined }) };
  const js = args.includes('--js');
  const dense = new DenseRetriever(kb, fake, js ? { rowScorer: null } : {});
  let t = performance.now();
  await dense.prepare();
  console.log(`${files} files x ${perFile} items = ${dense.size} vectors of dim ${dim}; stand-in embedding and matrices: ${(performance.now() - t).toFixed(0)} ms`);
  const r = rng(7);
  const search: number[] = [];
  for (let i = 0; i < n; i++) {
    const path = `src/pkg${i % 50}/File${Math.floor(r() * files)}.java`;
    t = performance.now();
    await dense.retrieve({ file: { path, lang: 'java', prefix: '' }, query: { strategy: 'last10', text: `int x = method${i % perFile}();`, spans: [] }, topJ: 15 });
    search.push(performance.now() - t);
  }
  console.log(`search by ${js ? 'JavaScript loop' : 'ONNX MatMulInteger over int8 codes'} (stand-in query vector, two families, top-15 each; first call excluded): ${stats(search.slice(1))}`);
  const query = 'public void close() throws IOException {\n    if (closed) {\n        return;\n    }\n    closed = true;\n    in.close();';
  const embed: number[] = [];
  for (let i = 0; i < 30; i++) {
    t = performance.now();
    await real.embed([`${query}\n// ${i}`]);
    embed.push(performance.now() - t);
  }
  console.log(`shipped encoder, one 6-line query: ${stats(embed)}`);
  dense.dispose();
  await real.dispose?.();
}

void main();
