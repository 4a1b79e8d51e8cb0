// How the body mode shows repository code in a small prompt (the body mode's step e): a usage as its
// declaration plus the lines that use the element; a definition of a mapped element (a class as
// its header and members' declarations; a method or field as its first lines); a signature hit
// as its first lines. Each headed by its path, as every snippet; gaps marked with `...`.
import type { KbClass, KbItem } from '../kb/types';
import type { Snippet } from '../retrieve/types';
import { snippetOfItem } from '../retrieve/types';
import { commentPrefix } from '../prompt/templates';

const MAX_USAGE_LINES = 10;
const MAX_HEAD_LINES = 12;
const MAX_MEMBERS = 16;

/** The index of the line where the item's own declaration starts (after the stub's path and class headers). */
function declarationLine(item: KbItem, lines: readonly string[]): number {
  const first = item.signature.split('\n')[0]?.trim() ?? '';
  const at = lines.findIndex((l) => first !== '' && l.trim().startsWith(first.slice(0, 40)));
  return at < 0 ? 0 : at;
}

function closersFrom(lines: readonly string[], start: number): string[] {
  const out: string[] = [];
  for (let i = lines.length - 1; i > start && /^\s*}\s*$/.test(lines[i] ?? ''); i--) out.unshift(lines[i] ?? '');
  return out;
}

/** First lines of an item (the whole when short), with a `...` where it was cut. */
export function headFragment(item: KbItem, maxLines = MAX_HEAD_LINES): Snippet {
  const lines = item.text.trimEnd().split('\n');
  const decl = declarationLine(item, lines);
  if (lines.length <= decl + maxLines + 1) return snippetOfItem(item);
  const pad = (lines[decl + 1] ?? '').match(/^\s*/)?.[0] ?? '';
  const kept = [
    ...lines.slice(0, decl + maxLines),
    `${pad}${commentPrefix(item.lang)} ...`,
    ...closersFrom(lines, decl + maxLines).slice(-1 - (item.className ? 1 : 0)),
  ];
  return { ...snippetOfItem(item), text: kept.join('\n') };
}

/** A usage: the method's declaration and the lines that use the element (`via`), gaps marked. */
export function usageFragment(item: KbItem, via: readonly string[]): Snippet {
  const lines = item.text.trimEnd().split('\n');
  const decl = declarationLine(item, lines);
  if (lines.length <= decl + MAX_USAGE_LINES + 1) return snippetOfItem(item);
  const words = via.map((v) => new RegExp(`(^|[^\\w$])${v.replace(/[$]/g, '\\$')}($|[^\\w$])`));
  const hits = new Set<number>();
  for (let i = decl + 1; i < lines.length && hits.size < MAX_USAGE_LINES; i++) if (words.some((w) => w.test(lines[i] ?? ''))) hits.add(i);
  const c = commentPrefix(item.lang);
  const kept = lines.slice(0, decl + 1);
  let last = decl;
  for (const i of [...hits].sort((a, b) => a - b)) {
    if (i > last + 1) kept.push(`${(lines[i] ?? '').match(/^\s*/)?.[0] ?? ''}${c} ...`);
    kept.push(lines[i] ?? '');
    last = i;
  }
  const closers = closersFrom(lines, last);
  if (lines.length - closers.length > last + 1) kept.push(`${(lines[last] ?? '').match(/^\s*/)?.[0] ?? ''}${c} ...`);
  kept.push(...closers);
  return { ...snippetOfItem(item), text: kept.join('\n') };
}

/** A class as its header and its members' declarations (Rambo: a matched class brings its members). */
export function classFragment(c: KbClass, members: readonly KbItem[]): Snippet {
  const cm = commentPrefix(c.lang);
  const open = c.lang === 'java' ? ' {' : '';
  const lines = [`${cm} ${c.path}`, `${withoutTrailing(c.header, '{:')}${c.lang === 'java' ? open : ':'}`];
  for (const m of members.slice(0, MAX_MEMBERS)) {
    const sig = m.signature
      .split('\n')
      .map((l) => l.trim())
      .join(' ');
    const declaration = c.lang === 'java' && m.kind === 'classFunction' ? `${withoutTrailing(sig, '{')};` : sig;
    const stub = c.lang === 'python' && m.kind !== 'classVariable' ? ' ...' : '';
    lines.push(`    ${declaration}${stub}`);
  }
  if (members.length > MAX_MEMBERS) lines.push(`    ${cm} ... ${members.length - MAX_MEMBERS} more`);
  if (c.lang === 'java') lines.push('}');
  return {
    id: `${c.path}#class:${c.qualifiedName}`,
    kind: 'class',
    path: c.path,
    name: c.name,
    qualifiedName: c.qualifiedName,
    range: c.range,
    text: lines.join('\n'),
  };
}

/** `text` without trailing whitespace, then one trailing character of `chars` and the whitespace before it (a linear /\s*[chars]?\s*$/). */
function withoutTrailing(text: string, chars: string): string {
  const t = text.trimEnd();
  return t !== '' && chars.includes(t.at(-1)!) ? t.slice(0, -1).trimEnd() : t;
}
