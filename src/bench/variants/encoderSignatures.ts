// Rambo step a by the code encoder (`--body-signatures encoder`): signatures compared by the
// cosine of their embeddings instead of the product's token Jaccard. Each signature text is
// embedded once per repository and the set is kept current with the repository's methods.
import { excludedFor, jaccardSignatures, type ScoredMethod, type SignatureSearch } from '../../engine/body/rambo';
import type { RepoMethods } from '../../engine/body/RepoMethods';
import type { BodyTarget } from '../../engine/body/detectBody';
import type { Tokenize } from '../../engine/body/tokens';

/** Step a's searches a run may name: the product's token Jaccard, or the encoder's cosine. */
export type SignatureSearchName = 'jaccard' | 'encoder';
export const SIGNATURE_SEARCHES: readonly SignatureSearchName[] = ['jaccard', 'encoder'];

/** The code encoder as step a uses it: texts to unit vectors. */
type EmbedTexts = (texts: string[], signal: AbortSignal) => Promise<Float32Array[]>;

/** Signatures embedded per call (the encoder's batch). */
const EMBED_CHUNK = 64;

/** The encoder's vectors of one repository's signatures, by signature text. */
export class SignatureVectors {
  private readonly vectors = new Map<string, Float32Array>();

  constructor(private readonly embed: EmbedTexts) {}

  /** Embed the signatures not embedded yet (the first call embeds them all; later ones what changed files added); returns how many. */
  async update(repo: RepoMethods, signal: AbortSignal): Promise<number> {
    const current = new Set(repo.methods().map((m) => m.item.signature));
    for (const s of [...this.vectors.keys()]) if (!current.has(s)) this.vectors.delete(s);
    const todo = [...current].filter((s) => !this.vectors.has(s));
    for (let i = 0; i < todo.length; i += EMBED_CHUNK) {
      const part = todo.slice(i, i + EMBED_CHUNK);
      const vectors = await this.embed(part, signal);
      part.forEach((s, j) => {
        const v = vectors[j];
        if (v) this.vectors.set(s, v);
      });
    }
    return todo.length;
  }

  /** `text`'s vector (the target's signature). */
  async embedOne(text: string, signal: AbortSignal): Promise<Float32Array | undefined> {
    return (await this.embed([text], signal))[0];
  }

  /** The top-k methods by the cosine of their signature's vector with `query` (unit vectors: a dot product). */
  signatureHits(target: BodyTarget, filePath: string, repo: RepoMethods, topK: number, query: Float32Array): ScoredMethod[] {
    const excluded = excludedFor(target, filePath);
    const scored: ScoredMethod[] = [];
    for (const m of repo.methods()) {
      if (m.item.lang !== target.lang || excluded(m.item)) continue;
      const v = this.vectors.get(m.item.signature);
      if (!v || v.length !== query.length) continue;
      let dot = 0;
      for (let i = 0; i < v.length; i++) dot += v[i]! * query[i]!;
      scored.push({ item: m.item, score: dot });
    }
    return scored.sort((a, b) => b.score - a.score || a.item.id.localeCompare(b.item.id)).slice(0, topK);
  }
}

/**
 * Step a by the encoder's cosine where `vectors` (one repository's) are given, else the product's
 * Jaccard; the trace says which and why.
 */
export function encoderSignatures(vectors: SignatureVectors | undefined, tokenize?: Tokenize): SignatureSearch {
  const jaccard = jaccardSignatures(tokenize);
  return {
    async signatureHits(target, filePath, repo, topK, signal) {
      if (!vectors) {
        const found = await jaccard.signatureHits(target, filePath, repo, topK, signal);
        return { ...found, how: 'jaccard (no code encoder loaded)' };
      }
      await vectors.update(repo, signal);
      const query = await vectors.embedOne(target.signature, signal);
      if (query) return { methods: vectors.signatureHits(target, filePath, repo, topK, query), how: 'encoder' };
      const found = await jaccard.signatureHits(target, filePath, repo, topK, signal);
      return { ...found, how: 'jaccard (the encoder gave no vector)' };
    },
  };
}
