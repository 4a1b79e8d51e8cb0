// What Rambo reads from the knowledge base (issue 17 steps a, c, d): the repository's methods and
// functions with their signature keys, the names of classes, methods and fields for mapping a
// sketch's elements, and the identifier -> using-methods index. Built from the knowledge base on
// first use and kept current per file through its change events.
import type { KnowledgeBase } from '../kb/KnowledgeBase';
import type { KbClass, KbItem } from '../kb/types';
import type { Disposable } from '../util/disposable';
import { identifierTokens } from '../util/codeText';
import { ownStrings } from '../util/ownString';
import { signatureKey, subwordSet, tokenSet, type Tokenize } from './tokens';

export interface MethodEntry {
  item: KbItem;
  /** Identifiers its body uses (its declaration line excluded). */
  used: Set<string>;
  /** Token set of its signature key (Rambo step a). */
  signatureTokens: Set<string | number>;
  /** Subword set of its text (ranking usages by similarity to the sketch). */
  textTokens: Set<string>;
}

/** The part of a method's text after its declaration. */
function bodyText(item: KbItem): string {
  const at = item.text.indexOf(item.signature);
  return at < 0 ? item.text : item.text.slice(at + item.signature.length);
}

/** The code encoder as step a's option uses it: texts to unit vectors. */
export type EmbedTexts = (texts: string[], signal: AbortSignal) => Promise<Float32Array[]>;

/** Signatures embedded per call (the encoder's batch). */
const EMBED_CHUNK = 64;

export class RepoMethods implements Disposable {
  private byPath = new Map<string, MethodEntry[]>();
  /** The encoder's vectors of signatures (step a's encoder option), by signature text: embedded once, on first use. */
  private signatureVectors = new Map<string, Float32Array>();
  private byIdentifier = new Map<string, Set<MethodEntry>>();
  private built = false;
  private names: { classes: KbClass[]; functions: Map<string, KbItem[]>; fields: Map<string, KbItem[]>; subwords: Map<string, Set<string>> } | undefined;
  private readonly subscription: Disposable;
  /** Per-file rebuilds since the index was built (a test reads it). */
  updates = 0;

  constructor(
    private readonly kb: KnowledgeBase,
    private readonly tokenize?: Tokenize,
  ) {
    this.subscription = kb.onDidChange((e) => {
      this.names = undefined;
      if (!this.built) return;
      for (const path of [...e.changed, ...e.removed]) this.indexFile(path);
    });
  }

  private ensure(): void {
    if (this.built) return;
    for (const path of this.kb.paths()) this.indexFile(path);
    this.built = true;
  }

  private indexFile(path: string): void {
    for (const entry of this.byPath.get(path) ?? []) for (const id of entry.used) this.byIdentifier.get(id)?.delete(entry);
    this.byPath.delete(path);
    const items = this.kb.file(path)?.items ?? [];
    const entries: MethodEntry[] = [];
    for (const item of items) {
      if (item.kind !== 'function' && item.kind !== 'classFunction') continue;
      const body = bodyText(item);
      // Own copies: identifiers and subwords cut from the text would keep the whole text (util/ownString.ts).
      const entry: MethodEntry = { item, used: ownStrings(identifierTokens(body)), signatureTokens: tokenSet(signatureKey(item.lang, item.signature), this.tokenize), textTokens: ownStrings(subwordSet(item.text)) };
      entries.push(entry);
      for (const id of entry.used) {
        let set = this.byIdentifier.get(id);
        if (!set) this.byIdentifier.set(id, (set = new Set()));
        set.add(entry);
      }
    }
    if (entries.length > 0) this.byPath.set(path, entries);
    if (this.built) this.updates++;
  }

  /** Every method and function, in path order. */
  methods(): MethodEntry[] {
    this.ensure();
    return [...this.byPath.keys()].sort().flatMap((p) => this.byPath.get(p) ?? []);
  }

  /** The methods whose bodies use `identifier` (Rambo: "uses e" = the name occurs in the body). */
  using(identifier: string): readonly MethodEntry[] {
    this.ensure();
    return [...(this.byIdentifier.get(identifier) ?? [])];
  }

  /** The signature's vector, once embedSignatures has run. */
  signatureVector(entry: MethodEntry): Float32Array | undefined {
    return this.signatureVectors.get(entry.item.signature);
  }

  /** Embed the signatures not embedded yet (the first call embeds them all; later ones what changed files added). */
  async embedSignatures(embed: EmbedTexts, signal: AbortSignal): Promise<number> {
    const current = new Set(this.methods().map((m) => m.item.signature));
    for (const s of [...this.signatureVectors.keys()]) if (!current.has(s)) this.signatureVectors.delete(s);
    const todo = [...current].filter((s) => !this.signatureVectors.has(s));
    for (let i = 0; i < todo.length; i += EMBED_CHUNK) {
      const part = todo.slice(i, i + EMBED_CHUNK);
      const vectors = await embed(part, signal);
      part.forEach((s, j) => {
        const v = vectors[j];
        if (v) this.signatureVectors.set(s, v);
      });
    }
    return todo.length;
  }

  /** Name tables for mapping a sketch's elements (classes; methods and fields by simple name; subword sets of all names). */
  nameTables(): NonNullable<RepoMethods['names']> {
    if (!this.names) {
      const functions = new Map<string, KbItem[]>();
      const fields = new Map<string, KbItem[]>();
      const subwords = new Map<string, Set<string>>();
      for (const item of this.kb.items()) {
        const map = item.kind === 'function' || item.kind === 'classFunction' ? functions : fields;
        const list = map.get(item.name);
        if (list) list.push(item);
        else map.set(item.name, [item]);
        if (!subwords.has(item.name)) subwords.set(item.name, subwordSet(item.name));
      }
      const classes = this.kb.classes();
      for (const c of classes) if (!subwords.has(c.name)) subwords.set(c.name, subwordSet(c.name));
      this.names = { classes, functions, fields, subwords };
    }
    return this.names;
  }

  /** Members (methods and fields) of a class, by its file and qualified name. */
  membersOf(c: KbClass): KbItem[] {
    return (this.kb.file(c.path)?.items ?? []).filter((i) => i.className === c.qualifiedName);
  }

  dispose(): void {
    this.subscription.dispose();
  }
}
