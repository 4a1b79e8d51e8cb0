// Line endings: a repository checked out with CRLF (every file) and the same repository with LF give
// the same completions, through the language server and through `coderag complete`: the same
// ranked retrieval candidates with the same scores, the same similar code, the same prompt and the
// same suggestion at each position. Each copy also holds a module with a function longer than a
// knowledge-base stub keeps (the cut must fall at the same line) and a signature over two lines.
// Real tree-sitter, the shipped ONNX encoder and causal LM (behind a test server that speaks
// Ollama's API).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { copyFixture, tempDir } from '../helpers/paths';
import { startLsp, startModelServer, type LspSession, type ModelServer } from '../server/lspHarness';
import type { CompletionTraceView } from '../../src/protocol/protocol';
import { runCli } from './cliRun';

const MODEL = 'coderag-lm:test';

/** Every file under `root` with each LF written as CRLF (a Windows checkout with autocrlf). */
function toCrlf(root: string): number {
  let converted = 0;
  for (const name of readdirSync(root)) {
    const path = join(root, name);
    if (statSync(path).isDirectory()) {
      converted += toCrlf(path);
      continue;
    }
    const bytes = readFileSync(path);
    if (!bytes.includes(0x0a)) continue;
    const out: number[] = [];
    for (const b of bytes) {
      if (b === 0x0a) out.push(0x0d);
      out.push(b);
    }
    writeFileSync(path, Buffer.from(out));
    converted++;
  }
  return converted;
}

const CATEGORIES = [
  'kitchen',
  'garden',
  'office',
  'toys',
  'books',
  'music',
  'sports',
  'outdoor',
  'bath',
  'bedroom',
  'lighting',
  'storage',
  'pets',
  'baby',
  'beauty',
  'health',
  'tools',
  'auto',
  'crafts',
  'party',
  'travel',
  'food',
  'drinks',
  'coffee',
  'tea',
  'snacks',
  'cleaning',
  'laundry',
  'stationery',
  'electronics',
  'shoes',
  'jewelry',
  'watches',
  'bags',
  'games',
];

/** A report module whose one function runs past a stub's 4,000 characters, its signature on two lines. */
const LONG_MODULES: Record<string, { path: string; text: string }> = {
  pyshop: {
    path: 'pyshop/reports.py',
    text: [
      '"""Sales reports over carts, one total per product category."""',
      'from pyshop.models import Cart',
      'from pyshop.util import format_price, retry',
      '',
      '',
      '@retry(times=2, exceptions=(IOError, OSError))',
      'def category_totals(carts: list[Cart],',
      '                    currency: str = "EUR") -> dict[str, str]:',
      '    """Totals per category of every cart\'s lines, formatted in `currency`."""',
      '    totals: dict[str, float] = {}',
      '    for cart in carts:',
      '        for line in cart.lines:',
      '            tags = line.product.tags',
      ...CATEGORIES.flatMap((c) => [
        `            if "${c}" in tags:`,
        `                totals["${c}"] = totals.get("${c}", 0.0) + line.subtotal()`,
      ]),
      '    return {name: format_price(total, currency) for name, total in sorted(totals.items())}',
      '',
    ].join('\n'),
  },
  javashop: {
    path: 'src/main/java/com/example/shop/report/CategoryTotals.java',
    text: [
      'package com.example.shop.report;',
      '',
      'import com.example.shop.model.Cart;',
      'import java.util.Map;',
      'import java.util.TreeMap;',
      '',
      '/** Sales reports over carts, one total per product category. */',
      'public final class CategoryTotals {',
      '    private CategoryTotals() {}',
      '',
      '    /** Totals per category of every cart, by the category its owner is filed under. */',
      '    public static Map<String, Double> categoryTotals(Iterable<Cart> carts,',
      '                                                     String currency) {',
      '        Map<String, Double> totals = new TreeMap<>();',
      '        for (Cart cart : carts) {',
      '            String owner = cart.getOwner();',
      ...CATEGORIES.flatMap((c) => [
        `            if (owner.startsWith("${c}")) {`,
        `                totals.merge("${c}", cart.total(), Double::sum);`,
        '            }',
      ]),
      '        }',
      '        return totals;',
      '    }',
      '}',
      '',
    ].join('\n'),
  },
};

/** What a user sees of one completion in Explain, line breaks as LF. */
interface Seen {
  candidates: string[];
  paths: string[];
  similar: string[];
  query: string;
  prompt: string;
  suggestion: string | undefined;
}

const score = (s: number | undefined): string => (s === undefined ? '-' : String(s));

function seen(trace: CompletionTraceView | undefined, suggestion: string | undefined): Seen {
  const retrieval = trace?.retrieval;
  return {
    candidates: (retrieval?.candidates ?? []).map(
      (c) =>
        `${c.id} ${Object.entries(c.scores)
          .map(([p, s]) => `${p}=${score(s)}`)
          .join(' ')}`,
    ),
    paths: (retrieval?.paths ?? []).flatMap((p) => p.results.map((r) => `${p.path}: ${r.id} ${score(r.score)}`)),
    similar: (trace?.similar?.perspectives ?? []).map(
      (p) => `${p.name}: ${JSON.stringify(p.query ?? '')} -> ${p.top ? `${p.top.id} ${score(p.top.score)}` : p.status}`,
    ),
    query: trace?.query?.text ?? '',
    prompt: trace?.prompt?.text ?? '',
    suggestion: suggestion?.replace(/\r\n/g, '\n'),
  };
}

/** The fields of `a` and `b` that differ, each with the first entry that does. */
function differences(a: Seen, b: Seen): string[] {
  const out: string[] = [];
  for (const key of Object.keys(a) as Array<keyof Seen>) {
    const x = a[key];
    const y = b[key];
    if (JSON.stringify(x) === JSON.stringify(y)) continue;
    if (Array.isArray(x) && Array.isArray(y)) {
      const i = x.findIndex((v, j) => v !== y[j]);
      out.push(`${key} #${i < 0 ? x.length : i}: LF ${JSON.stringify(x[i] ?? null)}, CRLF ${JSON.stringify(y[i] ?? null)}`);
    } else {
      out.push(`${key}: LF ${JSON.stringify(x)}, CRLF ${JSON.stringify(y)}`);
    }
  }
  return out;
}

interface Case {
  fixture: string;
  file: string;
  languageId: string;
  /** (0-based line, UTF-16 character): line starts, mid-line, after an open bracket or a dot. */
  positions: Array<[number, number]>;
}

const CASES: Case[] = [
  {
    fixture: 'pyshop',
    file: 'app/main.py',
    languageId: 'python',
    positions: [
      [9, 4],
      [9, '    cart = Cart('.length],
      [12, '    return '.length],
      [13, 0],
      [16, '    gateway = '.length],
      [18, '    service = CheckoutService('.length],
      [20, '    print('.length],
      [24, 4],
    ],
  },
  {
    fixture: 'javashop',
    file: 'src/main/java/com/example/shop/service/CheckoutService.java',
    languageId: 'java',
    positions: [
      [11, 4],
      [12, '    private final List<Receipt> receipts = '.length],
      [24, '        this.gateway = '.length],
      [30, '            String transactionId = gateway.'.length],
      [31, '            Receipt receipt = new Receipt('.length],
      [32, '            receipts.'.length],
      [33, '            return '.length],
      [40, '        return '.length],
    ],
  },
];

/** Retrieval and similar code ran at every position, and the LF and CRLF copies saw the same there. */
function assertSame(positions: ReadonlyArray<readonly [number, number]>, lf: readonly Seen[], crlf: readonly Seen[]): void {
  const differ = positions.flatMap(([line, character], i) => differences(lf[i]!, crlf[i]!).map((d) => `${line}:${character} ${d}`));
  assert.ok(
    lf.every((s) => s.candidates.length > 0 && s.similar.length > 0),
    'retrieval and similar code ran at every position',
  );
  assert.deepEqual(differ, []);
}

for (const c of CASES) {
  void describe(`${c.fixture} with LF and with CRLF line endings`, () => {
    let model: ModelServer;
    const lf = copyFixture(c.fixture);
    const crlf = copyFixture(c.fixture);
    const indexDirs = { lf: tempDir(), crlf: tempDir() };
    const settings = {
      debounceMs: 0,
      model: { provider: 'ollama', timeoutMs: 30_000 },
      ollama: { host: '', completionModel: MODEL },
      rerank: { kind: 'none' },
      // Every perspective of similar code runs (the code windows, their summaries, a hypothetical line).
      similar: { mode: 'union' },
      experimental: { ollama: { keepAlive: '5m' }, query: { strategy: 'last10' }, cache: { size: 0 } },
    };

    before(async () => {
      const long = LONG_MODULES[c.fixture]!;
      for (const repo of [lf.path, crlf.path]) {
        mkdirSync(dirname(join(repo, long.path)), { recursive: true });
        writeFileSync(join(repo, long.path), long.text);
      }
      assert.ok(toCrlf(crlf.path) > 5, 'the CRLF copy has its files converted');
      model = await startModelServer([MODEL]);
      settings.ollama.host = model.url;
    });

    after(async () => {
      await model?.close();
      for (const d of [lf, crlf, indexDirs.lf, indexDirs.crlf]) d.cleanup();
    });

    void test(
      `the language server: the same candidates, similar code, prompt and suggestion at ${c.positions.length} positions of ${c.file}`,
      { timeout: 600_000 },
      async () => {
        const sessions: LspSession[] = [];
        try {
          const results: Seen[][] = [];
          for (const repo of [lf.path, crlf.path]) {
            const lsp = await startLsp(repo, settings);
            sessions.push(lsp);
            await lsp.waitForStatus((s) => s.folders.length > 0 && s.folders.every((f) => f.state === 'ready'), 120_000);
            await lsp.waitForDense();
            // The similar-code stage does not wait for the code windows: each position must find them built, as the status says.
            const built = await lsp.waitForBuild('similar', 120_000);
            assert.ok(
              built.folders.every((f) => f.similar?.state === 'ready' && f.similar.windows > 0),
              `the code windows were not built: ${JSON.stringify(built.folders.map((f) => f.similar))}`,
            );
            const uri = lsp.open(join(repo, c.file), c.languageId);
            const each: Seen[] = [];
            for (const [line, character] of c.positions) {
              // Settings sent again rebuild the pipeline: each position is a new place, whatever came before.
              lsp.configure(settings);
              await new Promise((r) => setTimeout(r, 300));
              const items = await lsp.complete(uri, line, character);
              const explained = await lsp.explain(items[0]?.traceId);
              each.push(seen(explained?.trace, items[0] ? String(items[0].insertText) : undefined));
            }
            results.push(each);
            await sessions.pop()?.close();
          }
          assertSame(c.positions, results[0]!, results[1]!);
        } finally {
          for (const s of sessions) await s.close();
        }
      },
    );

    void test(
      `coderag complete: the same candidates, similar code, prompt and suggestion at ${c.positions.length} positions of ${c.file}`,
      { timeout: 600_000 },
      async () => {
        const results: Seen[][] = [[], []];
        for (const [line, character] of c.positions) {
          for (const [k, repo, indexDir] of [
            [0, lf.path, indexDirs.lf.path],
            [1, crlf.path, indexDirs.crlf.path],
          ] as const) {
            const r = await runCli([
              'complete',
              repo,
              `${c.file}:${line + 1}:${character + 1}`,
              '--provider',
              'ollama',
              '--model',
              MODEL,
              '--ollama-host',
              model.url,
              '--query',
              'last10',
              '--similar',
              'union',
              '--index-dir',
              indexDir,
              '--json',
            ]);
            const out = JSON.parse(r.stdout) as { items: Array<{ text: string }>; trace: CompletionTraceView };
            results[k]!.push(seen(out.trace, out.items[0]?.text));
          }
        }
        assertSame(c.positions, results[0]!, results[1]!);
      },
    );
  });
}
