// Writes src/protocol/trace.generated.ts: the completion trace's types as the protocol carries them,
// generated from CompletionTrace in src/engine/pipeline/trace.ts so that there is one declaration of
// each. src/protocol may not import the engine (eslint.config.mjs), so the file holds copies: the
// interface and every engine type it reaches, each with its doc comment, in a file with no imports.
// Usage: npm run gen:trace (node --import tsx scripts/genTraceTypes.ts); test/protocol/traceTypes.test.ts
// fails while the committed file differs from what this prints.
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import * as prettier from 'prettier';
import ts from 'typescript';

export const TRACE_SOURCE = 'src/engine/pipeline/trace.ts';
export const TRACE_OUTPUT = 'src/protocol/trace.generated.ts';
const ROOT_TYPE = 'CompletionTrace';
const ENGINE = 'src/engine';

export interface GenerateOptions {
  /** The repository root (default: this script's). */
  root?: string;
  /** Repo-relative path -> text read instead of the file on disk (a test's edit of the engine's types). */
  overrides?: Record<string, string>;
}

type Declaration = ts.InterfaceDeclaration | ts.TypeAliasDeclaration;

/** The text of src/protocol/trace.generated.ts as the engine's types are now (Prettier-formatted with the project's settings). */
export async function generateTraceTypes(options: GenerateOptions = {}): Promise<string> {
  const root = resolve(options.root ?? join(__dirname, '..'));
  const program = programOf(root, options.overrides ?? {});
  const checker = program.getTypeChecker();
  const where = (node: ts.Node): string => {
    const file = node.getSourceFile();
    const { line } = file.getLineAndCharacterOfPosition(node.getStart());
    return `${repoPath(root, file.fileName)}:${line + 1}`;
  };
  const fail = (node: ts.Node, why: string): Error =>
    new Error(`${where(node)}: ${why} (scripts/genTraceTypes.ts copies named interfaces and type aliases only)`);

  const source = program.getSourceFile(join(root, TRACE_SOURCE));
  const start = source?.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === ROOT_TYPE);
  if (!start) throw new Error(`${TRACE_SOURCE} declares no interface ${ROOT_TYPE}`);

  /** The engine declaration a name in a copied declaration refers to; undefined for TypeScript's own types and type parameters. */
  const declarationOf = (name: ts.Node): Declaration | undefined => {
    if (!ts.isIdentifier(name)) throw fail(name, `\`${name.getText()}\` is a qualified name`);
    let symbol = checker.getSymbolAtLocation(name);
    if (!symbol) throw fail(name, `\`${name.text}\` does not resolve`);
    if (symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
    if (symbol.flags & ts.SymbolFlags.TypeParameter) return undefined;
    const declarations = symbol.declarations ?? [];
    const file = declarations[0]?.getSourceFile();
    if (file && program.isSourceFileDefaultLibrary(file)) return undefined;
    if (!file || !repoPath(root, file.fileName).startsWith(`${ENGINE}/`)) {
      throw fail(name, `\`${name.text}\` is declared outside ${ENGINE} and TypeScript's own library`);
    }
    const [declaration] = declarations;
    if (declarations.length !== 1 || !declaration || !(ts.isInterfaceDeclaration(declaration) || ts.isTypeAliasDeclaration(declaration))) {
      throw fail(name, `\`${name.text}\` is not one interface or type alias`);
    }
    if (symbol.name !== name.text) throw fail(name, `\`${name.text}\` is \`${symbol.name}\` imported under another name`);
    return declaration;
  };

  // Breadth first from CompletionTrace: the order of the output.
  const order: Declaration[] = [start];
  const byName = new Map<string, Declaration>([[ROOT_TYPE, start]]);
  for (let i = 0; i < order.length; i++) {
    const declaration = order[i]!;
    const expand = expandable(declaration);
    const visit = (node: ts.Node): void => {
      let name: ts.Node | undefined;
      if (ts.isTypeReferenceNode(node)) name = node.typeName;
      else if (ts.isExpressionWithTypeArguments(node)) name = node.expression;
      else if (ts.isImportTypeNode(node)) throw fail(node, 'an import() type');
      else if (ts.isTypeQueryNode(node) && !expand)
        throw fail(node, `\`typeof\` outside a list-of-literals alias (\`(typeof X)[number]\`)`);
      if (name) {
        const found = declarationOf(name);
        if (found) {
          const known = byName.get(found.name.text);
          if (known && known !== found) throw fail(name, `two engine types are named \`${found.name.text}\` (${where(known)})`);
          if (!known) {
            byName.set(found.name.text, found);
            order.push(found);
          }
        }
      }
      if (!ts.isTypeQueryNode(node)) ts.forEachChild(node, visit);
    };
    ts.forEachChild(declaration, visit);
  }

  const header = [
    `// Generated by \`npm run gen:trace\` (node --import tsx scripts/genTraceTypes.ts) from ${ROOT_TYPE} in`,
    `// ${TRACE_SOURCE} and the engine types it reaches: do not edit. Change the engine's types and run`,
    '// the command again; test/protocol/traceTypes.test.ts fails while this file differs from what it prints.',
  ].join('\n');
  const body = order.map((d) => declarationText(root, checker, d, expandable(d), fail)).join('\n\n');
  const text = `${header}\n\n${body}\n`;
  const output = join(root, TRACE_OUTPUT);
  const config = (await prettier.resolveConfig(output)) ?? {};
  return prettier.format(text, { ...config, filepath: output });
}

function programOf(root: string, overrides: Record<string, string>): ts.Program {
  const configPath = join(root, 'tsconfig.json');
  const read = ts.readConfigFile(configPath, ts.sys.readFile);
  if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, '\n'));
  const { options } = ts.parseJsonConfigFileContent(read.config, ts.sys, root, undefined, configPath);
  const replaced = new Map(Object.entries(overrides).map(([p, text]) => [resolve(root, p), text]));
  const host = ts.createCompilerHost(options, true);
  const { getSourceFile, readFile } = host;
  host.readFile = (f) => replaced.get(resolve(f)) ?? readFile.call(host, f);
  host.getSourceFile = (f, language, ...rest) => {
    const text = replaced.get(resolve(f));
    return text === undefined ? getSourceFile.call(host, f, language, ...rest) : ts.createSourceFile(f, text, language, true);
  };
  return ts.createProgram([join(root, TRACE_SOURCE)], options, host);
}

const repoPath = (root: string, file: string): string => relative(root, file).split(sep).join('/');

/** The `X` of an alias `type T = (typeof X)[number]` (a list's literals), which the copy spells out; undefined for any other declaration. */
function expandable(d: Declaration): ts.TypeQueryNode | undefined {
  if (!ts.isTypeAliasDeclaration(d) || !ts.isIndexedAccessTypeNode(d.type) || d.type.indexType.kind !== ts.SyntaxKind.NumberKeyword)
    return undefined;
  let object = d.type.objectType;
  while (ts.isParenthesizedTypeNode(object)) object = object.type;
  return ts.isTypeQueryNode(object) ? object : undefined;
}

/** One declaration as the generated file has it: where it comes from, its doc comment, `export`, its text. */
function declarationText(
  root: string,
  checker: ts.TypeChecker,
  d: Declaration,
  query: ts.TypeQueryNode | undefined,
  fail: (node: ts.Node, why: string) => Error,
): string {
  const file = d.getSourceFile();
  const full = file.getFullText();
  const docs = (ts.getLeadingCommentRanges(full, d.getFullStart()) ?? []).filter(
    (r) => r.kind === ts.SyntaxKind.MultiLineCommentTrivia && full.startsWith('/**', r.pos),
  );
  const doc = docs.length > 0 ? `${full.slice(docs[docs.length - 1]!.pos, docs[docs.length - 1]!.end)}\n` : '';
  const from = `// From ${repoPath(root, file.fileName)}.`;
  if (query && ts.isTypeAliasDeclaration(d)) {
    const list = checker.getTypeAtLocation(query);
    const elements = checker.isTupleType(list) ? checker.getTypeArguments(list as ts.TypeReference) : [];
    if (elements.length === 0 || !elements.every((t) => t.isLiteral()))
      throw fail(query, `\`${query.getText()}\` is not a list of literals`);
    const literals = elements.map((t) => checker.typeToString(t)).join(' | ');
    return `${from} Spelled out from \`${d.type.getText()}\`.\n${doc}export type ${d.name.text} = ${literals};`;
  }
  const exported = ts.getModifiers(d)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) ?? false;
  return `${from}\n${doc}${exported ? '' : 'export '}${full.slice(d.getStart(file), d.getEnd())}`;
}

if (require.main === module) {
  const root = join(__dirname, '..');
  generateTraceTypes({ root })
    .then((text) => {
      const output = join(root, TRACE_OUTPUT);
      let before: string | undefined;
      try {
        before = readFileSync(output, 'utf8');
      } catch {
        before = undefined;
      }
      writeFileSync(output, text);
      console.log(`${TRACE_OUTPUT}: ${before === text ? 'unchanged' : 'written'} (${text.length} characters)`);
    })
    .catch((e: unknown) => {
      console.error(e instanceof Error ? e.message : e);
      process.exitCode = 1;
    });
}
