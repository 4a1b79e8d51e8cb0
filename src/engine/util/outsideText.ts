// The one sanitiser of text from outside (a model's answer, a server's error body, a dependency's
// warning) before it reaches ghost text, a terminal, a log, a trace or a tooltip: terminal escape
// sequences (ANSI CSI, OSC such as hyperlinks and title changes, DCS), C0 controls other than \n
// and \t, \r, DEL, C1 controls and the Unicode bidi controls (the embeddings, overrides and
// isolates of Trojan Source, and the directional marks LRM, RLM and ALM) are removed. Pure.

const ESCAPE_SEQUENCES = [
  /\x1b\[[0-?]*[ -/]*[@-~]/g, // CSI (colours, cursor moves, erase)
  /\x1b\][\s\S]*?(?:\x07|\x1b\\|$)/g, // OSC (title, hyperlinks, clipboard) up to BEL or ST
  /\x1b[PX^_][\s\S]*?(?:\x1b\\|$)/g, // DCS, SOS, PM, APC up to ST
  /\x9b[0-?]*[ -/]*[@-~]/g, // 8-bit CSI
  /[\x90\x98\x9d\x9e\x9f][\s\S]*?(?:\x9c|\x07|$)/g, // 8-bit DCS/SOS/OSC/PM/APC up to ST
  /\x1b[ -/]*[0-~]/g, // any other escape (charset switches, RIS)
];

/**
 * The bidi controls: the marks ALM (U+061C), LRM and RLM (U+200E-200F), which reorder the text
 * around them as the others do, the embeddings and overrides (U+202A-202E) and the isolates (U+2066-2069).
 */
const BIDI = '\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069';

/** C0 except \t and \n, DEL, C1, and the bidi controls. */
const CONTROL = new RegExp(`[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f${BIDI}]`, 'g');

/** `text` without terminal escape sequences, control characters (but \n and \t) and bidi controls. */
export function stripControlChars(text: string): string {
  let out = text.replace(/\r\n/g, '\n');
  for (const sequence of ESCAPE_SEQUENCES) out = out.replace(sequence, '');
  return out.replace(CONTROL, '');
}

/** Most characters of outside text quoted in one message. */
const MAX_QUOTED_CHARS = 300;

/** Most characters of one error message that quotes outside text (our words around the quote included). */
export const MAX_ERROR_CHARS = 600;

/**
 * Outside text fit to quote in a one-line message: no escapes or control characters, line breaks
 * and tabs as spaces, at most `maxChars` characters (cut with an ellipsis). Bounded work: only the
 * first few times `maxChars` characters are looked at.
 */
export function outsideText(text: string, maxChars = MAX_QUOTED_CHARS): string {
  const head = text.length > 4 * maxChars + 64 ? text.slice(0, 4 * maxChars + 64) : text;
  const flat = stripControlChars(head).replace(/\s+/g, ' ').trim();
  return flat.length > maxChars || head.length < text.length ? `${flat.slice(0, maxChars)}…` : flat;
}

/** `text` with every occurrence of `secret` replaced (an error that quotes a header quotes the key). */
export function withoutSecret(text: string, secret: string | undefined): string {
  return secret ? text.split(secret).join('[redacted]') : text;
}

/** The controls a terminal obeys (C0 but \n and \t, DEL, C1) and the bidi controls. */
const SHOWN_ESCAPED = new RegExp(`[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f${BIDI}]`, 'g');

/**
 * `text` (a repository's code, quoted whole) with every control character written out visibly
 * (`\x1b`, `\x07`, `\x9b`, `\u202e`) instead of removed: a reader of a trace or of `coderag kb`
 * sees what the file holds, and the terminal obeys none of it (no OSC 52 clipboard write, no
 * colour or cursor change). CRLF reads as LF.
 */
export function showControlChars(text: string): string {
  return text.replace(/\r\n/g, '\n').replace(SHOWN_ESCAPED, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/**
 * JSON for a terminal: JSON.stringify escapes C0 controls but writes DEL, C1 controls and bidi
 * controls as they are; here they are `\uXXXX` escapes too, which parse back to the same text.
 */
export function terminalJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(
    new RegExp(`[\\x7f-\\x9f${BIDI}]`, 'g'),
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
