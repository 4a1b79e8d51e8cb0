// The embedded ONNX causal LM as a completion model: the offline default when no model server
// is configured, and what the tests and the demo run. Plain prefix prompts (no FIM training).
import { throwIfAborted } from '../util/errors';
import { raceCancellation } from '../util/abort';
import { applyLoopGuard, DEFAULT_LOOP_GUARD, type LoopGuardOptions } from './loopGuard';
import { CopyPrior, DEFAULT_COPY_PRIOR, TokenLookup, type CopyPriorOptions } from './copyPrior';
import { maskUnlessNothingLeft } from './maskTokens';
import {
  cutAtStop,
  ModelClientError,
  type GenerateRequest,
  type GenerateResult,
  type ModelCapabilities,
  type ModelClient,
  type TokenLogprob,
} from './types';

/** The causal LM surface this client needs (implemented by src/engine/models' registry). */
export interface EmbeddedLM {
  /** Greedy generation; the text after the prompt. */
  generate(
    prompt: string,
    options: {
      maxNewTokens: number;
      stop?: readonly string[];
      until?: (generated: string) => boolean;
      logitsFilter?: (generated: string, logits: Float32Array, ids: readonly number[]) => void;
      /** False where the filter would change nothing at this step (an engine may then choose without it); absent: every step. */
      filterActive?: (generated: string) => boolean;
    },
    signal: AbortSignal,
  ): Promise<string | { text: string; stoppedBy?: 'eos' | 'length' | 'stop'; logprobs?: TokenLogprob[] }>;
  /** Each vocabulary id's text, for checked decoding. */
  tokenTexts?(): readonly string[];
  encode?(text: string): ArrayLike<number>;
  /** Positions the model was trained with. */
  readonly contextTokens?: number;
  /** The end-of-text token (masked while a request's holdEnd says the answer is unfinished). */
  readonly eosId?: number;
}

interface EmbeddedClientOptions {
  /** Loads the model on first use (the registry caches it). */
  load: () => Promise<EmbeddedLM>;
  /** Name shown in traces and status. */
  model?: string;
  /** Mask the token that would extend a cycle of the model's own output (default on); `false` turns it off. */
  loopGuard?: LoopGuardOptions | false;
  /** Mix the prompt's continuations of the text so far into the model's choice (copyPrior.ts); `false` turns it off. */
  copyPrior?: CopyPriorOptions | false;
  /** What a load failure calls the model (`the embedded model`). */
  label?: string;
}

export class EmbeddedClient implements ModelClient {
  readonly backend = 'embedded' as const;
  /** It sees the logits: checking masks its tokens. */
  // The shipped in-process model completes lines better from whole definitions than from compact ones
  // (docs/BENCHMARKS.md "Compact knowledge renderings").
  readonly capabilities: ModelCapabilities = { decodeConstraint: true, wholeKnowledge: true };
  readonly family = 'plain' as const;
  readonly endpoint = 'embedded';
  private lm: EmbeddedLM | undefined;
  private loading: Promise<EmbeddedLM> | undefined;

  constructor(private readonly options: EmbeddedClientOptions) {}

  get model(): string {
    return this.options.model ?? 'embedded-code-lm';
  }

  get contextTokens(): number | undefined {
    return this.lm?.contextTokens;
  }

  /** Loads the model (once); later calls share the load. */
  async ready(): Promise<EmbeddedLM> {
    if (this.lm) return this.lm;
    this.loading ??= this.options.load().then(
      (lm) => (this.lm = lm),
      (e: unknown) => {
        this.loading = undefined;
        throw new ModelClientError(
          'modelMissing',
          `${this.options.label ?? 'the embedded model'} could not be loaded: ${e instanceof Error ? e.message : String(e)}`,
          this.endpoint,
          this.model,
        );
      },
    );
    return this.loading;
  }

  /** Loads the model; the load is shared, so a cancelled request stops waiting for it without ending it. */
  async prepare(signal: AbortSignal): Promise<void> {
    throwIfAborted(signal);
    await raceCancellation(this.ready(), signal);
  }

  private readonly lineTokens = new Map<string, number>();
  private lookup: TokenLookup | undefined;

  /** The vocabulary by text, for the copy prior (built once). */
  private tokenLookup(lm: EmbeddedLM): TokenLookup | undefined {
    if (this.lookup) return this.lookup;
    const texts = lm.tokenTexts?.();
    return texts ? (this.lookup = new TokenLookup(texts)) : undefined;
  }
  private blankLineBans: Set<number> | undefined;

  /**
   * What `holdLine` masks: the end token, every token holding a line break, and every token whose
   * text starts (after spaces) with a closing bracket, which the single-line postprocess would cut
   * away on a blank line (`balanceBrackets`), leaving nothing.
   */
  private blankLineTokens(lm: EmbeddedLM): Set<number> | undefined {
    if (this.blankLineBans) return this.blankLineBans;
    const texts = lm.tokenTexts?.();
    if (!texts || lm.eosId === undefined) return undefined;
    const ids = new Set<number>([lm.eosId]);
    texts.forEach((t, id) => {
      if (t.includes('\n') || t.includes('\r') || /^[ \t]*[)\]}]/.test(t)) ids.add(id);
    });
    return (this.blankLineBans = ids);
  }

  /**
   * Tokens by the model's tokenizer, counted line by line with a memo: between keystrokes only
   * the cursor line changes, so fitting the prompt re-encodes almost nothing. (Byte-level BPE
   * merges rarely cross a newline, so the sum matches the whole-text count within a few tokens.)
   */
  countTokens = (text: string): number => {
    const lm = this.lm;
    if (!lm?.encode) return Math.ceil(text.length / 3);
    if (this.lineTokens.size > 50_000) this.lineTokens.clear();
    let total = 0;
    for (const line of text.split('\n')) {
      let n = this.lineTokens.get(line);
      if (n === undefined) {
        n = lm.encode(`${line}\n`).length;
        this.lineTokens.set(line, n);
      }
      total += n;
    }
    return total;
  };

  async generate(request: GenerateRequest, signal: AbortSignal): Promise<GenerateResult> {
    const start = performance.now();
    const lm = await this.ready();
    throwIfAborted(signal);
    const constraint = request.constraint;
    const texts = constraint && lm.tokenTexts ? lm.tokenTexts() : undefined;
    const hold = request.holdEnd;
    const endOnly = lm.eosId !== undefined ? new Set([lm.eosId]) : undefined;
    const guard = this.options.loopGuard === false ? undefined : (this.options.loopGuard ?? DEFAULT_LOOP_GUARD);
    const holdLine = request.holdLine;
    const blankBans = holdLine ? this.blankLineTokens(lm) : undefined;
    const copyOptions = this.options.copyPrior === false ? undefined : (this.options.copyPrior ?? DEFAULT_COPY_PRIOR);
    const lookup = copyOptions ? this.tokenLookup(lm) : undefined;
    const copy = copyOptions && lookup ? new CopyPrior(request.prompt, lookup, copyOptions, request.copyFrom) : undefined;
    const logitsFilter =
      (constraint && texts) || (hold && endOnly) || guard || blankBans || copy
        ? (generated: string, logits: Float32Array, ids: readonly number[]): void => {
            // First the copy prior (it mixes probabilities), then the masks, which it may not undo.
            if (copy) copy.apply(generated, logits);
            if (constraint && texts) constraint.apply(texts, generated, logits);
            if (hold && endOnly && hold(generated)) maskUnlessNothingLeft(logits, endOnly);
            if (holdLine && blankBans && holdLine(generated)) maskUnlessNothingLeft(logits, blankBans);
            if (guard && ids) applyLoopGuard(ids, logits, guard);
          }
        : undefined;
    // The copy prior and the loop guard act at any step; the masks only where their condition holds.
    const filterActive =
      logitsFilter && !copy && !guard
        ? (generated: string): boolean =>
            (constraint !== undefined && texts !== undefined && (constraint.active?.(generated) ?? true)) ||
            (hold !== undefined && endOnly !== undefined && hold(generated)) ||
            (holdLine !== undefined && blankBans !== undefined && holdLine(generated))
        : undefined;
    const out = await lm.generate(
      request.prompt,
      {
        maxNewTokens: request.maxNewTokens,
        stop: request.stop,
        ...(request.until ? { until: request.until } : {}),
        ...(logitsFilter ? { logitsFilter } : {}),
        ...(filterActive ? { filterActive } : {}),
      },
      signal,
    );
    throwIfAborted(signal);
    const cut = cutAtStop(typeof out === 'string' ? out : out.text, request.stop);
    const reason = typeof out === 'string' ? undefined : out.stoppedBy;
    return {
      text: cut.text,
      model: this.model,
      elapsedMs: performance.now() - start,
      stoppedBy: cut.stopped ? 'stop' : (reason ?? 'unknown'),
      ...(copy ? { copyPrior: { ...copy.stats } } : {}),
      ...(typeof out !== 'string' && out.logprobs ? { logprobs: out.logprobs } : {}),
    };
  }
}
