// What Rambo reads from the knowledge base (the body mode's steps a, c and d): the repository's methods and
// functions with their signature keys, the names of classes, methods and fields for mapping a
// sketch's elements, and the identifier -> using-methods index. Built from the knowledge base on
// first use and kept current per file through its change events.
import type { KnowledgeBase } from '../kb/KnowledgeBase';
import type { KbClass, KbItem } from '../kb/types';
import type { Disposable } from '../util/disposable';
import { identifierTokens } from '../util/codeText';
import { ownString } from '../util/ownString';
import { signatureKey, subwordSet, tokenSet, type Tokenize } from './tokens';

/** Whether the ascending run words[from, to) holds id (binary search). */
function contains(words: Uint32Array, from: number, to: number, id: number): boolean {
  let lo = from;
  let hi = to - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const w = words[mid]!;
    if (w === id) return true;
    if (w < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

export interface MethodEntry {
  item: KbItem;
  /** Token set of its signature key (Rambo step a). */
  signatureTokens: Set<string | number>;
  /** Its file's word ids (RepoMethods' own numbering), each method's two runs in it. */
  readonly words: Uint32Array;
  /** Identifiers its body uses (its declaration line excluded): words[usedFrom, textFrom), ascending ids. */
  readonly usedFrom: number;
  /** Subwords of its text (ranking usages by similarity to the sketch): words[textFrom, textTo), ascending ids. */
  readonly textFrom: number;
  readonly textTo: number;
}

/** The part of a method's text after its declaration. */
function bodyText(item: KbItem): string {
  const at = item.text.indexOf(item.signature);
  return at < 0 ? item.text : item.text.slice(at + item.signature.length);
}

export class RepoMethods implements Disposable {
  private byPath = new Map<string, MethodEntry[]>();
  /**
   * The methods using each identifier, by word id. Words are numbered once for the index's life
   * (a changed file may leave unused ones): the per-method sets of strings this replaces held about
   * 190 MB on the JDK's java.base.
   */
  private byIdentifier = new Map<number, MethodEntry[]>();
  private readonly wordIds = new Map<string, number>();
  private built = false;
  private names:
    { classes: KbClass[]; functions: Map<string, KbItem[]>; fields: Map<string, KbItem[]>; subwords: Map<string, Set<string>> } | undefined;
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

  /** The word's id, numbered on first sight (an own copy is kept: util/ownString.ts). */
  private wordId(word: string): number {
    let id = this.wordIds.get(word);
    if (id === undefined) this.wordIds.set(ownString(word), (id = this.wordIds.size));
    return id;
  }

  /** Ascending unique ids of the words. */
  private idsOf(words: Iterable<string>): number[] {
    const ids = new Set<number>();
    for (const w of words) ids.add(this.wordId(w));
    return [...ids].sort((a, b) => a - b);
  }

  private indexFile(path: string): void {
    // Each identifier's users are filtered once per file (a common one has tens of thousands).
    const old = new Set(this.byPath.get(path) ?? []);
    const touched = new Set<number>();
    for (const entry of old) for (let k = entry.usedFrom; k < entry.textFrom; k++) touched.add(entry.words[k]!);
    for (const id of touched) {
      const users = this.byIdentifier.get(id)?.filter((m) => !old.has(m)) ?? [];
      if (users.length > 0) this.byIdentifier.set(id, users);
      else this.byIdentifier.delete(id);
    }
    this.byPath.delete(path);
    const items = (this.kb.file(path)?.items ?? []).filter((item) => item.kind === 'function' || item.kind === 'classFunction');
    const runs = items.map((item) => ({ used: this.idsOf(identifierTokens(bodyText(item))), text: this.idsOf(subwordSet(item.text)) }));
    const words = new Uint32Array(runs.reduce((n, r) => n + r.used.length + r.text.length, 0));
    let at = 0;
    const entries = items.map((item, i): MethodEntry => {
      const { used, text } = runs[i]!;
      words.set(used, at);
      words.set(text, at + used.length);
      const entry: MethodEntry = {
        item,
        signatureTokens: tokenSet(signatureKey(item.lang, item.signature), this.tokenize),
        words,
        usedFrom: at,
        textFrom: at + used.length,
        textTo: at + used.length + text.length,
      };
      at = entry.textTo;
      for (const id of used) {
        const users = this.byIdentifier.get(id);
        if (users) users.push(entry);
        else this.byIdentifier.set(id, [entry]);
      }
      return entry;
    });
    if (entries.length > 0) this.byPath.set(path, entries);
    if (this.built) this.updates++;
  }

  /**
   * Jaccard of a word set with a method's text subwords (Rambo step d's ranking): the same figure
   * as between two sets of strings.
   */
  textSimilarity(words: ReadonlySet<string>, m: MethodEntry): number {
    const size = m.textTo - m.textFrom;
    if (words.size === 0 || size === 0) return 0;
    let both = 0;
    for (const w of words) {
      const id = this.wordIds.get(w);
      if (id !== undefined && contains(m.words, m.textFrom, m.textTo, id)) both++;
    }
    return both / (words.size + size - both);
  }

  /** Every method and function, in path order. */
  methods(): MethodEntry[] {
    this.ensure();
    return [...this.byPath.keys()].sort().flatMap((p) => this.byPath.get(p) ?? []);
  }

  /** The methods whose bodies use `identifier` (Rambo: "uses e" = the name occurs in the body). */
  using(identifier: string): readonly MethodEntry[] {
    this.ensure();
    const id = this.wordIds.get(identifier);
    return id === undefined ? [] : [...(this.byIdentifier.get(id) ?? [])];
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
