// Junk never shown, through the one pipeline: a model server (the HTTP test
// server, answering a scripted text) writes what the e2e fixture's models wrote — a loop, the
// redaction placeholder, a member or keyword argument the repository says does not exist, a repeat
// of the text after the cursor — and the user gets the sensible part or nothing, the trace saying
// which rule cut what.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixturesDir } from '../../../helpers/paths';
import { startOllamaTestServer, type OllamaTestServer } from '../../../helpers/ollamaServer';
import { fixtureKb, parsers as loadParsers } from '../../retrieve/retrieveFixtures';
import { ReceiverTyper } from '../../../../src/engine/check/receiverMembers';
import { RepoMethods } from '../../../../src/engine/body/RepoMethods';
import { OllamaClient } from '../../../../src/engine/generate/OllamaClient';
import type { KnowledgeBase } from '../../../../src/engine/kb/KnowledgeBase';
import type { Parsers } from '../../../../src/engine/kb/parsers';
import type { CheckMode } from '../../../../src/engine/pipeline/types';
import {
  bodyMode,
  createPipeline,
  formatTraceMarkdown,
  resolveOptions,
  type CompletionRequest,
  type CompletionResult,
} from '../../../../src/engine/pipeline';

const signal = new AbortController().signal;
const SERVICE = 'src/main/java/com/example/shop/service/CheckoutService.java';
const BODY_HEADER = 'public Receipt checkout(Cart cart) {';

/** The fixture file's first `line` lines (1-based) followed by `tail`, and the rest of the file after that line as the suffix. */
function at(fixture: string, path: string, line: number, tail: string): CompletionRequest {
  const lines = readFileSync(join(fixturesDir, fixture, path), 'utf8').split('\n');
  return {
    filePath: path,
    lang: path.endsWith('.java') ? 'java' : 'python',
    prefix: `${lines.slice(0, line).join('\n')}\n${tail}`,
    suffix: `\n${lines.slice(line + 1).join('\n')}`,
  };
}

/** The e2e's body request: the cursor on the new line of `checkout`'s emptied body. */
function emptiedCheckout(): CompletionRequest {
  const text = readFileSync(join(fixturesDir, 'javashop', SERVICE), 'utf8');
  const start = text.indexOf(BODY_HEADER) + BODY_HEADER.length;
  const end = text.indexOf('\n    }\n', start);
  const edited = `${text.slice(0, start)}\n        \n    }\n${text.slice(end + 7)}`;
  const cursor = start + 9;
  return { filePath: SERVICE, lang: 'java', prefix: edited.slice(0, cursor), suffix: edited.slice(cursor) };
}

void describe('junk filters in the model stages', () => {
  let server: OllamaTestServer;
  let answer = '';
  let parsers: Parsers;
  const kbs: KnowledgeBase[] = [];
  const typers = new Map<string, ReceiverTyper>();
  let repo: RepoMethods;

  before(async () => {
    server = await startOllamaTestServer(() => Promise.resolve({ text: answer }), { models: ['coderag-lm:test'] });
    parsers = await loadParsers();
    for (const name of ['pyshop', 'javashop'] as const) {
      const kb = await fixtureKb(name);
      kbs.push(kb);
      typers.set(name, new ReceiverTyper(kb, parsers));
    }
    repo = new RepoMethods(kbs[1]!);
  });
  after(async () => {
    repo.dispose();
    for (const t of typers.values()) t.dispose();
    await server.close();
  });

  /** One completion of `request` whose model answers `text`, in line mode or body mode, under check mode `mode`. */
  function complete(
    request: CompletionRequest,
    text: string,
    options: { body?: boolean; mode?: CheckMode } = {},
  ): Promise<CompletionResult> {
    answer = text;
    const fixture = request.lang === 'java' ? 'javashop' : 'pyshop';
    const model = new OllamaClient({ host: server.url, model: 'coderag-lm:test', family: 'plain', timeoutMs: 10_000 });
    const deps = { env: { repo: { retrievers: [], receivers: typers.get(fixture), methods: repo }, model: model } };
    const opts = resolveOptions({ query: { strategy: 'last10' }, check: { mode: options.mode ?? 'constrain' } });
    const pipeline = options.body
      ? createPipeline(opts, { ...deps, hooks: { body: { sketch: 'none' } } }, bodyMode({ parsers }))
      : createPipeline(opts, deps);
    return pipeline.complete(request, signal);
  }

  void test("the e2e's Java body (`this.cart = cart;` fifteen times, then `this`) shows nothing: CheckoutService has no field cart", async () => {
    const result = await complete(emptiedCheckout(), `${'this.cart = cart;\n        '.repeat(15)}this`, { body: true });
    assert.equal(result.items[0]?.text, undefined, JSON.stringify(result.items[0]?.text));
    assert.ok(
      result.trace.junk?.some((j) => j.rule === 'repeat' && /15 times/.test(j.note)),
      JSON.stringify(result.trace.junk),
    );
    assert.deepEqual(
      result.trace.check?.fixes?.map((f) => [f.action, f.receiver, f.wrote]),
      [['cut', 'this', 'cart']],
    );
    const md = formatTraceMarkdown(result.trace);
    assert.match(md, /## Junk filters[^]*repeat: a line written 15 times in a row/);
    assert.match(md, /cut before `this\.cart` \(`this` has no member `cart`\)/);
  });

  void test('a body that loops on a valid block keeps its first copy, the loop is cut at its third copy', async () => {
    const loop = 'receipts.clear();\n        gateway.name();\n        ';
    const result = await complete(emptiedCheckout(), `String owner = cart.getOwner();\n        ${loop.repeat(4)}return null;`, {
      body: true,
    });
    assert.equal(result.items[0]?.text, 'String owner = cart.getOwner();\n        receipts.clear();\n        gateway.name();');
    assert.match(result.trace.junk?.[0]?.note ?? '', /a block of 2 lines written 4 times in a row/);
  });

  void test('line mode: a single line looping within a block is cut the same way', async () => {
    const request = at('pyshop', 'pyshop/services/checkout.py', 29, '        ');
    const result = await complete(
      request,
      'total = self.cart.total()\n        self.receipts.clear()\n        self.receipts.clear()\n        self.receipts.clear()\n        self.receipts.clear()',
    );
    assert.equal(result.items[0]?.text, 'total = self.cart.total()\n        self.receipts.clear()');
  });

  void test('a statement or phrase written again with small variations to the end of a line shows nothing', async () => {
    const java = await complete(
      at('javashop', 'src/main/java/com/example/shop/App.java', 14, '        '),
      'int min = max; int min = max; int max = min; int min = max; int min = max + 1; int min = max;',
    );
    assert.equal(java.items[0]?.text, undefined, JSON.stringify(java.items[0]?.text));
    assert.match(formatTraceMarkdown(java.trace), /nearRepeat: "int min = max ;" written 6 times with small variations to the end/);
    const python = await complete(
      at('pyshop', 'pyshop/services/checkout.py', 29, '        return '),
      'True if not None or not None or not None or None or not None or not None or not',
    );
    assert.equal(python.items[0]?.text, undefined, JSON.stringify(python.items[0]?.text));
    assert.match(python.trace.empty ?? '', /the junk filters cut the whole suggestion: .* written \d+ times with small variations/);
  });

  void test('the redaction placeholder, in the forms models copy it, is never shown, in line and body mode', async () => {
    const request = at('pyshop', 'app/main.py', 18, '    gateway = make_gateway(config.DEFAULT_GATEWAY, ');
    for (const form of ['"<redacted>"', '"<REDACTED>"', "'< Redacted >'", '"&lt;redacted&gt;"']) {
      const result = await complete(request, `api_key=${form})`);
      assert.equal(result.items[0]?.text, undefined, `${form}: ${JSON.stringify(result.items[0]?.text)}`);
      assert.ok(
        result.trace.junk?.some((j) => j.rule === 'placeholder'),
        `${form}: ${JSON.stringify(result.trace.junk)}`,
      );
    }
    const body = await complete(
      emptiedCheckout(),
      'String owner = cart.getOwner();\n        String key = "<REDACTED>";\n        return null;',
      { body: true },
    );
    assert.equal(body.items[0]?.text, 'String owner = cart.getOwner();');
    assert.match(formatTraceMarkdown(body.trace), /placeholder: the model wrote the redaction placeholder <REDACTED>/);
  });

  void test('the e2e\'s Python suggestion `lineno="<redacted>")`: a keyword argument CheckoutService lacks is cut (constrain) or repaired (repair)', async () => {
    const request = at('pyshop', 'app/main.py', 18, '    service = CheckoutService(cart, ');
    const cut = await complete(request, 'lineno=gateway)');
    assert.equal(cut.items[0]?.text, undefined, JSON.stringify(cut.items[0]?.text));
    assert.deepEqual(
      cut.trace.check?.fixes?.map((f) => [f.kind, f.action, f.receiver, f.wrote]),
      [['argument', 'cut', 'CheckoutService', 'lineno']],
    );
    assert.match(formatTraceMarkdown(cut.trace), /cut before `CheckoutService\(…, lineno=` \(CheckoutService has no parameter `lineno`\)/);
    const repaired = await complete(request, 'gatewy=gateway)', { mode: 'repair' });
    assert.equal(repaired.items[0]?.text, 'gateway=gateway)');
    const kept = await complete(request, 'gateway=gateway)');
    assert.equal(kept.items[0]?.text, 'gateway=gateway)', 'a parameter it has stays');
    const off = await complete(request, 'lineno=gateway)', { mode: 'off' });
    assert.equal(off.items[0]?.text, 'lineno=gateway)', 'check mode off checks nothing');
  });

  void test('after a Java type name only its static members and the class literal: `this`, `getClass` and `X.class = ...` are cut', async () => {
    const line = (tail: string) => at('javashop', 'src/main/java/com/example/shop/App.java', 14, tail);
    for (const [tail, wrote, shown] of [
      ['        int n = Prices.', 'this);', undefined],
      ['        Object o = Prices.', 'getClass.get(0);', undefined],
      ['        Object o = Prices.', 'class = new Prices.class;', undefined],
      ['        String c = Prices.', 'class.getName();', 'class.getName();'],
      ['        String s = Prices.', 'format(1.0);', 'format(1.0);'],
    ] as const) {
      const result = await complete(line(tail), wrote);
      assert.equal(result.items[0]?.text, shown, `${tail}${wrote}: ${JSON.stringify(result.items[0]?.text)}`);
      if (shown === undefined) assert.match(result.trace.empty ?? '', /checking cut the whole suggestion/);
    }
  });

  void test('a suggestion that only re-types the text after the cursor is not shown: the next line, a closing bracket', async () => {
    const next = await complete(at('pyshop', 'app/main.py', 18, '    '), 'receipt = service.checkout()');
    assert.equal(next.items[0]?.text, undefined, JSON.stringify(next.items[0]?.text));
    assert.equal(next.trace.junk?.[0]?.rule, 'rightContext');
    assert.match(next.trace.empty ?? '', /only re-typed the text after the cursor/);
    const other = await complete(at('pyshop', 'app/main.py', 18, '    '), 'print(cart)');
    assert.equal(other.items[0]?.text, 'print(cart)', 'a line the suffix does not hold is shown');
  });
});
