// The embedded model's copy prior: a small model is poor at copying from its own prompt, yet the
// prompt is where the repository's code is (the retrieved definitions and usages, the file above
// the cursor). Before each greedy pick, the longest tail of the text so far (prompt + generated)
// that also occurs earlier in the prompt, or in the file above the cursor beyond the prompt's
// window, is found; the text that followed it there votes for the
// vocabulary's longest token it starts with, and the votes are mixed with the model's own
// distribution by a weight that grows with the length of the match. Matching characters, not
// tokens, matters: at the cursor the prompt ends in a token the text further up never has (the
// newline and indentation as one token, a trailing space), so token sequences would not match
// where the line starts. A match counts its non-space characters only: runs of indentation say
// nothing.

export interface CopyPriorOptions {
  /** Fewest non-space characters a tail match needs to vote. */
  minChars: number;
  /** Longest tail looked for, in characters. */
  maxChars: number;
  /** Weight of the votes at the shortest match... */
  minWeight: number;
  /** ...growing by this much per non-space character of longer match... */
  weightPerChar: number;
  /** ...up to this much. */
  maxWeight: number;
}

export const DEFAULT_COPY_PRIOR: CopyPriorOptions = { minChars: 6, maxChars: 80, minWeight: 0.3, weightPerChar: 0.02, maxWeight: 0.8 };

interface CopyVote {
  /** Token id -> share of the votes (sums to 1). */
  next: Map<number, number>;
  /** Non-space characters of the longest tail match. */
  match: number;
  /** The votes' weight in the mix. */
  weight: number;
}

export interface CopyPriorStats {
  /** Decoding steps it saw. */
  steps: number;
  /** Steps where a tail match voted. */
  voted: number;
  /** Steps where the votes changed the model's top choice (before the masks that follow). */
  changed: number;
  /** Non-space characters of the longest tail match. */
  longestMatch: number;
}

/** The vocabulary by token text, for the longest token a text starts with. */
export class TokenLookup {
  private readonly byText = new Map<string, number>();
  private readonly longest: number;

  constructor(tokenTexts: readonly string[]) {
    let longest = 0;
    tokenTexts.forEach((t, id) => {
      // Texts that do not decode alone (a piece of a multi-byte character) never match code.
      if (t === '' || t.includes('\uFFFD') || this.byText.has(t)) return;
      this.byText.set(t, id);
      longest = Math.max(longest, t.length);
    });
    this.longest = longest;
  }

  /** The id of the longest token `text` starts with, if any. */
  longestPrefix(text: string): number | undefined {
    for (let n = Math.min(this.longest, text.length); n > 0; n--) {
      const id = this.byText.get(text.slice(0, n));
      if (id !== undefined) return id;
    }
    return undefined;
  }
}

/** Between the file's text and the prompt: no match crosses it. */
const SEPARATOR = '\u0000';

export class CopyPrior {
  /** Character -> positions in the memory where it occurs and something follows it. */
  private readonly at = new Map<string, number[]>();

  /** `before`, the separator, then the prompt: the tail is read at its end. */
  private readonly memory: string;

  /** `before`: text to copy from besides the prompt (the file above the cursor, beyond the prompt's window). */
  constructor(
    prompt: string,
    private readonly tokens: TokenLookup,
    private readonly options: CopyPriorOptions = DEFAULT_COPY_PRIOR,
    before?: string,
  ) {
    const memory = (this.memory = before ? `${before}${SEPARATOR}${prompt}` : prompt);
    for (let i = 0; i + 1 < memory.length; i++) {
      const c = memory[i]!;
      if (c === SEPARATOR || memory[i + 1] === SEPARATOR) continue;
      let list = this.at.get(c);
      if (!list) this.at.set(c, (list = []));
      list.push(i);
    }
  }

  /** The votes of the memory's continuations of the longest tail of prompt + generated; undefined below minChars. */
  vote(generated: string): CopyVote | undefined {
    const p = this.memory;
    const total = p.length + generated.length;
    if (total === 0) return undefined;
    const char = (k: number): string => (k < p.length ? p[k]! : generated[k - p.length]!);
    const candidates = this.at.get(char(total - 1));
    if (!candidates) return undefined;
    const { minChars, maxChars } = this.options;
    let best = 0;
    const lengths = new Array<number>(candidates.length);
    // Each candidate i is an earlier occurrence of the tail's last character (the index holds no
    // position without a successor, so never the tail's own end).
    candidates.forEach((i, k) => {
      let n = 0;
      let solid = 0;
      while (n < maxChars && i - n >= 0 && p[i - n] === char(total - 1 - n)) {
        if (!/\s/.test(p[i - n]!)) solid++;
        n++;
      }
      lengths[k] = solid;
      if (solid > best) best = solid;
    });
    if (best < minChars) return undefined;
    const next = new Map<number, number>();
    let votes = 0;
    candidates.forEach((i, k) => {
      if (lengths[k] !== best) return;
      const id = this.tokens.longestPrefix(p.slice(i + 1, i + 65));
      if (id === undefined) return;
      next.set(id, (next.get(id) ?? 0) + 1);
      votes++;
    });
    if (votes === 0) return undefined;
    for (const [id, v] of next) next.set(id, v / votes);
    const { minWeight, weightPerChar, maxWeight } = this.options;
    return { next, match: best, weight: Math.min(maxWeight, minWeight + weightPerChar * (best - minChars)) };
  }

  /** What the prior did over the steps it was applied to (for the trace). */
  readonly stats: CopyPriorStats = { steps: 0, voted: 0, changed: 0, longestMatch: 0 };

  /** Mix the votes into the logits in place (as the log of the mixed probabilities); whether it voted. */
  apply(generated: string, logits: Float32Array): boolean {
    this.stats.steps++;
    const v = this.vote(generated);
    if (!v) return false;
    let max = -Infinity;
    let top = -1;
    for (let i = 0; i < logits.length; i++) {
      if (logits[i]! > max) {
        max = logits[i]!;
        top = i;
      }
    }
    if (max === -Infinity) return false;
    let sum = 0;
    for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i]! - max);
    const keep = 1 - v.weight;
    let mixedTop = -1;
    for (let i = 0; i < logits.length; i++) {
      const prob = (Math.exp(logits[i]! - max) / sum) * keep + v.weight * (v.next.get(i) ?? 0);
      logits[i] = Math.log(prob);
      if (mixedTop < 0 || logits[i]! > logits[mixedTop]!) mixedTop = i;
    }
    this.stats.voted++;
    if (mixedTop !== top) this.stats.changed++;
    this.stats.longestMatch = Math.max(this.stats.longestMatch, v.match);
    return true;
  }
}
