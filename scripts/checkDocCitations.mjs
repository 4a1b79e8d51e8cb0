// Every citation of a benchmarks page by section, `docs/BENCHMARKS.md "Section"` or
// `docs/BENCHMARKS-history.md "Section"` (also without `docs/` or `.md`, and several names after one
// file: `"A", "B"`), in the repository's tracked text files must name a heading (# to ####) of that
// file that starts with the quoted name; a name may wrap over comment lines. Prints the citations
// that do not resolve and exits 1, else a one-line count.
// Usage: node scripts/checkDocCitations.mjs [--root DIR]
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const args = process.argv.slice(2);
const rootAt = args.indexOf('--root');
const root = resolve(rootAt >= 0 ? args[rootAt + 1] : new URL('..', import.meta.url).pathname);

/** The pages that can be cited, by the stem a citation names. */
const PAGES = { BENCHMARKS: 'docs/BENCHMARKS.md', 'BENCHMARKS-history': 'docs/BENCHMARKS-history.md' };

// The file, then up to a few characters of space, comma, bracket or comment markers (a line break
// between file and name included), then one or more quoted names separated by commas.
const CITATION = /(?:docs\/)?(BENCHMARKS(?:-history)?)(?:\.md)?((?:[ \t,(]|\r?\n[ \t]*(?:\/\/|\*|#)?)*)"([^"\n]+(?:\r?\n[^"\n]*){0,2}?)"/g;
const MORE_NAMES = /^[ \t]*,[ \t]*"([^"\n]+)"/;
// A name that wraps continues on the next line after its comment marker.
const WRAP = /[ \t]*\r?\n[ \t]*(?:\/\/|\*|#)?[ \t]*/g;

function trackedFiles() {
  const out = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return out.split('\0').filter((f) => f !== '');
}

/** The text of a tracked file, or undefined for a binary, missing or very large one. */
function textOf(file) {
  const path = join(root, file);
  if (!existsSync(path)) return undefined;
  const buf = readFileSync(path);
  if (buf.length > 8 * 1024 * 1024 || buf.subarray(0, 8000).includes(0)) return undefined;
  return buf.toString('utf8');
}

/** Headings of levels 1-4 outside fenced code blocks, as their text. */
function headingsOf(text) {
  const headings = [];
  let fence;
  for (const line of text.split(/\r?\n/)) {
    const open = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (open) {
      if (fence === undefined) fence = open[1][0];
      else if (open[1][0] === fence) fence = undefined;
      continue;
    }
    if (fence !== undefined) continue;
    const h = /^ {0,3}#{1,4}[ \t]+(.*?)[ \t]*#*[ \t]*$/.exec(line);
    if (h) headings.push(h[1]);
  }
  return headings;
}

const lineOf = (text, index) => text.slice(0, index).split('\n').length;

const headings = new Map();
function headingsFor(page) {
  if (!headings.has(page)) {
    const text = textOf(page);
    headings.set(page, text === undefined ? undefined : headingsOf(text));
  }
  return headings.get(page);
}

// The check and its test write citations as examples and fixtures, not to cite.
const NOT_CITING = new Set(['scripts/checkDocCitations.mjs', 'test/docs/citations.test.ts']);

const citations = [];
for (const file of trackedFiles()) {
  if (NOT_CITING.has(file)) continue;
  const text = textOf(file);
  if (text === undefined || !text.includes('BENCHMARKS')) continue;
  for (const m of text.matchAll(CITATION)) {
    // A quote after a line break without a comment marker is prose that merely follows the name.
    if (/\n/.test(m[2]) && !/(?:\/\/|\*|#)/.test(m[2])) continue;
    const page = PAGES[m[1]];
    const names = [m[3].replace(WRAP, ' ')];
    let rest = text.slice(m.index + m[0].length);
    for (let more = MORE_NAMES.exec(rest); more; more = MORE_NAMES.exec(rest)) {
      names.push(more[1]);
      rest = rest.slice(more[0].length);
    }
    for (const name of names) citations.push({ file, line: lineOf(text, m.index), page, name: name.trim() });
  }
}

const broken = citations.filter(({ page, name }) => {
  const list = headingsFor(page);
  return list === undefined || !list.some((h) => h.startsWith(name));
});
if (broken.length > 0) {
  process.stderr.write(`${broken.length} citation(s) name no section of the file they cite:\n`);
  for (const c of broken) process.stderr.write(`  ${c.file}:${c.line}: ${c.page} "${c.name}"\n`);
  process.exit(1);
}
const files = new Set(citations.map((c) => c.file)).size;
const sections = new Set(citations.map((c) => `${c.page}\0${c.name}`)).size;
process.stdout.write(`${citations.length} citations of ${sections} sections in ${files} files resolve\n`);
