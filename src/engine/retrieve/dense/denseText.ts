// The text the dense path embeds for a knowledge-base item: a Python item's stub with its
// docstrings cut to their first sentence; a Java item's stub as it is. The encoder reads at most
// 256 tokens of an item and its cost grows with every token. Measured with the 2-block encoder on
// the line and dot cases of the training corpus's held-out repositories (models/coderag-encoder
// README): cutting Python docstrings brought its dense recall@10 back to the 4-block encoder's
// (0.168 -> 0.203, 113 cases) while cutting Javadoc the same way lost Java recall (0.186 -> 0.173,
// 96 cases), so Javadoc stays whole. The sparse path and the prompt keep the whole stub.

/** Longest first sentence kept, in characters (a run-on summary is cut at a word). */
const MAX_SENTENCE = 200;

/** The first sentence of a docstring's prose ('' for none). */
export function firstSentence(prose: string): string {
  const flat = prose.replace(/\s+/g, ' ').trim();
  const m = /^.*?[.!?](?=\s|$)/.exec(flat);
  let s = m ? m[0] : flat;
  if (s.length > MAX_SENTENCE) {
    const space = s.lastIndexOf(' ', MAX_SENTENCE);
    s = `${s.slice(0, space > 0 ? space : MAX_SENTENCE)} ...`;
  }
  return s;
}

/** A docstring that opens right after a `def`/`class` line (the colon ends that line). */
const DOCSTRING = /(:[ \t]*\n)([ \t]+)([rRuUbB]{0,2})("""|''')([\s\S]*?)\4[ \t]*\n/g;

export function denseText(text: string, lang: 'python' | 'java'): string {
  if (lang !== 'python' || (!text.includes('"""') && !text.includes("'''"))) return text;
  return text.replace(DOCSTRING, (_m, colon: string, indent: string, prefix: string, quote: string, body: string) => {
    const s = firstSentence(body);
    return s ? `${colon}${indent}${prefix}${quote}${s}${quote}\n` : colon;
  });
}
