// Local ESLint plugin: `layers/no-import-cycles` fails on any import cycle among the files under
// src/ (docs/ARCHITECTURE.md: "No import cycles"), type-only imports included. The graph is built
// from the imported files on disk (the linted file from its own text), cached per file by mtime.
// `layers/no-folder-cycles` fails on a cycle among the folders under src/engine (kb, symbols, similar,
// generate, pipeline, ...), where a folder imports another when any file in it does, type-only
// imports included: the folders are the engine's layers, and two that import each other are one.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** file -> { mtimeMs, size, specifiers }: the relative specifiers a file on disk imports. */
const parsed = new Map();

/** Relative specifiers of `text`: static, type-only, re-exports, `import()`, `require()`. */
function specifiersOf(text) {
  const { importedFiles } = ts.preProcessFile(text, true, true);
  return importedFiles.filter(
    (f) => f.fileName.startsWith('./') || f.fileName.startsWith('../') || f.fileName === '.' || f.fileName === '..',
  );
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
        deps = [
          ...new Set(
            specifiersOnDisk(f)
              .map((s) => resolveSpecifier(f, s))
              .filter((d) => d !== undefined && inside(root, d)),
          ),
        ];
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

/** The files under `dir` that the rules read (.ts and .tsx, not declaration files), sorted. */
function sourceFilesUnder(dir) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const out = [];
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...sourceFilesUnder(p));
    else if (e.isFile() && /\.tsx?$/.test(e.name) && !/\.d\.ts$/.test(e.name)) out.push(p);
  }
  return out;
}

/**
 * The folder a file belongs to: the first path segment under the root. A sub-folder counts as its
 * parent (pipeline/stages is pipeline, kb/extract is kb): the first level is what the layers name,
 * and imports inside one folder's tree are the file-level rule's. A file directly under the root is
 * a node of its own, named by its file name.
 */
const folderOf = (root, file) => relative(root, file).split(sep)[0];

/** @type {import('eslint').Rule.RuleModule} */
const noFolderCycles = {
  meta: {
    type: 'problem',
    docs: { description: 'Disallow import cycles among the first-level folders under a root folder (type-only imports included).' },
    schema: [{ type: 'object', properties: { root: { type: 'string' } }, additionalProperties: false }],
    messages: {
      cycle:
        'Folder import cycle in {{root}}: {{folders}}, through {{imports}} (a sub-folder counts as its first-level folder; type-only imports included).',
    },
  },
  create(context) {
    const root = resolve(context.cwd, context.options[0]?.root ?? 'src/engine');
    const file = resolve(context.filename);
    if (!inside(root, file)) return {};
    const home = folderOf(root, file);
    const show = (f) => relative(context.cwd, f).split(sep).join('/');
    // Folder -> (folder it imports -> the first import that does: [from file, to file]), from the files on disk.
    const edges = new Map();
    const edgesOf = (folder) => {
      let out = edges.get(folder);
      if (out) return out;
      out = new Map();
      const at = join(root, folder);
      const files = statSync(at, { throwIfNoEntry: false })?.isDirectory() ? sourceFilesUnder(at) : [at];
      for (const from of files) {
        for (const specifier of specifiersOnDisk(from)) {
          const to = resolveSpecifier(from, specifier);
          if (to === undefined || !inside(root, to)) continue;
          const target = folderOf(root, to);
          if (target !== folder && !out.has(target)) out.set(target, [from, to]);
        }
      }
      edges.set(folder, out);
      return out;
    };
    /** The shortest chain of folder edges from `start` back to the linted file's folder (breadth first), or undefined. */
    const pathHome = (start) => {
      const previous = new Map([[start, undefined]]);
      const queue = [start];
      for (let i = 0; i < queue.length; i++) {
        const at = queue[i];
        for (const [next, via] of edgesOf(at)) {
          if (next === home) {
            const chain = [{ to: next, via }];
            for (let p = at; previous.get(p) !== undefined; p = previous.get(p).from) chain.unshift(previous.get(p).edge);
            return chain;
          }
          if (!previous.has(next)) {
            previous.set(next, { from: at, edge: { to: next, via } });
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
          if (target === undefined || !inside(root, target)) continue;
          const folder = folderOf(root, target);
          if (folder === home || seen.has(folder)) continue;
          seen.add(folder);
          const back = pathHome(folder);
          if (back === undefined) continue;
          const chain = [{ to: folder, via: [file, target] }, ...back];
          context.report({
            loc: { start: sourceCode.getLocFromIndex(imported.pos), end: sourceCode.getLocFromIndex(imported.end) },
            messageId: 'cycle',
            data: {
              root: show(root),
              folders: [home, ...chain.map((e) => e.to)].join(' -> '),
              imports: chain.map((e) => `${show(e.via[0])} imports ${show(e.via[1])}`).join(', '),
            },
          });
        }
      },
    };
  },
};

export default {
  meta: { name: 'layers' },
  rules: { 'no-import-cycles': noImportCycles, 'no-folder-cycles': noFolderCycles },
};
