// BestFit over retrieval candidates (CodeRAG section 2.3): merged candidates in, top-u out, through
// BestFit heap sort with one reranker (the pipeline's rerank stage chooses which, per request).
import { bestFitRerank } from './bestFitRerank';
import { buildRerankQuery } from './bestFitPrompt';
import type { Reranker, RerankDecision, RerankDoc, RerankInput, RerankOutcome, RerankStage, RerankTrace } from './types';
import type { Candidate } from '../retrieve/types';
import { redactSecrets } from '../prompt/redact';
import { langOfPath, maskCode } from '../prompt/renderKnowledge';

type CandidateDoc = RerankDoc & { candidate: Candidate; score: number; position: number };

/** Best retrieval score over the paths that found the candidate (a rerank document's score; the distillation teacher's tie-break). */
export function retrievalScore(c: Candidate): number {
  const scores = Object.values(c.scores).filter((s): s is number => typeof s === 'number');
  return scores.length > 0 ? Math.max(...scores) : 0;
}

export function candidateDocs(candidates: readonly Candidate[]): CandidateDoc[] {
  return candidates.map((candidate, position) => ({
    id: candidate.snippet.id,
    text: candidate.snippet.text,
    path: candidate.snippet.path,
    candidate,
    score: retrievalScore(candidate),
    position,
  }));
}

/** The rerank trace as the pipeline records it. */
function pipelineCalls(trace: RerankTrace): RerankDecision[] {
  return trace.calls.map((c) => ({
    window: c.window,
    ...(c.status === 'ok' ? { picked: c.window[c.picked] } : {}),
    elapsedMs: c.elapsedMs,
    ...(c.status !== 'ok' ? { failure: c.reason ?? c.status } : {}),
  }));
}

export class BestFitRerankStage implements RerankStage {
  constructor(
    private readonly reranker: Reranker,
    private readonly arity?: number,
  ) {}

  get name(): string {
    return this.reranker.name;
  }

  get perPlace(): boolean {
    return this.reranker.kind === 'llm';
  }

  async rerank(input: RerankInput, signal: AbortSignal): Promise<RerankOutcome> {
    const query = buildRerankQuery(input.file.path, input.file.prefix);
    // An LLM reranker's windows leave for a model server: another file's code with its string values masked
    // (renderKnowledge.ts), as a prompt shows it. The distilled reranker runs in-process and sees the text as it is.
    const llm = this.reranker.kind === 'llm';
    const docs = candidateDocs(input.candidates).map((d) =>
      llm ? { ...d, text: maskCode(d.text, d.candidate.snippet.item?.lang ?? langOfPath(d.candidate.snippet.path)) } : d,
    );
    // An LLM reranker redacts what it sends (generate/redactBoundary); the trace counts what it
    // redacts (the same cached results).
    let redactions: number | undefined;
    if (llm) {
      const counts = await Promise.all([query.text, ...docs.map((d) => d.text)].map(async (t) => (await redactSecrets(t)).count));
      redactions = counts.reduce((a, b) => a + b, 0);
    }
    const result = await bestFitRerank(
      query,
      docs,
      this.reranker,
      { topU: input.topU, ...(this.arity ? { arity: this.arity } : {}) },
      signal,
    );
    const notes = [`${result.trace.rerankerCalls} reranker calls, ${result.trace.elapsedMs.toFixed(1)} ms`];
    if (result.trace.degraded) notes.push(result.trace.degraded);
    return {
      ranked: result.top.map((d) => d.candidate),
      calls: pipelineCalls(result.trace),
      notes,
      detail: result.trace,
      ...(redactions !== undefined ? { redactions } : {}),
    };
  }
}
