// The v2 credential corpus (test/fixtures/secrets-v2) as OTHER files of a small repository: each
// case's code is a module (Python) or a class in a package (Java) as a repository would hold it,
// with a canary (a plain string a completion's retrieval must bring in) defined in the same file,
// and files that use the case's names and the canary so that retrieval reads the case's file while
// the file being completed holds no credential. Run through the real language server to a capturing
// model server, every request is searched for the case's credentials and the canary.
import { join } from 'node:path';
import type { Node, Parser } from 'web-tree-sitter';
import type { Parsers } from '../../src/engine/kb/parsers';
import type { CorpusV2Case } from './secretCorpus';
import { startLsp, type LspSession } from '../server/lspHarness';
import { startOllamaTestServer, type OllamaTestServer } from './ollamaServer';
import { tempDir } from './paths';
import { writeTree } from '../faults/helpers';

/** Endings tried, in order, so that a case that ends inside a literal or a bracket parses (the first that gives no syntax error). */
const PY_ENDINGS = ['', '"', "'", '")', "')", '"\n)', '"""', "'''", ')', '"})', '"]'];
const JAVA_ENDINGS = ['', '"', '";', '");', '"));', '"\n);', ';', ');', '}', '"}', '";}'];

export interface OtherFileCase {
  c: CorpusV2Case;
  /** 3-digit number of the case (names in the repository; never a word of the case's id, which may say `token`). */
  n: string;
  /** The case's file: path in the repository and text. */
  path: string;
  text: string;
  /** How the case's code was placed: as a whole file, as class members, as a method's body, or as module code. */
  placement: 'file' | 'members' | 'method' | 'module';
  /** The plain value defined beside the case's code; retrieval brought the file in when it reaches a request. */
  canary: string;
  /** Names the case's file defines (that the using files refer to). */
  names: string[];
  /** The line-mode file (completed at its end) and the body-mode file (completed in its empty method). */
  line: { path: string; text: string };
  body: { path: string; text: string; row: number; column: number };
}

/** Java's grammar takes statements at the top level (snippets); a repository's file holds only declarations there. */
const JAVA_TOP = new Set([
  'package_declaration',
  'import_declaration',
  'class_declaration',
  'enum_declaration',
  'interface_declaration',
  'record_declaration',
  'line_comment',
  'block_comment',
]);

function parses(parser: Parser, text: string, java: boolean): boolean {
  const tree = parser.parse(text);
  const root = tree?.rootNode;
  const ok = root !== undefined && !root.hasError && (!java || root.namedChildren.every((ch) => ch !== null && JAVA_TOP.has(ch.type)));
  tree?.delete();
  return ok;
}

/** The first of `endings` after which `wrap(code + ending)` parses, or undefined. */
function closed(parser: Parser, code: string, endings: readonly string[], wrap: (code: string) => string): string | undefined {
  const java = endings === JAVA_ENDINGS;
  for (const e of endings) {
    const text = wrap(code + e);
    if (parses(parser, text, java)) return text;
  }
  return undefined;
}

function pyNames(text: string): string[] {
  const names = new Set<string>();
  for (const m of text.matchAll(/^(?:async\s+def|def|class)\s+([A-Za-z_]\w*)|^([A-Za-z_]\w*)\s*(?::[^=\n]+)?=(?!=)/gm))
    names.add((m[1] ?? m[2])!);
  return [...names];
}

function javaNames(parser: Parser, text: string): { types: string[]; fields: Array<[type: string, field: string]> } {
  const tree = parser.parse(text)!;
  const types: string[] = [];
  const fields: Array<[string, string]> = [];
  const walk = (node: Node, owner: string | undefined): void => {
    let inner = owner;
    if (['class_declaration', 'enum_declaration', 'interface_declaration', 'record_declaration'].includes(node.type)) {
      inner = node.childForFieldName('name')?.text;
      if (inner) types.push(inner);
    }
    if (node.type === 'field_declaration' && owner)
      for (const d of node.namedChildren)
        if (d?.type === 'variable_declarator') fields.push([owner, d.childForFieldName('name')?.text ?? '']);
    for (const ch of node.namedChildren) if (ch) walk(ch, inner);
  };
  walk(tree.rootNode, undefined);
  tree.delete();
  return { types, fields: fields.filter(([, f]) => f !== '') };
}

function pythonCase(c: CorpusV2Case, n: string, parser: Parser): OtherFileCase {
  const canary = `canary-case-${n}`;
  const canaryDef = `\n\n\ndef canary_${n}():\n    return "${canary}"\n`;
  // Module code as it is; a case whose first line is indented (a fragment of a body) goes into a function.
  const text =
    closed(parser, c.code, PY_ENDINGS, (code) => `${code}${canaryDef}`) ??
    closed(parser, c.code, PY_ENDINGS, (code) => `def setup_${n}():\n${code.replace(/^/gm, '    ')}${canaryDef}`);
  if (text === undefined) throw new Error(`${c.id}: no placement parses`);
  const names = pyNames(text).filter((x) => x !== `canary_${n}`);
  const imported = [`canary_${n}`, ...names].join(', ');
  const uses = names.length > 0 ? names.join(', ') : `canary_${n}`;
  const line = `from cases.case_${n} import ${imported}\n\nparts = [${uses}]\nlabel = canary_${n}()\nresult = combine_${n}(label, ${uses}, `;
  const bodyLines = [
    `from cases.case_${n} import ${imported}`,
    '',
    '',
    `def report_${n}():`,
    `    """The canary_${n} label with ${names.join(', ') || 'nothing else'}."""`,
    '    ',
    '',
  ];
  return {
    c,
    n,
    path: `cases/case_${n}.py`,
    text,
    placement: text.startsWith(`def setup_${n}`) ? 'method' : 'module',
    canary,
    names,
    line: { path: `app/use_${n}.py`, text: line },
    body: { path: `app/report_${n}.py`, text: bodyLines.join('\n'), row: 5, column: 4 },
  };
}

function javaCase(c: CorpusV2Case, n: string, parser: Parser): OtherFileCase {
  const canary = `canary-case-${n}`;
  const canaryClass = `\n\nfinal class Canary${n} {\n    static String canary${n}() {\n        return "${canary}";\n    }\n}\n`;
  const hasPackage = /^\s*package\s+[\w.]+\s*;/m.test(c.code);
  const pkgLine = hasPackage ? '' : 'package com.example.cases;\n\n';
  const wholeFile = /^\s*(?:package|import)\b|^(?:\s*(?:public|final|abstract|@\w+)\s+)*(?:class|enum|interface|record)\s/m.test(c.code);
  let placement: OtherFileCase['placement'] = 'file';
  let text = wholeFile ? closed(parser, c.code, JAVA_ENDINGS, (code) => `${pkgLine}${code}${canaryClass}`) : undefined;
  if (text === undefined) {
    placement = 'members';
    text = closed(
      parser,
      c.code,
      JAVA_ENDINGS,
      (code) => `${pkgLine}public class Case${n} {\n${code.replace(/^/gm, '    ')}\n}${canaryClass}`,
    );
  }
  if (text === undefined) {
    placement = 'method';
    text = closed(
      parser,
      c.code,
      JAVA_ENDINGS,
      (code) =>
        `${pkgLine}public class Case${n} {\n    void setup${n}() throws Exception {\n${code.replace(/^/gm, '        ')}\n    }\n}${canaryClass}`,
    );
  }
  if (text === undefined) throw new Error(`${c.id}: no placement parses`);
  const pkg = /^\s*package\s+([\w.]+)\s*;/m.exec(text)![1]!;
  const { types, fields } = javaNames(parser, text);
  const main = types.find((t) => t !== `Canary${n}`) ?? `Case${n}`;
  const publicType = /^public\s+(?:final\s+|abstract\s+)*(?:class|enum|interface|record)\s+(\w+)/m.exec(text)?.[1];
  const fileName = `${publicType ?? `Case${n}`}.java`;
  const imports = `import ${pkg}.*;\n\n`;
  const refs = fields.map(([t, f]) => `${t}.${f}`);
  const used = [...refs, placement === 'method' ? `new Case${n}().setup${n}()` : `new ${main}()`].join(', ');
  const line = [
    'package com.example.app;',
    '',
    imports.trimEnd(),
    '',
    `public class Use${n} {`,
    `    Object[] parts() {`,
    `        Object[] all = { ${used} };`,
    `        String label = Canary${n}.canary${n}();`,
    `        return combine${n}(label, ${main}.class, `,
  ].join('\n');
  const body = [
    'package com.example.app;',
    '',
    imports.trimEnd(),
    '',
    `public class Report${n} {`,
    `    /** The Canary${n} label with ${refs.join(', ') || main}. */`,
    `    String report${n}(${main} source, Canary${n} canary) {`,
    '        ',
    '    }',
    '}',
    '',
  ].join('\n');
  return {
    c,
    n,
    path: `src/main/java/${pkg.replace(/\./g, '/')}/${fileName}`,
    text,
    placement,
    canary,
    names: [...types, ...fields.map(([, f]) => f)],
    line: { path: `src/main/java/com/example/app/Use${n}.java`, text: line },
    body: { path: `src/main/java/com/example/app/Report${n}.java`, text: body, row: 7, column: 8 },
  };
}

/** Every case placed as another file (a case's number is its place in `cases`). */
export function otherFileCases(cases: readonly CorpusV2Case[], parsers: Parsers): OtherFileCase[] {
  return cases.map((c, i) => {
    const n = String(i).padStart(3, '0');
    return c.lang === 'python' ? pythonCase(c, n, parsers.parser('python')) : javaCase(c, n, parsers.parser('java'));
  });
}

/** The repository's files (path to text), the cases' own and the using files. */
export function otherFileTree(placed: readonly OtherFileCase[]): Record<string, string> {
  const files: Record<string, string> = { 'cases/__init__.py': '', 'app/__init__.py': '' };
  for (const p of placed) {
    if (files[p.path] !== undefined) throw new Error(`two cases in ${p.path}`);
    files[p.path] = p.text;
    files[p.line.path] = p.line.text;
    files[p.body.path] = p.body.text;
  }
  return files;
}

/** Every string a request body holds, decoded (what the model reads), one per line. */
export function requestText(requests: OllamaTestServer['requests']): string {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  requests.forEach((q) => walk(q.body));
  return out.join('\n');
}

/** The forms of a credential searched for: as written, its escapes decoded, URL-decoded, and every 12-character piece of a value of 16 or more. */
export function secretForms(value: string): string[] {
  const forms = new Set([value]);
  try {
    forms.add(JSON.parse(`"${value.replace(/"/g, '\\"')}"`) as string);
  } catch {
    // not a JSON-escapable form
  }
  forms.add(value.replace(/\\\\/g, '\\'));
  try {
    forms.add(decodeURIComponent(value));
  } catch {
    // not URL-encoded
  }
  if (value.length >= 16) for (let i = 0; i + 12 <= value.length; i++) forms.add(value.slice(i, i + 12));
  return [...forms].filter((f) => f.length > 0);
}

/** The credentials (`case id: form`) of `placed` found in `text`. */
export function leakedSecrets(text: string, placed: readonly OtherFileCase[]): string[] {
  const out: string[] = [];
  for (const p of placed)
    for (const v of p.c.secrets) {
      const hit = secretForms(v).find((f) => text.includes(f));
      if (hit !== undefined) out.push(`${p.c.id}: ${hit}`);
    }
  return out;
}

/**
 * How a case is completed: a file that uses it (line mode at its end, body mode in its empty method), or the case's own file as the
 * one being edited (`self-line`: at its end; `self-body`: in an empty function or method added at its end).
 */
export type CaseMode = 'line' | 'body' | 'self-line' | 'self-body';

/** The case's own file with an empty function (Python) or method (Java, in the canary's class) at its end, and where its body goes. */
export function selfBody(p: OtherFileCase): { text: string; row: number; column: number } {
  if (p.c.lang === 'python') {
    const text = `${p.text.replace(/\s+$/, '')}\n\n\ndef fill_${p.n}():\n    """Fill the canary_${p.n} label."""\n    \n`;
    return { text, row: text.split('\n').length - 2, column: 4 };
  }
  const close = p.text.lastIndexOf('}');
  const text = `${p.text.slice(0, close)}\n    static String fill${p.n}() {\n        \n    }\n}\n`;
  return { text, row: text.split('\n').length - 4, column: 8 };
}

export interface CaseRun {
  p: OtherFileCase;
  mode: CaseMode;
  /** Requests the completion sent, and whether the canary reached one of them. */
  requests: number;
  canary: boolean;
  /** Whether the canary reached a completion request (not only the reranker's). */
  canaryInCompletion: boolean;
  /** The `keep:` values that arrived (as written) in those requests. */
  kept: string[];
}

/** Completes each case's line-mode (and, with `body`, body-mode) file through `lsp`, recording what reached `server`. */
export async function runCases(
  lsp: LspSession,
  server: OllamaTestServer,
  root: string,
  placed: readonly OtherFileCase[],
  modes: readonly CaseMode[],
): Promise<CaseRun[]> {
  const runs: CaseRun[] = [];
  for (const p of placed)
    for (const mode of modes) {
      const own = mode === 'self-line' || mode === 'self-body';
      const body = mode === 'self-body' ? selfBody(p) : p.body;
      const file = own ? { path: p.path, text: mode === 'self-body' ? body.text : p.text } : mode === 'line' ? p.line : p.body;
      const uri = lsp.open(join(root, file.path), p.c.lang, file.text);
      const before = server.requests.length;
      if (mode === 'line' || mode === 'self-line') {
        const lines = file.text.split('\n');
        await lsp.complete(uri, lines.length - 1, lines[lines.length - 1]!.length);
      } else await lsp.complete(uri, body.row, body.column);
      const got = server.requests.slice(before);
      const text = requestText(got);
      const completion = requestText(got.filter((q) => q.path !== '/api/chat'));
      runs.push({
        p,
        mode,
        requests: got.length,
        canary: text.includes(p.canary),
        canaryInCompletion: completion.includes(p.canary),
        kept: p.c.keep.filter((k) => text.includes(k)),
      });
    }
  return runs;
}

/** The two configurations measured: line and body mode with no reranker; line mode with the LLM reranker and ProCC's union of similar code. */
export type OtherFileConfig = 'line+body' | 'llm+union' | 'self';

export interface OtherFileMeasure {
  runs: CaseRun[];
  /** Every string the completions' requests held (requestText). */
  sent: string;
  requests: OllamaTestServer['requests'];
}

/** One language server over `root` (the tree of `placed`) in `config`, every case completed, what `server` received. */
export async function measureOtherFiles(
  root: string,
  placed: readonly OtherFileCase[],
  server: OllamaTestServer,
  models: { completion: string; reranker: string },
  config: OtherFileConfig,
): Promise<OtherFileMeasure> {
  const base = {
    debounceMs: 0,
    model: { provider: 'ollama', family: 'plain', timeoutMs: 5000 },
    ollama: { host: server.url, completionModel: models.completion },
    experimental: { model: { maxNewTokens: 16 }, ollama: { keepAlive: '5m' } },
  };
  const lsp = await startLsp(
    root,
    config === 'line+body'
      ? { ...base, rerank: { kind: 'none' } }
      : config === 'self'
        ? { ...base, rerank: { kind: 'llm', llmModel: models.reranker } }
        : { ...base, rerank: { kind: 'llm', llmModel: models.reranker }, similar: { mode: 'union' } },
  );
  try {
    await lsp.waitForStatus((s) => s.folders.length > 0 && s.folders.every((f) => f.state === 'ready'));
    const from = server.requests.length;
    const modes: CaseMode[] = config === 'line+body' ? ['line', 'body'] : config === 'self' ? ['self-line', 'self-body'] : ['line'];
    const runs = await runCases(lsp, server, root, placed, modes);
    const requests = server.requests.slice(from);
    return { runs, sent: requestText(requests), requests };
  } finally {
    await lsp.close();
  }
}

/** A repository of `cases` placed as other files, and a capturing server that answers completions and the LLM reranker. */
export interface OtherFileFixture {
  placed: OtherFileCase[];
  root: string;
  server: OllamaTestServer;
  close: () => Promise<void>;
}

export async function otherFileFixture(
  cases: readonly CorpusV2Case[],
  parsers: Parsers,
  models: { completion: string; reranker: string },
): Promise<OtherFileFixture> {
  const placed = otherFileCases(cases, parsers);
  const repo = tempDir('coderag-otherfiles-');
  writeTree(repo.path, otherFileTree(placed));
  const server = await startOllamaTestServer(
    (prompt) => Promise.resolve({ text: prompt.includes('<answer>') || /\[A\]/.test(prompt) ? '<answer>[A]</answer>' : 'label' }),
    { models: [models.completion, models.reranker] },
  );
  return {
    placed,
    root: repo.path,
    server,
    close: async () => {
      await server.close();
      repo.cleanup();
    },
  };
}

/** The completions whose case file no request held (`mode:id`): retrieval left it out. */
export function notRetrieved(runs: readonly CaseRun[]): string[] {
  return runs.filter((r) => !r.canary).map((r) => `${r.mode}:${r.p.c.id}`);
}
