// Model text reaches an editor's ghost text and a terminal: terminal escape sequences (ANSI CSI,
// OSC such as hyperlinks and title changes, DCS), C0 controls other than \n and \t, \r, DEL, C1
// controls and the Unicode bidi overrides and isolates (Trojan Source) are removed. Pure.

const ESCAPE_SEQUENCES = [
  /\x1b\[[0-?]*[ -/]*[@-~]/g, // CSI (colours, cursor moves, erase)
  /\x1b\][\s\S]*?(?:\x07|\x1b\\|$)/g, // OSC (title, hyperlinks, clipboard) up to BEL or ST
  /\x1b[PX^_][\s\S]*?(?:\x1b\\|$)/g, // DCS, SOS, PM, APC up to ST
  /\x9b[0-?]*[ -/]*[@-~]/g, // 8-bit CSI
  /[\x90\x98\x9d\x9e\x9f][\s\S]*?(?:\x9c|\x07|$)/g, // 8-bit DCS/SOS/OSC/PM/APC up to ST
  /\x1b[ -/]*[0-~]/g, // any other escape (charset switches, RIS)
];

/** C0 except \t and \n, DEL, C1, and bidi embeddings/overrides (U+202A-202E) and isolates (U+2066-2069). */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

/** `text` without terminal escape sequences, control characters (but \n and \t) and bidi controls. */
export function stripControlChars(text: string): string {
  let out = text.replace(/\r\n/g, '\n');
  for (const sequence of ESCAPE_SEQUENCES) out = out.replace(sequence, '');
  return out.replace(CONTROL, '');
}
