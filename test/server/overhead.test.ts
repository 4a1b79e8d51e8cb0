// The server measures its own overhead per completion request (outside the model and the
// retrieval stages) and its typing-through cache hits, and reports them in its status: every
// request is counted once. The figures are printed, not asserted (a shared machine's wall clock
// is no test); the goals (<= 15 ms median overhead, <= 5 ms cache hit) are checked by
// `npm run bench:server` on real repositories. Runs on the pyshop fixture by default
// (CODERAG_MEASURE_REPO=/path/to/repo points it elsewhere).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fixturesDir } from '../helpers/paths';
import { startLsp } from './lspHarness';

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name.startsWith('.') || name === 'node_modules' || name === 'build' || name === 'target') continue;
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) sourceFiles(p, out);
    else if (/\.(py|java)$/.test(name) && st.size < 200_000) out.push(p);
  }
  return out;
}

void test('the server counts its overhead once per request and its cache hits (figures printed, not asserted)', async () => {
  const repo = process.env.CODERAG_MEASURE_REPO ?? join(fixturesDir, 'pyshop');
  const requests = Number(process.env.CODERAG_MEASURE_FILES ?? 12);
  const t0 = performance.now();
  const lsp = await startLsp(repo, {
    debounceMs: 0,
    model: { provider: 'embedded' },
    rerank: { kind: 'none' },
    experimental: { model: { maxNewTokens: 4 } },
  });
  try {
    await lsp.waitForStatus((s) => s.folders.length > 0 && s.folders.every((f) => f.state === 'ready'), 600_000);
    const indexedMs = performance.now() - t0;
    // Measure in the steady state: after the dense path's background embedding (or its failure).
    const denseStart = performance.now();
    await lsp.waitForDense(900_000).catch(() => undefined);
    const embeddedMs = performance.now() - denseStart;
    const afterIndex = await lsp.status();
    // Cursors spread over the repository: the end of a non-empty line in the middle of each file.
    const files = sourceFiles(repo).sort();
    const step = Math.max(1, Math.floor(files.length / requests));
    let sent = 0;
    let typedThrough = 0;
    const cold: Array<{ overheadMs: number; checkpointMs?: number; promptMs?: number }> = [];
    const warm: Array<{ overheadMs: number; checkpointMs?: number; promptMs?: number }> = [];
    for (let i = 0; i < files.length && sent < requests; i += step) {
      const file = files[i];
      if (!file) continue;
      const text = readFileSync(file, 'utf8');
      const lines = text.split('\n');
      let line = Math.floor(lines.length / 2);
      while (line < lines.length - 1 && (lines[line] ?? '').trim() === '') line++;
      const uri = lsp.open(file, file.endsWith('.py') ? 'python' : 'java', text);
      // The first request in a file, then three keystrokes that do not follow the suggestion (as when editing).
      let version = 2;
      for (let k = 0; k < 4; k++) {
        if (k > 0) {
          lines[line] = `${lines[line] ?? ''}${'q'}`;
          lsp.change(uri, lines.join('\n'), version++);
        }
        const items = await lsp.complete(uri, line, (lines[line] ?? '').length);
        const server = (await lsp.explain())?.server;
        if (server) (k === 0 ? cold : warm).push(server);
        // Typing through: the first character of what was shown, answered from the cache.
        const shown = items[0] && typeof items[0].insertText === 'string' ? items[0].insertText : '';
        if (k === 3 && shown.length > 1) {
          const through = [...lines];
          through[line] = (through[line] ?? '') + shown.slice(0, 1);
          lsp.change(uri, through.join('\n'), version++);
          await lsp.complete(uri, line, (through[line] ?? '').length);
          typedThrough++;
        }
      }
      sent++;
      void relative(repo, file);
    }
    const status = await lsp.status();
    const o = status.stats.overheadMs;
    const c = status.stats.cacheHitMs;
    assert.equal(sent, Math.min(requests, files.length));
    assert.equal(cold.length, sent, 'every first request in a file reports its server timing');
    assert.equal(warm.length, 3 * sent, 'every request while editing reports its server timing');
    assert.ok(o, JSON.stringify(status.stats));
    assert.equal(o.samples, cold.length + warm.length, 'the overhead is counted once per request that ran the pipeline');
    assert.ok(typedThrough > 0, 'the model showed something to type through');
    assert.equal(c?.samples, typedThrough, 'typing through a shown suggestion is answered from the cache, each counted once');
    const items = afterIndex.folders.reduce((n, f) => n + (f.items ?? 0), 0);
    process.stdout.write(
      `# ${repo}: ${files.length} source files, ${items} items indexed in ${(indexedMs / 1000).toFixed(1)} s (server start included), embedded for dense retrieval in ${(embeddedMs / 1000).toFixed(1)} s more; ` +
        `memory after indexing rss ${afterIndex.stats.memory?.rssMB} MB (heap ${afterIndex.stats.memory?.heapUsedMB} MB), after requests rss ${status.stats.memory?.rssMB} MB\n` +
        `# overhead outside model and retrieval over ${o.samples} requests: median ${o.median.toFixed(2)} ms, p95 ${o.p95.toFixed(2)} ms; ` +
        `cache hits over ${c?.samples ?? 0}: median ${c?.median.toFixed(2) ?? '-'} ms, p95 ${c?.p95.toFixed(2) ?? '-'} ms\n`,
    );
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
    const p95 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.95))] ?? 0;
    for (const [name, parts] of [
      ['first request in a file', cold],
      ['while editing a file', warm],
    ] as const) {
      process.stdout.write(
        `# ${name} (${parts.length}): overhead median ${median(parts.map((p) => p.overheadMs)).toFixed(2)} ms, p95 ${p95(parts.map((p) => p.overheadMs)).toFixed(2)} ms; of which prompt assembly + postprocess median ${median(parts.map((p) => p.promptMs ?? 0)).toFixed(2)} ms, yielding to pending messages median ${median(parts.map((p) => p.checkpointMs ?? 0)).toFixed(2)} ms\n`,
      );
    }
  } finally {
    await lsp.close();
  }
});
