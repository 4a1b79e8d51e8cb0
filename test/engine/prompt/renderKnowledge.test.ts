// What another file contributes to a model's prompt: items rendered compact (signature, docstring,
// body elided unless short), code with its string values masked, in every prompt form (line mode,
// body mode, the LLM reranker's windows), with real tree-sitter extraction and a real knowledge base
// over a small repository written here.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { grammarsDir } from '../../helpers/paths';
import { recordingModel } from '../../helpers/recordingModel';
import { KnowledgeBase } from '../../../src/engine/kb/KnowledgeBase';
import { loadParsers, type Parsers } from '../../../src/engine/kb/parsers';
import { extractFile } from '../../../src/engine/kb/extract';
import { RepoMethods } from '../../../src/engine/body/RepoMethods';
import { bodyMode, createPipeline, LINE_MODE, resolveOptions, type CompletionRequest } from '../../../src/engine/pipeline';
import { createRepositoryIndex } from '../../../src/engine/index/repositoryIndex';
import { snippetOfItem, type Candidate, type Snippet } from '../../../src/engine/retrieve/types';
import { MAX_SUMMARY_LINES, renderBrief, renderFileItems, renderSnippet } from '../../../src/engine/prompt/renderKnowledge';
import { PromptMemory } from '../../../src/engine/prompt/promptMemory';
import { maskStrings } from '../../../src/engine/prompt/maskStrings';
import { BestFitRerankStage } from '../../../src/engine/rerank/rerankCandidates';
import type { RerankDoc, Reranker } from '../../../src/engine/rerank/types';

// Credentials planted in files the user never opened; none may reach a model.
const SECRETS = [
  'Pg_9xQ2-vLm7',
  '8f14e45fceea167a5a36dedd4bea2543',
  'svc-Hq7pW2z',
  'tok_live_Zk81mQ',
  'Tr0ub4dor&3',
  'AccountKey=Zm9vYmFyYmF6cXV4cXV1eDEyMzQ1Njc4OTA=',
  'MIIEowIBAAKCAQEAvQ1x9kq',
  'jdbcPw_77aa',
];

const PY_CLIENT = `import os

PGPASSWORD = "${SECRETS[0]}"
TWILIO_AUTH = "${SECRETS[1]}"
creds = ("svc", "${SECRETS[2]}")
AZURE = "DefaultEndpointsProtocol=https;AccountName=shopacct;${SECRETS[5]};EndpointSuffix=core.windows.net"
PEM = ("-----BEGIN RSA PRIVATE KEY-----\\n"
       "${SECRETS[6]}\\n"
       "-----END RSA PRIVATE KEY-----\\n")
DEFAULT_REGION = "eu-west"


class CanaryClient:
    """Talks to the canary service."""

    def __init__(self, host, apitoken: str = "${SECRETS[3]}"):
        """Make a client.

        the admin password is ${SECRETS[4]}
        """
        self.host = host
        self.apitoken = apitoken

    @property
    def region(self):
        return DEFAULT_REGION

    def fetch_canary_orders(self, customer_id, limit=10):
        """Orders of one customer, newest first."""
        url = "https://" + self.host + "/orders"
        session = connect(PGPASSWORD, creds, AZURE, PEM)
        rows = session.query(url, customer_id, limit)
        rows.sort(key=lambda r: r.created, reverse=True)
        kept = [r for r in rows if r.visible]
        return kept
`;

const JAVA_DB = `package com.shop;

public class Db {
    private static final String JDBC_URL = "jdbc:postgresql://db:5432/shop?user=app&password=${SECRETS[7]}";
    static final String MODE = "fast";

    /** Opens a connection to the shop database. */
    public static Connection canaryOpen(String url, int retries) {
        Connection c = Driver.connect(url, "${SECRETS[0]}");
        for (int i = 0; i < retries && c == null; i++) c = Driver.connect(url, "${SECRETS[0]}");
        c.setAutoCommit(false);
        c.setSchema("shop");
        return c;
    }
}
`;

const JAVA_USER = `package com.shop;

public class Reports {
    public Connection canaryConnection(String url) {
        Connection c = Db.canaryOpen(JDBC_FALLBACK + "?password=${SECRETS[7]}", 3);
        c.setClientInfo("TWILIO_AUTH", "${SECRETS[1]}");
        return c;
    }
}
`;

/** A dataflow class summary of a logger interface (its text without the path line). */
function loggerSummary(text: string): Snippet {
  return {
    id: 'log/Logger.java#class:Logger',
    kind: 'class',
    path: 'log/Logger.java',
    name: 'Logger',
    qualifiedName: 'Logger',
    range: { startLine: 0, endLine: 900 },
    text,
  };
}

function leaked(text: string): string[] {
  return SECRETS.filter((s) => text.includes(s));
}

/** A temporary repository of `files`, indexed. */
async function indexedRepo(parsers: Parsers, name: string, files: Record<string, string>): Promise<{ root: string; kb: KnowledgeBase }> {
  const root = mkdtempSync(join(tmpdir(), name));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
  const kb = await KnowledgeBase.open({ repoRoot: root, parsers });
  await kb.index(undefined, new AbortController().signal);
  return { root, kb };
}

void describe("compact renderings of other files' knowledge", () => {
  let parsers: Parsers;
  let root: string;
  let kb: KnowledgeBase;
  const signal = new AbortController().signal;

  before(async () => {
    parsers = await loadParsers(grammarsDir);
    ({ root, kb } = await indexedRepo(parsers, 'render-', {
      'shop/client.py': PY_CLIENT,
      'src/main/java/com/shop/Db.java': JAVA_DB,
      'src/main/java/com/shop/Reports.java': JAVA_USER,
    }));
  });
  after(() => {
    kb.dispose();
    rmSync(root, { recursive: true, force: true });
  });

  const items = (path: string, lang: 'python' | 'java', text: string) => extractFile(parsers, lang, path, text).items;

  void test('a Python method is its class header, signature and docstring with the body elided; a property stays whole', () => {
    const all = items('shop/client.py', 'python', PY_CLIENT);
    const fetch = renderSnippet(snippetOfItem(all.find((i) => i.name === 'fetch_canary_orders')!));
    assert.equal(fetch.container.join('\n'), 'class CanaryClient:');
    assert.equal(
      fetch.member,
      '    def fetch_canary_orders(self, customer_id, limit=10):\n        """Orders of one customer, newest first."""\n        ...',
    );
    assert.equal(fetch.text, `class CanaryClient:\n${fetch.member}`);
    const region = renderSnippet(snippetOfItem(all.find((i) => i.name === 'region')!));
    assert.equal(region.member, '    @property\n    def region(self):\n        return DEFAULT_REGION');
    // The caller may ask for the whole body.
    assert.match(renderSnippet(snippetOfItem(all.find((i) => i.name === 'fetch_canary_orders')!), 'body').text, /rows\.sort/);
  });

  void test('a long decorator list is shown as its first decorators without their arguments; a class summary keeps its head and names the rest', () => {
    const options = Array.from(
      { length: 30 },
      (_, i) => `@click.option(\n    "--opt${i}",\n    default=${i},\n    help="Option ${i}.",\n)`,
    ).join('\n');
    const source = `import click\n\n\n@click.command()\n${options}\ndef worker(**kwargs):\n    \"\"\"Start a worker.\"\"\"\n    run(kwargs)\n    return 0\n`;
    const worker = renderSnippet(snippetOfItem(items('cli/worker.py', 'python', source).find((i) => i.name === 'worker')!));
    assert.equal(
      worker.member,
      '@click.command()\n@click.option(...)\n@click.option(...)\ndef worker(**kwargs):\n    \"\"\"Start a worker.\"\"\"\n    ...',
    );
    const members = Array.from({ length: 40 }, (_, i) => `    def method_${i}(self, value_${i}: int) -> int: ...`).join('\n');
    const summary = renderSnippet({
      id: 'big.py#class:Big',
      kind: 'class',
      path: 'big.py',
      name: 'Big',
      qualifiedName: 'Big',
      range: { startLine: 0, endLine: 40 },
      text: `class Big:\n    \"\"\"A big class.\"\"\"\n${members}`,
    });
    const lines = summary.text.split('\n');
    // The header, the docstring and the first members up to the cut: the rest are named under the header.
    const shown = MAX_SUMMARY_LINES - 2;
    assert.equal(lines.length, MAX_SUMMARY_LINES + 1, `${lines.length} lines`);
    assert.equal(lines[0], 'class Big:');
    assert.equal(
      lines[1],
      `    # also: ${Array.from({ length: 40 - shown }, (_, i) => `method_${i + shown}`).join(', ')}`,
      'the members past the cut are still named, under the header',
    );
    assert.equal(lines.at(-1), `    def method_${shown - 1}(self, value_${shown - 1}: int) -> int: ...`);
  });

  void test("a Java class summary cut short keeps the names its own `also:` line listed (overloads of a logger's methods)", () => {
    // A dataflow class summary: the first signatures, then the members it had no room for by name.
    const levels = ['debug', 'error', 'fatal', 'info', 'trace'];
    const signatures = levels.flatMap((l) => [`    void ${l}(String message);`, `    void ${l}(String message, Object p0);`]);
    const text = [
      '// log/Logger.java',
      'public interface Logger {',
      ...signatures,
      '    // also: isDebugEnabled, log, printf, warn',
      '}',
    ].join('\n');
    const summary = renderSnippet(loggerSummary(text.slice(text.indexOf('\n') + 1)));
    const also = summary.text.split('\n')[1] ?? '';
    assert.match(also, /^ {4}\/\/ also: /, summary.text);
    for (const name of ['trace', 'isDebugEnabled', 'log', 'printf', 'warn'])
      assert.ok(new RegExp(`\\b${name}\\b`).test(also), `${name} is named: ${also}`);
  });

  void test('a Python global is its declaration with masked values; a one-word value bound to a name is masked too', () => {
    const all = items('shop/client.py', 'python', PY_CLIENT);
    const shown = (name: string) => renderSnippet(snippetOfItem(all.find((i) => i.name === name)!)).text;
    assert.equal(shown('PGPASSWORD'), 'PGPASSWORD = "…"');
    assert.equal(shown('creds'), 'creds = ("…", "…")');
    // Another file's shape, not its values: a word bound to a name may be a one-word password.
    assert.equal(shown('DEFAULT_REGION'), 'DEFAULT_REGION = "…"');
    assert.equal(shown('PEM'), 'PEM = ("…"\n       "…"\n       "…")');
  });

  void test("a Java method is its class header, Javadoc and declaration ending in `;`; a field's value is masked", () => {
    const all = items('src/main/java/com/shop/Db.java', 'java', JAVA_DB);
    const open = renderSnippet(snippetOfItem(all.find((i) => i.name === 'canaryOpen')!));
    assert.deepEqual(open.container, ['public class Db {']);
    assert.equal(
      open.member,
      '    /** Opens a connection to the shop database. */\n    public static Connection canaryOpen(String url, int retries);',
    );
    assert.equal(open.text, `public class Db {\n${open.member}\n}`);
    assert.equal(renderSnippet(snippetOfItem(all.find((i) => i.name === 'MODE')!)).member, '    static final String MODE = "…";');
    assert.equal(
      renderSnippet(snippetOfItem(all.find((i) => i.name === 'JDBC_URL')!)).member,
      '    private static final String JDBC_URL = "…";',
    );
  });

  void test('in brief: a method is its signature under its class header, a class its header and the names of its members', () => {
    const java = items('src/main/java/com/shop/Db.java', 'java', JAVA_DB);
    const open = snippetOfItem(java.find((i) => i.name === 'canaryOpen')!);
    assert.equal(renderBrief(open), 'public class Db {\n    public static Connection canaryOpen(String url, int retries);\n}');
    const py = items('shop/client.py', 'python', PY_CLIENT);
    const fetch = snippetOfItem(py.find((i) => i.name === 'fetch_canary_orders')!);
    assert.equal(renderBrief(fetch), 'class CanaryClient:\n    def fetch_canary_orders(self, customer_id, limit=10): ...');
    // Shorter than the compact form, which keeps the docstring.
    assert.ok(renderBrief(fetch)!.length < renderSnippet(fetch).text.length);
    // A field's brief masks its value as the compact form does.
    assert.equal(
      renderBrief(snippetOfItem(java.find((i) => i.name === 'JDBC_URL')!)),
      'public class Db {\n    private static final String JDBC_URL = "…";\n}',
    );
    const summary = renderBrief(
      loggerSummary(
        'public interface Logger {\n    void info(String message);\n    void warn(String message);\n    // also: isDebugEnabled, log\n}',
      ),
    );
    assert.equal(summary, 'public interface Logger {\n    // also: info, warn, isDebugEnabled, log\n}');
    assert.deepEqual(leaked(java.map((i) => renderBrief(snippetOfItem(i)) ?? '').join('\n')), []);
  });

  void test("one file's items grouped: each class header once, members in source order", () => {
    const py = items('shop/client.py', 'python', PY_CLIENT).map((i) => renderSnippet(snippetOfItem(i)));
    const grouped = renderFileItems('shop/client.py', [...py].reverse());
    assert.equal(grouped.split('\n').filter((l) => l === 'class CanaryClient:').length, 1, grouped);
    assert.ok(
      grouped.indexOf('def __init__') < grouped.indexOf('def region') &&
        grouped.indexOf('def region') < grouped.indexOf('def fetch_canary_orders'),
      grouped,
    );
    assert.deepEqual(leaked(grouped), []);
    const java = items('src/main/java/com/shop/Db.java', 'java', JAVA_DB).map((i) => renderSnippet(snippetOfItem(i)));
    const j = renderFileItems('src/main/java/com/shop/Db.java', java);
    assert.equal(
      j,
      [
        'public class Db {',
        '    private static final String JDBC_URL = "…";',
        '    static final String MODE = "…";',
        '    /** Opens a connection to the shop database. */',
        '    public static Connection canaryOpen(String url, int retries);',
        '}',
      ].join('\n'),
    );
  });

  void test('string literals: prefixes, triple quotes, text blocks, unterminated literals; char literals and format strings stay', () => {
    // Literals joined by `+` or implicit concatenation are judged as one value.
    assert.equal(
      maskStrings('x = rb"a8Zq7\\"v" + f\'{a}:{b}\'\ny = f\'{a}:{b}\'\nz = """long\nsecret Zq8"""\n', 'python').text,
      'x = rb"…" + f\'…\'\ny = f\'{a}:{b}\'\nz = """…"""\n',
    );
    assert.equal(
      maskStrings('log.info("fetched %s rows", n)\nopen("./data/rows.csv")', 'python').text,
      'log.info("fetched %s rows", n)\nopen("./data/rows.csv")',
    );
    assert.equal(maskStrings('s = "Zq8x7Pw2mK\ny = 1', 'python').text, 's = "…\ny = 1');
    // A forward reference is a type's name, not a value.
    const typed = 'def add(self, p: "Product", q: int = 1) -> "Cart.Line": ...';
    assert.equal(maskStrings(typed, 'python').text, typed);
    assert.equal(maskStrings('t = """never closed Zq8x7Pw2mK', 'python').text, 't = """…');
    assert.equal(maskStrings('char q = \'"\'; String t = """\n  Zq8x7Pw2mK\n  """;', 'java').text, 'char q = \'"\'; String t = """…""";');
    assert.equal(
      maskStrings('url = "https://bob:Zq8x@host/x"; home = "https://host/api/{v}"', 'python').text,
      'url = "…"; home = "https://host/api/{v}"',
    );
  });

  void test('a chosen password passed positionally (no name says credential) is masked, as every positional value is; encodings stay', () => {
    // The held-out credential corpus's form that reached the model server: the overload's parameter name is in another item.
    assert.equal(maskStrings('return connect("app", "Aspen-Vole-90");', 'java').text, 'return connect("…", "…");');
    assert.equal(maskStrings('login(user, "Gq7-Larch-Ember", "juniper-Rook-3")', 'python').text, 'login(user, "…", "…")');
    // Encodings are a fixed vocabulary no credential is spelled as; the other words are values bound to a name.
    assert.equal(
      maskStrings(
        'enc = ("utf-8", "ISO-8859-1", "Windows-1252", "en_US.UTF-8", "us-east-1", "x86_64", "Content-Type", "Etc/GMT-5")',
        'python',
      ).text,
      'enc = ("utf-8", "ISO-8859-1", "Windows-1252", "…", "…", "…", "…", "…")',
    );
  });

  /** A file that calls into the client, the cursor after the call's receiver. */
  const pyRequest: CompletionRequest = {
    filePath: 'shop/report.py',
    lang: 'python',
    prefix: 'from shop.client import CanaryClient, PGPASSWORD, creds\n\nclient = CanaryClient("h")\norders = client.fetch_canary_orders(',
    suffix: '',
  };

  void test("a line-mode prompt shows the canary method's signature and no planted credential; the in-process model sees its body", async () => {
    const { retrievers, dispose } = createRepositoryIndex(kb, parsers, { paths: ['sparse', 'dataflow'] });
    try {
      for (const backend of ['ollama', 'embedded'] as const) {
        const { client, seen } = recordingModel('customer_id)', 'stop', backend);
        const result = await createPipeline(
          resolveOptions(),
          { env: { repo: { retrievers: retrievers }, model: client } },
          LINE_MODE,
        ).complete(pyRequest, signal);
        const prompt = seen.at(-1)?.prompt ?? '';
        assert.match(prompt, /def fetch_canary_orders\(self, customer_id, limit=10\):/);
        // A model server's code model gets the compact form; the shipped in-process model the whole definition.
        if (backend === 'ollama') assert.doesNotMatch(prompt, /rows\.sort/, 'the body is elided');
        else assert.match(prompt, /rows\.sort/, 'the body is shown');
        assert.deepEqual(leaked(prompt), [], `${backend}: ${prompt}`);
        // The contexts carry what the prompt showed.
        const shown = result.contexts.map((c) => c.snippet.text).join('\n');
        assert.match(shown, /fetch_canary_orders/);
        assert.equal(/rows\.sort/.test(shown), backend === 'embedded', backend);
      }
    } finally {
      dispose();
    }
  });

  void test("a model server's prompt holds more items than fit whole: the first ones whole, the rest in brief, as its contexts say", async () => {
    const doc = Array.from({ length: 3 }, (_, i) => `        Line ${i} of a long explanation of what this helper is for.`).join('\n');
    const files: Record<string, string> = {};
    for (let i = 0; i < 24; i++)
      files[`tools/mod_${i}.py`] =
        `def helper_${i}(alpha, beta):\n    """Helper ${i}.\n\n${doc}\n    """\n    total = alpha + beta\n    return total * ${i}\n`;
    const imports = Array.from({ length: 24 }, (_, i) => `from tools.mod_${i} import helper_${i}`).join('\n');
    const calls = Array.from({ length: 24 }, (_, i) => `    x${i} = helper_${i}(a, b)`).join('\n');
    files['tools/run.py'] = `${imports}\n\n\ndef run(a, b):\n${calls}\n    return x0\n`;
    const repo = await indexedRepo(parsers, 'brief-', files);
    const { retrievers, dispose } = createRepositoryIndex(repo.kb, parsers, { paths: ['sparse', 'dataflow'] });
    try {
      const prefix = `${imports}\n\n\ndef run(a, b):\n${calls}\n    y = helper_`;
      const request: CompletionRequest = { filePath: 'tools/run.py', lang: 'python', prefix, suffix: '' };
      const options = resolveOptions({ prompt: { budgetTokens: 900 } });
      const asked = async (backend: 'ollama' | 'embedded') => {
        const { client, seen } = recordingModel('1(a, b)', 'stop', backend);
        const result = await createPipeline(options, { env: { repo: { retrievers: retrievers }, model: client } }, LINE_MODE).complete(
          request,
          signal,
        );
        return { prompt: seen.at(-1)?.prompt ?? '', contexts: result.contexts.map((c) => c.snippet.text) };
      };
      const server = await asked('ollama');
      const named = (p: string) => new Set(p.match(/def helper_\d+\(alpha, beta\)/g) ?? []).size;
      const whole = (server.prompt.match(/"""Helper \d+\./g) ?? []).length;
      const brief = (server.prompt.match(/def helper_\d+\(alpha, beta\): \.\.\./g) ?? []).length;
      assert.ok(whole >= 1, `the first items keep their docstrings: ${server.prompt.slice(0, 2000)}`);
      assert.ok(brief >= 5, `the rest are signatures: ${brief}\n${server.prompt}`);
      assert.ok(named(server.prompt) > 10, `more than the top ten are named: ${named(server.prompt)}`);
      // The contexts are the texts the prompt shows, brief ones included.
      for (const text of server.contexts) assert.ok(server.prompt.includes(text), text);
      assert.equal(server.contexts.filter((t) => /: \.\.\.$/.test(t)).length, brief);
      // The shipped in-process model's prompt is unchanged: whole definitions, no briefs, the top ten at most.
      const embedded = await asked('embedded');
      assert.doesNotMatch(embedded.prompt, /def helper_\d+\(alpha, beta\): \.\.\./);
      assert.ok(embedded.contexts.length <= 10);
    } finally {
      dispose();
      repo.kb.dispose();
      rmSync(repo.root, { recursive: true, force: true });
    }
  });

  void test('a body-mode prompt (usages, signature-similar methods, definitions) carries no planted credential', async () => {
    const repo = new RepoMethods(kb);
    try {
      const request: CompletionRequest = {
        filePath: 'src/main/java/com/shop/Audit.java',
        lang: 'java',
        prefix: 'package com.shop;\n\npublic class Audit {\n    public Connection canaryConnect(String url) {\n        ',
        suffix: '\n    }\n}\n',
      };
      const { client, seen } = recordingModel('return Db.canaryOpen(url, 3);\n    }', 'stop');
      await createPipeline(
        resolveOptions({ body: { maxNewTokens: 16, knowledge: false } }),
        { env: { repo: { retrievers: [], methods: repo }, model: client }, hooks: { body: { sketch: 'none' } } },
        bodyMode({ parsers }),
      ).complete(request, signal);
      const prompt = seen.at(-1)?.prompt ?? '';
      assert.match(prompt, /canaryConnection\(String url\)/, prompt);
      assert.deepEqual(leaked(prompt), [], prompt);
    } finally {
      repo.dispose();
    }
  });

  void test("an LLM reranker's windows carry no planted credential, while the code and a path stay", async () => {
    const windows: RerankDoc[][] = [];
    const reranker: Reranker = {
      kind: 'llm',
      name: 'recording',
      pick: (_query, window) => (windows.push([...window]), Promise.resolve({ index: 0 })),
    };
    const candidates: Candidate[] = kb
      .items()
      .map((item) => ({ snippet: snippetOfItem(item), paths: ['sparse'], scores: { sparse: 1 }, ranks: { sparse: 1 } }));
    await new BestFitRerankStage(reranker).rerank(
      { file: { path: pyRequest.filePath, prefix: pyRequest.prefix }, candidates, topU: 3 } as never,
      signal,
    );
    const sent = windows
      .flat()
      .map((d) => d.text)
      .join('\n');
    assert.match(sent, /def fetch_canary_orders/);
    assert.match(sent, /url = "https:\/\/" \+ self\.host \+ "\/orders"/);
    assert.match(sent, /DEFAULT_REGION = "…"/);
    assert.deepEqual(leaked(sent), []);
  });
});

void describe('a large class summary names first what the code around the cursor uses', () => {
  let parsers: Parsers;
  let root: string;
  let kb: KnowledgeBase;
  const signal = new AbortController().signal;
  // A table of 120 constants: its summary shows a few and names at most 60 of the rest, in source order.
  const constants = Array.from({ length: 120 }, (_, i) => `    public static final int T_${i} = ${i};`).join('\n');
  const head = 'package com.shop;\n\npublic class Check {\n    int kinds() {\n        int a = Tokens.T_110;\n';
  const request = (lines: string): CompletionRequest => ({
    filePath: 'src/main/java/com/shop/Check.java',
    lang: 'java',
    prefix: `${head}${lines}        int b = Tokens.`,
    suffix: ';\n        return a + b;\n    }\n}\n',
  });

  before(async () => {
    parsers = await loadParsers(grammarsDir);
    ({ root, kb } = await indexedRepo(parsers, 'render-sight-', {
      'src/main/java/com/shop/Tokens.java': `package com.shop;\n\npublic final class Tokens {\n${constants}\n}\n`,
      'src/main/java/com/shop/Check.java': `${head}        return a;\n    }\n}\n`,
    }));
  });
  after(() => {
    kb.dispose();
    rmSync(root, { recursive: true, force: true });
  });

  void test("a constant used above the cursor is named in a model server's prompt though it lies past the summary's cut; the place keeps the rendering", async () => {
    const { retrievers, dispose } = createRepositoryIndex(kb, parsers, { paths: ['sparse', 'dataflow'] });
    try {
      const { client, seen } = recordingModel('T_3', 'stop', 'ollama');
      const stages = { env: { repo: { retrievers: retrievers }, model: client }, promptMemory: new PromptMemory() };
      const pipeline = createPipeline(resolveOptions(), stages, LINE_MODE);
      await pipeline.complete(request(''), signal);
      const first = seen.at(-1)?.prompt ?? '';
      const also = first.split('\n').find((l) => /^\s*\/\/ also: .*\bT_\d+/.test(l)) ?? '';
      assert.ok(also !== '', `the Tokens summary is cut and names the rest: ${first.slice(0, 1500)}`);
      assert.match(also, /\/\/ also: T_110\b/, 'the constant the file uses is named first');
      assert.doesNotMatch(also, /\bT_100\b/, 'one it does not use, past the first 60 names, is not');
      // Typing on at the same place: a newly used name does not re-render the block the server has read.
      await pipeline.complete(request('        int c = Tokens.T_100;\n'), signal);
      const second = seen.at(-1)?.prompt ?? '';
      // The block of the first prompt, up to its closing comment mark: the second appends after it, if anything.
      const block = (p: string) => p.slice(0, p.lastIndexOf('*/', p.indexOf('package com.shop;\n\npublic class Check')));
      assert.ok(block(first).includes('// also: T_110,'));
      assert.ok(block(second).startsWith(block(first)), `the block as read before, then what was appended:\n${block(second)}`);
      // A new place (another file) renders it for the names in sight there.
      const elsewhere = await createPipeline(resolveOptions(), { env: { repo: { retrievers: retrievers }, model: client } }, LINE_MODE);
      await elsewhere.complete(request('        int c = Tokens.T_100;\n'), signal);
      assert.match(seen.at(-1)?.prompt ?? '', /\/\/ also: T_110, T_100\b|\/\/ also: T_100, T_110\b/);
    } finally {
      dispose();
    }
  });
});
