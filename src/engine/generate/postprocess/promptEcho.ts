// What of a model's answer is its own suggestion: the answer ends at the first special token a
// model family's tokenizer knows (the model is done there: what follows is another part of its
// training format, not code at the cursor), and an answer that starts the prompt over (its
// repository head, a file's path heading) is no suggestion. Pure.
import { SPECIAL_TOKENS, type ModelFamily } from '../../prompt/templates';
import type { JunkCut } from './junk';

/** A word in angle brackets (Code Llama's `<PRE>`, `</s>`) is also text that code writes (HTML in a string). */
const MARKUP_WORD = /^<\/?[A-Za-z]+>$/;

/** Every family's tokens that no code spells (all but the markup words). */
const UNMISTAKABLE = [...new Set(Object.values(SPECIAL_TOKENS).flat())].filter((t) => !MARKUP_WORD.test(t));

const byFamily = new Map<ModelFamily, readonly string[]>();

/**
 * The special tokens that end a suggestion of `family`: its own (templates.ts), and every other
 * family's that no code spells, since a model whose name did not tell its family (`plain`) still
 * writes its own.
 */
export function specialTokensOf(family: ModelFamily): readonly string[] {
  let tokens = byFamily.get(family);
  if (!tokens) {
    tokens = [...new Set([...(family === 'plain' ? [] : SPECIAL_TOKENS[family]), ...UNMISTAKABLE])];
    byFamily.set(family, tokens);
  }
  return tokens;
}

/** Where the first of `tokens` occurs in `text`, and which one. */
function firstSpecialToken(text: string, tokens: readonly string[]): { at: number; token: string } | undefined {
  let first: { at: number; token: string } | undefined;
  for (const token of tokens) {
    const at = text.indexOf(token);
    if (at >= 0 && (first === undefined || at < first.at)) first = { at, token };
  }
  return first;
}

function withoutTokens(text: string, tokens: readonly string[]): string {
  let out = text;
  for (const token of tokens) if (out.includes(token)) out = out.split(token).join('\n');
  return out;
}

/**
 * A heading the prompt's format writes above a file: a comment naming a Python or Java path (`# app/cart.py`,
 * `# app/models.py (imported here)`, `// Compare this snippet from src/Cart.java:`), or the bare path a file
 * separator carries (`<|file_sep|>app/cart.py`).
 */
const PATH_HEADING = /^(?:(?:#|\/\/) (?:.* )?)?[\w.-]+(?:\/[\w.-]+)*\.(?:py|java)(?::| \([^()]*\))?$/u;

function nonBlankLines(text: string, most: number): string[] {
  const out: string[] = [];
  for (const line of text.split('\n', 4 * most + 16)) {
    const t = line.trim();
    if (t === '') continue;
    out.push(t);
    if (out.length === most) break;
  }
  return out;
}

/** The lines of the prompt its format wrote about the repository: its opening lines and its path headings. */
function formatLines(prompt: string, tokens: readonly string[]): { opening: string[]; headings: Set<string> } {
  const plain = withoutTokens(prompt, tokens);
  const headings = new Set<string>();
  for (const line of plain.split('\n')) {
    const t = line.trim();
    if (PATH_HEADING.test(t)) headings.add(t);
  }
  return { opening: nonBlankLines(plain, 2), headings };
}

/**
 * Where `text` goes back to the prompt's own head (undefined: it does not): 0 when it starts with the
 * prompt's first two lines (an echo of the prompt, special tokens aside) or its first line is one
 * of the prompt's path headings; else the start of the first later line that is one (the model
 * moved on to another file).
 */
function promptHeadAt(text: string, prompt: string, tokens: readonly string[]): number | undefined {
  const { opening, headings } = formatLines(prompt, tokens);
  if (opening.length === 2 && nonBlankLines(text, 2).join('\n') === opening.join('\n')) return 0;
  let start = 0;
  let wrote = false;
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (headings.has(t)) return wrote ? start : 0;
    if (t !== '') wrote = true;
    start += line.length + 1;
  }
  return undefined;
}

/**
 * The model's answer as a suggestion: cut at its first special token, nothing where it started the
 * prompt over, cut before a later path heading; with what was cut, for the trace.
 */
export function ownAnswer(text: string, prompt: string, family: ModelFamily): { text: string; cut?: JunkCut } {
  const tokens = specialTokensOf(family);
  const special = firstSpecialToken(text, tokens);
  const kept = special ? text.slice(0, special.at) : text;
  const head = promptHeadAt(kept, prompt, tokens);
  if (head !== undefined) {
    const own = kept.slice(0, head).trimEnd();
    const note =
      own === ''
        ? "it re-wrote the prompt's head (the repository's name or a file's path heading): no suggestion"
        : "it went on with a file's path heading from the prompt: cut before it";
    return { text: own, cut: { rule: 'promptHead', removed: text.slice(own.length).replace(/^\s+/, ''), note } };
  }
  if (!special) return { text };
  const note = `it wrote the special token ${special.token} (the model is done there): cut before it`;
  return { text: kept, cut: { rule: 'specialToken', removed: text.slice(special.at), note } };
}
