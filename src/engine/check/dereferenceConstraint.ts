// Checked decoding at dereferences (monitor-guided decoding, docs/ARCHITECTURE.md "Papers: implementation notes"): while the model writes
// the member name after a `.` whose receiver the repository types, only tokens that continue or end
// one of its member names are allowed; once the name is written decoding is free again, until the
// next `.` (at the cursor or in the generated text) whose receiver resolves.
import type { ReceiverMembers } from './receiverMembers';
import { applyMask, maskVocabulary, memberTokenMask, namePrefixes, type MaskVocabulary } from './tokenMask';
import { applyBoosts, nameBoosts, PriorContext, type NameBoosts } from './memberPrior';

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
  /** The member prior's best-ranked names (memberPrior.ts), best first, at most 5; absent when no cue spoke or the prior is off. */
  favoured?: string[];
}

interface Active {
  event: ConstrainedName;
  names: ReadonlySet<string>;
  prefixes: ReadonlySet<string>;
  partial: string;
  /** Length of the generated text when the dereference began. */
  from: number;
  /** The member prior's logit boosts (empty when no cue spoke or the prior is off). */
  boosts: NameBoosts | undefined;
}

const NOT_IDENT = /[^\p{L}\p{N}_$]/u;

export class DereferenceConstraint {
  readonly events: ConstrainedName[] = [];
  /** Time spent in apply() (masking and receiver typing of generated dereferences) and ranking the members, and apply()'s calls. */
  maskMs = 0;
  /** Of maskMs, the time spent typing receivers of dots the model wrote. */
  resolveMs = 0;
  calls = 0;
  private writing: Active | undefined;
  private vocab: MaskVocabulary | undefined;
  private vocabOf: readonly string[] | undefined;
  private lastResolvedAt = -1;
  private priorContext: PriorContext | undefined;

  /**
   * `prefix`: the code before the cursor; `resolve`: the receiver typing of a text ending in a
   * dereference (check/receiverMembers); `atCursor`: its answer for the prefix, when known;
   * `priorWeight`: the member prior's weight against the model's logits (0: the mask alone).
   */
  constructor(
    private readonly prefix: string,
    private readonly resolve: (text: string) => ReceiverMembers | undefined,
    atCursor?: ReceiverMembers,
    private readonly priorWeight = 0,
  ) {
    if (atCursor) {
      const t0 = performance.now();
      this.start(atCursor, 'cursor', '');
      this.maskMs += performance.now() - t0;
    }
  }

  private start(m: ReceiverMembers, at: 'cursor' | 'generated', generated: string): void {
    const event: ConstrainedName = {
      receiver: m.receiver,
      entities: m.entities,
      names: m.names.size,
      at,
      steps: 0,
      minAllowed: Infinity,
      written: m.partial,
    };
    let boosts: NameBoosts | undefined;
    if (this.priorWeight > 0) {
      this.priorContext ??= new PriorContext(this.prefix);
      const scores = this.priorContext.scores(this.prefix + generated, m.receiver, m.partial, m.names);
      if (scores.size > 0) {
        event.favoured = [...scores]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 5)
          .map(([n]) => n);
        boosts = nameBoosts(scores, this.priorWeight);
      }
    }
    this.events.push(event);
    this.writing = { event, names: m.names, prefixes: namePrefixes(m.names), partial: m.partial, from: generated.length, boosts };
  }

  /** The name being written after `generated`, ended (and recorded) once a token wrote past it. */
  private advance(generated: string): Active | undefined {
    const active = this.writing;
    if (!active) return undefined;
    const typed = active.partial + generated.slice(active.from);
    const end = typed.search(NOT_IDENT);
    active.event.written = end >= 0 ? typed.slice(0, end) : typed;
    if (end >= 0) this.writing = undefined;
    return this.writing;
  }

  /** A member name is being written, or `generated` ends in a `.` not yet resolved: apply() may mask. */
  active(generated: string): boolean {
    return this.advance(generated) !== undefined || (generated.endsWith('.') && this.lastResolvedAt !== generated.length);
  }

  apply(tokenTexts: readonly string[], generated: string, logits: Float32Array): void {
    const t0 = performance.now();
    this.calls++;
    try {
      if (this.vocabOf !== tokenTexts) {
        this.vocab = maskVocabulary(tokenTexts);
        this.vocabOf = tokenTexts;
      }
      let active = this.advance(generated);
      if (!active && generated.endsWith('.') && this.lastResolvedAt !== generated.length) {
        this.lastResolvedAt = generated.length;
        const r0 = performance.now();
        const m = this.resolve(this.prefix + generated);
        this.resolveMs += performance.now() - r0;
        if (m) this.start(m, 'generated', generated);
        active = this.writing;
      }
      if (!active) return;
      const typed = active.partial + generated.slice(active.from);
      const allowed = new Uint8Array(logits.length);
      const count = memberTokenMask(this.vocab!, active.names, active.prefixes, typed, allowed);
      applyMask(logits, allowed, count);
      if (active.boosts && count > 0) applyBoosts(this.vocab!, active.boosts, typed, allowed, logits);
      active.event.steps++;
      active.event.minAllowed = Math.min(active.event.minAllowed, count);
    } finally {
      this.maskMs += performance.now() - t0;
    }
  }
}
