// The unfinished file's analysis: its chains read lexically, its prefix made parseable, and one
// request parsing it once: dataflow retrieval and receiver typing read one analysis of
// the prefix, made by whichever stage asks first.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Parser } from 'web-tree-sitter';
import { ReceiverTyper } from '../../../src/engine/check/receiverMembers';
import type { Parsers } from '../../../src/engine/kb/parsers';
import type { ModelCapabilities, ModelClient } from '../../../src/engine/generate/types';
import { chainsOfText, PYTHON_KEYWORDS } from '../../../src/engine/flow/flowGraph';
import { foldPrefix, MAX_KEPT_LINES } from '../../../src/engine/flow/foldPrefix';
import { analyseUnfinished, parseableText, seedLineOf } from '../../../src/engine/flow/unfinished';
import { createPipeline, resolveOptions } from '../../../src/engine/pipeline';
import { DataflowRetriever } from '../../../src/engine/retrieve/dataflow/dataflowRetrieve';
import { fixturesDir } from '../../helpers/paths';
import { fixtureKb, parsers } from '../retrieve/retrieveFixtures';

void test('chainsOfText reads attribute chains and calls lexically, skipping strings and keywords; the typed identifier is partial', () => {
  assert.deepEqual(chainsOfText('    x = self.gateway.charge(cart.total, "a.b") + len(y', PYTHON_KEYWORDS), [
    [{ name: 'x' }],
    [{ name: 'self' }, { name: 'gateway' }, { name: 'charge', call: true }],
    [{ name: 'cart' }, { name: 'total' }],
    [{ name: 'y', partial: true }],
  ]);
  assert.deepEqual(chainsOfText('cart.ad', PYTHON_KEYWORDS), [[{ name: 'cart' }, { name: 'ad', partial: true }]]);
  assert.deepEqual(chainsOfText('x = make(a, f(b)).build().val', PYTHON_KEYWORDS), [
    [{ name: 'x' }],
    [
      { name: 'make', call: true },
      { name: 'build', call: true },
      { name: 'val', partial: true },
    ],
    [{ name: 'a' }],
    [{ name: 'f', call: true }],
    [{ name: 'b' }],
  ]);
});

void test('seedLineOf: the cursor line, or the last non-blank line when the cursor line names nothing', () => {
  assert.deepEqual(seedLineOf('a = 1\nb = a\n', 'python'), { text: 'b = a', line: 1 });
  assert.deepEqual(seedLineOf('a = 1\n    cart.', 'python'), { text: '    cart.', line: 1 });
  assert.deepEqual(seedLineOf('', 'python'), { text: '', line: 0 });
});

void test('parseableText folds other bodies, closes open Java blocks and turns the unfinished Python line into pass', () => {
  assert.deepEqual(parseableText('class A {\n  void f() {\n    String s = "{";\n    x.', 'java'), {
    text: 'class A {\n  void f() {\n    String s = "{";\n}\n}\n',
    cursor: 42,
  });
  assert.deepEqual(parseableText('def f():\n    x = g(', 'python'), { text: 'def f():\n    pass\n', cursor: 8 });
  // A blank cursor line stays in the block above it.
  assert.equal(parseableText('def f():\n    x = 1\n', 'python').text, 'def f():\n    x = 1\n    pass\n');
  // Bodies of other functions are folded; self fields and the enclosing blocks are kept.
  const prefix = [
    'import os',
    'class C(B):',
    '    def __init__(self, a):',
    '        if a:',
    '            self.a: A = a',
    '        other(a)',
    '    def g(self):',
    '        y = 1',
    '        y.',
  ].join('\n');
  assert.equal(
    parseableText(prefix, 'python').text,
    [
      'import os',
      'class C(B):',
      '    def __init__(self, a):',
      '        self.a: A = a',
      '    def g(self):',
      '        y = 1',
      '        pass',
      '',
    ].join('\n'),
  );
  // A huge module keeps its imports, the enclosing headers and the statements nearest the cursor.
  const huge = [
    'import os',
    ...Array.from({ length: 5000 }, (_, i) => `v${i} = ${i}`),
    'from late import thing',
    'def f():',
    '    x = 1',
    '    x.',
  ];
  const folded = foldPrefix(huge.slice(0, -1), 'python').split('\n');
  assert.equal(folded.length, MAX_KEPT_LINES);
  assert.deepEqual(folded.slice(0, 2), ['import os', `v${5000 - (MAX_KEPT_LINES - 4)}`.replace(/^v(\d+)$/, 'v$1 = $1')]);
  assert.deepEqual(folded.slice(-3), ['from late import thing', 'def f():', '    x = 1']);
});

void test('the parseable text parses: Java statements continued on the next line stay whole, comment-only statements and the statement open at the cursor go, try and argument-list blocks are closed', async () => {
  const real = await parsers();
  const java = [
    'package p;',
    '/**',
    ' * Pools things. {@link Foo#bar(',
    ' *   Baz) see} it',
    ' */',
    'public class A implements',
    '        Runnable {',
    '    /** The pools by name. */',
    '    private final Map<String, Pool> pools =',
    '            new HashMap<>();',
    '    void other() throws IOException,',
    '            TimeoutException {',
    '        x();',
    '    }',
    '    void f() {',
    '        try {',
    '            register(new Listener() {',
    '                void on() {',
    '                    if (ready &&',
    '                            pools.isEmpty()',
    '                            && ',
  ].join('\n');
  const { text } = parseableText(java, 'java');
  assert.ok(!text.includes('/**') && !text.includes('Pools things'), text);
  assert.ok(text.includes('Runnable {') && text.includes('new HashMap<>();') && text.includes('TimeoutException {'), text);
  assert.ok(!text.includes('if (ready'), 'the statement still open at the cursor is not parsed');
  assert.ok(text.endsWith('void on() {\n}\n});\n} finally {}\n}\n}\n'), text);
  // An anonymous class in a field's initializer, and a switch rule's block, closed as they parse.
  const field = [
    'class B {',
    '    private final Runnable r = new Runnable() {',
    '        public void run() {',
    '            switch (k) {',
    '                case 1 -> {',
    '                    go();',
    '',
  ].join('\n');
  const fieldText = parseableText(field, 'java').text;
  assert.ok(fieldText.endsWith('go();\n}\n}\n}\n};\n}\n'), fieldText);
  assert.equal(analyseUnfinished(real, 'p/B.java', 'java', field).extraction.hasSyntaxErrors, false, fieldText);
  // Members indented with tabs and bodies with spaces (a tab is four columns in Java): the other method's body is folded.
  const mixed = [
    'class C {',
    '\tint f(int i) {',
    '        int j = i;',
    '        if (j < 0) {',
    '            j = 0;',
    '        }',
    '        return j;',
    '\t}',
    '\tvoid g() {',
    '\t\t',
  ].join('\n');
  const mixedText = parseableText(mixed, 'java').text;
  assert.equal(mixedText, 'class C {\n\tint f(int i) {\n\t}\n\tvoid g() {\n}\n}\n');
  assert.equal(analyseUnfinished(real, 'p/C.java', 'java', mixed).extraction.hasSyntaxErrors, false, mixedText);
  const javaAnalysis = analyseUnfinished(real, 'p/A.java', 'java', java);
  assert.equal(javaAnalysis.extraction.hasSyntaxErrors, false, text);
  assert.deepEqual(
    javaAnalysis.flow.bindings.get('pools')?.map((b) => b.types.map((t) => t.map((s) => s.name).join('.'))),
    [['Pool']],
  );
  assert.deepEqual(javaAnalysis.flow.enclosingClasses, ['A']);

  const python = [
    '"""The module."""',
    'import os',
    'class C:',
    '    """A class',
    '    with a long docstring."""',
    '    limit = 3',
    '    def f(self):',
    '        """Makes things."""',
    '        x = call(a,',
    '                 b,',
    '                 ',
  ].join('\n');
  const folded = parseableText(python, 'python').text;
  assert.equal(folded, ['import os', 'class C:', '    limit = 3', '    def f(self):', '        pass', ''].join('\n'));
  assert.equal(analyseUnfinished(real, 'm.py', 'python', python).extraction.hasSyntaxErrors, false, folded);
  // Decorators just above the cursor wait for their function: they are not parsed alone.
  assert.equal(
    parseableText(['class K:', '    x = 1', '    @property', '    @cached', ''].join('\n'), 'python').text,
    'class K:\n    x = 1\n    pass\n',
  );
});

/** The real parsers, keeping each text they are asked to parse. */
function recordingParsers(real: Parsers, texts: string[]): Parsers {
  return {
    language: (lang) => real.language(lang),
    parser: (lang) => {
      const parser = real.parser(lang);
      return {
        parse: (text: string, ...rest: unknown[]) => (texts.push(text), (parser.parse as (...a: unknown[]) => unknown)(text, ...rest)),
      } as unknown as Parser;
    },
  };
}

function client(capabilities: ModelCapabilities | undefined): ModelClient {
  return {
    backend: 'ollama',
    model: 'm',
    family: 'plain',
    endpoint: 'http://model.test',
    ...(capabilities ? { capabilities } : {}),
    generate: () => Promise.resolve({ text: 'totl()\n', model: 'm', elapsedMs: 1, stoppedBy: 'stop' as const }),
  };
}

void test('a completion request parses the unfinished file once for dataflow retrieval and receiver typing', async () => {
  const kb = await fixtureKb('pyshop');
  const texts: string[] = [];
  const counted = recordingParsers(await parsers(), texts);
  const typer = new ReceiverTyper(kb, counted);
  try {
    const lines = readFileSync(join(fixturesDir, 'pyshop', 'app', 'main.py'), 'utf8').split('\n');
    const request = {
      filePath: 'app/main.py',
      lang: 'python' as const,
      prefix: `${lines.slice(0, 18).join('\n')}\n    cart.`,
      suffix: '\n',
    };
    // A client that takes a member choice (typed before the call) and one whose answer is repaired (typed after it).
    for (const capabilities of [{ memberChoice: true }, undefined]) {
      texts.length = 0;
      const pipeline = createPipeline(resolveOptions({ query: { strategy: 'last10' }, check: { mode: 'constrain' } }), {
        env: { repo: { retrievers: [new DataflowRetriever(kb, counted)], receivers: typer }, model: client(capabilities) },
      });
      const result = await pipeline.complete(request, new AbortController().signal);
      // Both stages did their work on the file: dataflow found the Cart class, checking typed `cart`.
      const dataflow = result.trace.retrieval?.paths.find((p) => p.path === 'dataflow');
      assert.ok(dataflow && dataflow.status === 'ok' && dataflow.results.length > 0, JSON.stringify(dataflow));
      assert.ok(
        result.trace.check?.atCursor?.receiver === 'cart' || result.trace.check?.fixes?.length === 1,
        JSON.stringify(result.trace.check),
      );
      // The folded prefix and its import header, each parsed once.
      assert.equal(texts.length, 2, `parsed: ${JSON.stringify(texts.map((t) => t.slice(-40)))}`);
      assert.equal(new Set(texts).size, 2);
    }
  } finally {
    typer.dispose();
  }
});

void test("keystrokes typed on one line reuse the pipeline's analysis: the line's file is parsed once, again once a line is finished", async () => {
  const kb = await fixtureKb('pyshop');
  const texts: string[] = [];
  const counted = recordingParsers(await parsers(), texts);
  const lines = readFileSync(join(fixturesDir, 'pyshop', 'app', 'main.py'), 'utf8').split('\n');
  const above = lines.slice(0, 18).join('\n');
  const options = resolveOptions({ query: { strategy: 'last10' } });
  const pipeline = createPipeline(options, { env: { repo: { retrievers: [new DataflowRetriever(kb, counted)] } } });
  const ask = (p: typeof pipeline, prefix: string) =>
    p.complete({ filePath: 'app/main.py', lang: 'python', prefix, suffix: '\n' }, new AbortController().signal);
  const ids = (r: Awaited<ReturnType<typeof ask>>) => r.contexts.map((c) => c.snippet.id);
  const typed = ['    c', '    ca', '    cart', '    cart.', '    cart.t'];
  for (const line of typed) await ask(pipeline, `${above}\n${line}`);
  assert.equal(texts.length, 2, `typing one line parsed: ${JSON.stringify(texts.map((t) => t.slice(-30)))}`);
  // What a kept analysis finds is what a fresh pipeline finds.
  const plain = await parsers();
  const fresh = createPipeline(options, { env: { repo: { retrievers: [new DataflowRetriever(kb, plain)] } } });
  const last = `${above}\n${typed.at(-1)!}`;
  assert.deepEqual(ids(await ask(pipeline, last)), ids(await ask(fresh, last)));
  assert.ok(ids(await ask(pipeline, last)).length > 0);
  // Enter: the finished line is parsed with the file (the folded text changed).
  await ask(pipeline, `${above}\n    cart.total()\n    `);
  assert.equal(texts.length, 3, 'the file parsed again once the line above the cursor changed (its import header was kept)');
});
