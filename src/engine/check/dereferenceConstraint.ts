// Checked decoding at dereferences (monitor-guided decoding, PAPER-NOTES): while the model writes
// the member name after a `.` whose receiver the repository types, only tokens that continue or end
// one of its member names are allowed; once the name is written decoding is free again, until the
// next `.` (at the cursor or in the generated text) whose receiver resolves.
import type { ReceiverMembers } from './receiverMembers';
import { applyMask, maskVocabulary, memberTokenMask, namePrefixes, type MaskVocabulary } from './tokenMask';

/** One constrained member name, for the trace. */
export interface ConstrainedName {
  receiver: string;
  /** What the receiver resolved to. */
  entities: string[];
  /** Valid names at that dereference. */
  names: number;
  /** At the cursor (the prompt ends at the dot) or after a `.` the model wrote. */
  at: 'cursor' | 'generated';
  /** Tokens decoded under the mask, and the fewest tokens one step allowed. */
  steps: number;
  minAllowed: number;
  /** The member name written (the typed part included). */
  written: string;
}

interface Active {
  event: ConstrainedName;
  names: ReadonlySet<string>;
  prefixes: ReadonlySet<string>;
  partial: string;
  /** Length of the generated text when the dereference began. */
  from: number;
}

const NOT_IDENT = /[^\p{L}\p{N}_$]/u;

export class DereferenceConstraint {
  readonly events: ConstrainedName[] = [];
  /** Time spent in apply() (masking and receiver typing of generated dereferences), and its calls. */
  maskMs = 0;
  /** Of maskMs, the time spent typing receivers of dots the model wrote. */
  resolveMs = 0;
  calls = 0;
  private active: Active | undefined;
  private vocab: MaskVocabulary | undefined;
  private vocabOf: readonly string[] | undefined;
  private lastResolvedAt = -1;

  /**
   * `prefix`: the code before the cursor; `resolve`: the receiver typing of a text ending in a
   * dereference (check/receiverMembers); `atCursor`: its answer for the prefix, when known.
   */
  constructor(
    private readonly prefix: string,
    private readonly resolve: (text: string) => ReceiverMembers | undefined,
    atCursor?: ReceiverMembers,
  ) {
    if (atCursor) this.start(atCursor, 'cursor', 0);
  }

  private start(m: ReceiverMembers, at: 'cursor' | 'generated', from: number): void {
    const event: ConstrainedName = { receiver: m.receiver, entities: m.entities, names: m.names.size, at, steps: 0, minAllowed: Infinity, written: m.partial };
    this.events.push(event);
    this.active = { event, names: m.names, prefixes: namePrefixes(m.names), partial: m.partial, from };
  }

  apply(tokenTexts: readonly string[], generated: string, logits: Float32Array): void {
    const t0 = performance.now();
    this.calls++;
    try {
      if (this.vocabOf !== tokenTexts) {
        this.vocab = maskVocabulary(tokenTexts);
        this.vocabOf = tokenTexts;
      }
      let active = this.active;
      if (active) {
        const typed = active.partial + generated.slice(active.from);
        const end = typed.search(NOT_IDENT);
        if (end >= 0) {
          active.event.written = typed.slice(0, end);
          this.active = active = undefined;
        } else active.event.written = typed;
      }
      if (!active && generated.endsWith('.') && this.lastResolvedAt !== generated.length) {
        this.lastResolvedAt = generated.length;
        const r0 = performance.now();
        const m = this.resolve(this.prefix + generated);
        this.resolveMs += performance.now() - r0;
        if (m) this.start(m, 'generated', generated.length);
        active = this.active;
      }
      if (!active) return;
      const typed = active.partial + generated.slice(active.from);
      const allowed = new Uint8Array(logits.length);
      const count = memberTokenMask(this.vocab!, active.names, active.prefixes, typed, allowed);
      applyMask(logits, allowed, count);
      active.event.steps++;
      active.event.minAllowed = Math.min(active.event.minAllowed, count);
    } finally {
      this.maskMs += performance.now() - t0;
    }
  }
}
