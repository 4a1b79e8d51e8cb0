// The source transform behind instrument.ts, apart so it can be tested without patching the loader:
// a probe at the start of every function body (on the same line, so lines do not move) and, in
// the probed code, which calls hand their value on as the function's result.
import ts from 'typescript';

/** The global the probes call. */
export const PROBE = '__coderagPathProbe';

export interface CallSpan {
  start: number;
  end: number;
  tail: boolean;
}

export interface FileInfo {
  rel: string;
  lineStarts: readonly number[];
  /** Calls, `new`s and awaits in the probed code, by start. */
  calls: CallSpan[];
}

const bodyOf = (node: ts.Node): ts.ConciseBody | undefined =>
  ts.isFunctionDeclaration(node) ||
  ts.isFunctionExpression(node) ||
  ts.isArrowFunction(node) ||
  ts.isMethodDeclaration(node) ||
  ts.isConstructorDeclaration(node) ||
  ts.isGetAccessorDeclaration(node) ||
  ts.isSetAccessorDeclaration(node)
    ? node.body
    : undefined;

/**
 * esbuild's module scaffolding, not the project's code: its `__export`, `__copyProps`, `__name`
 * helpers and the getters through which an importer reads an exported binding (a probe there would
 * make every call into another module look like a visit to it and a return before the call).
 */
function isModuleScaffolding(node: ts.Node): boolean {
  if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name)) return node.name.text.startsWith('__');
  return ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === '__export';
}

/** The code with a probe at the start of every function body (no line added). */
export function probed(code: string, fileName: string): string {
  const sf = ts.createSourceFile(fileName, code, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const inserts: Array<{ at: number; text: string }> = [];
  const visit = (node: ts.Node): void => {
    if (isModuleScaffolding(node)) return;
    const body = bodyOf(node);
    if (body && ts.isBlock(body)) inserts.push({ at: body.getStart(sf) + 1, text: `${PROBE}();` });
    else if (body) inserts.push({ at: body.getStart(sf), text: `(${PROBE}(), ` }, { at: body.end, text: ')' });
    ts.forEachChild(node, visit);
  };
  visit(sf);
  inserts.sort((a, b) => b.at - a.at);
  let out = code;
  for (const { at, text } of inserts) out = out.slice(0, at) + text + out.slice(at);
  return out;
}

/** A call whose value the function returns as it is: through parentheses, awaits, `a ? b : c`, `a || b`, `a, b`. */
export function isTailCall(node: ts.Node): boolean {
  const passing = new Set([
    ts.SyntaxKind.CommaToken,
    ts.SyntaxKind.BarBarToken,
    ts.SyntaxKind.AmpersandAmpersandToken,
    ts.SyntaxKind.QuestionQuestionToken,
  ]);
  for (let n = node; ;) {
    const p = n.parent;
    if (!p) return false;
    if (ts.isReturnStatement(p)) return true;
    if (ts.isArrowFunction(p)) return p.body === n;
    const passes =
      ts.isParenthesizedExpression(p) ||
      ts.isAwaitExpression(p) ||
      (ts.isConditionalExpression(p) && p.condition !== n) ||
      (ts.isBinaryExpression(p) && p.right === n && passing.has(p.operatorToken.kind));
    if (!passes) return false;
    n = p;
  }
}

export function callSpans(code: string, fileName: string): { lineStarts: readonly number[]; calls: CallSpan[] } {
  const sf = ts.createSourceFile(fileName, code, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const calls: CallSpan[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) || ts.isNewExpression(node) || ts.isAwaitExpression(node) || ts.isTaggedTemplateExpression(node))
      calls.push({ start: node.getStart(sf), end: node.end, tail: isTailCall(node) });
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return { lineStarts: sf.getLineStarts(), calls };
}

/** Whether the innermost call, `new` or await at (line, column) (1-based, V8's) returns its value as it is. */
export function tailAt(info: FileInfo, line: number, column: number): boolean {
  const offset = (info.lineStarts[line - 1] ?? 0) + column - 1;
  let best: CallSpan | undefined;
  for (const c of info.calls) {
    if (c.start > offset) break;
    if (offset < c.end && (!best || c.start >= best.start)) best = c;
  }
  return best?.tail ?? false;
}
