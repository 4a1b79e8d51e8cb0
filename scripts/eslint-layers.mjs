// Local ESLint plugin: `layers/no-import-cycles` fails on any import cycle among the files under
// src/ (docs/ARCHITECTURE.md: "No import cycles"), type-only imports included. The graph is built
// from the imported files on disk (the linted file from its own text), cached per file by mtime.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** file -> { mtimeMs, size, specifiers }: the relative specifiers a file on disk imports. */
const parsed = new Map();

/** Relative specifiers of `text`: static, type-only, re-exports, `import()`, `require()`. */
function specifiersOf(text) {
  const { importedFiles } = ts.preProcessFile(text, true, true);
  return importedFiles.filter((f) => f.fileName.startsWith('./') || f.fileName.startsWith('../') || f.fileName === '.' || f.fileName === '..');
}

function specifiersOnDisk(file) {
  let stat;
  try {
    stat = statSync(file);
  } catch {
    return [];
  }
  const hit = parsed.get(file);
  if (hit && hit.mtimeMs === stat.mtimeMs && hit.size === stat.size) return hit.specifiers;
  const specifiers = specifiersOf(readFileSync(file, 'utf8')).map((f) => f.fileName);
  parsed.set(file, { mtimeMs: stat.mtimeMs, size: stat.size, specifiers });
  return specifiers;
}

/** `./x` -> x.ts, x.tsx, x/index.ts (and `./x.js` -> x.ts); undefined when it is no source file. */
function resolveSpecifier(fromFile, specifier) {
  const base = resolve(dirname(fromFile), specifier);
  const stem = base.replace(/\.(m|c)?js$/, '');
  const candidates = /\.(m|c)?tsx?$/.test(base) ? [base] : [`${stem}.ts`, `${stem}.tsx`, join(base, 'index.ts'), join(base, 'index.tsx')];
  return candidates.find((c) => existsSync(c) && statSync(c).isFile());
}

const inside = (root, file) => file.startsWith(root + sep);

/** @type {import('eslint').Rule.RuleModule} */
const noImportCycles = {
  meta: {
    type: 'problem',
    docs: { description: 'Disallow import cycles among the files under a root folder (type-only imports included).' },
    schema: [{ type: 'object', properties: { root: { type: 'string' } }, additionalProperties: false }],
    messages: { cycle: 'Import cycle: {{path}} (docs/ARCHITECTURE.md: no import cycles, type-only imports included).' },
  },
  create(context) {
    const root = resolve(context.cwd, context.options[0]?.root ?? 'src');
    const file = resolve(context.filename);
    if (!inside(root, file)) return {};
    // Resolved edges of the files on disk, for this file's lint only (the disk cache above is per mtime).
    const edges = new Map();
    const depsOf = (f) => {
      let deps = edges.get(f);
      if (!deps) {
        deps = [...new Set(specifiersOnDisk(f).map((s) => resolveSpecifier(f, s)).filter((d) => d !== undefined && inside(root, d)))];
        edges.set(f, deps);
      }
      return deps;
    };
    /** Shortest import path from `start` back to `file` (breadth first), or undefined. */
    const pathBack = (start) => {
      const previous = new Map([[start, undefined]]);
      const queue = [start];
      for (let i = 0; i < queue.length; i++) {
        const at = queue[i];
        for (const next of depsOf(at)) {
          if (next === file) {
            const path = [];
            for (let p = at; p !== undefined; p = previous.get(p)) path.unshift(p);
            return path;
          }
          if (!previous.has(next)) {
            previous.set(next, at);
            queue.push(next);
          }
        }
      }
      return undefined;
    };
    return {
      'Program:exit'() {
        const sourceCode = context.sourceCode;
        const seen = new Set();
        for (const imported of specifiersOf(sourceCode.text)) {
          const target = resolveSpecifier(file, imported.fileName);
          if (target === undefined || !inside(root, target) || seen.has(target)) continue;
          seen.add(target);
          const back = target === file ? [] : pathBack(target);
          if (back === undefined) continue;
          const path = [file, ...back, file].map((f) => relative(context.cwd, f).split(sep).join('/')).join(' -> ');
          context.report({
            loc: { start: sourceCode.getLocFromIndex(imported.pos), end: sourceCode.getLocFromIndex(imported.end) },
            messageId: 'cycle',
            data: { path },
          });
        }
      },
    };
  },
};

export default {
  meta: { name: 'layers' },
  rules: { 'no-import-cycles': noImportCycles },
};
