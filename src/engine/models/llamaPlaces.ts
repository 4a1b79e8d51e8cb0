// The places an in-process llama.cpp sequence held before it moved on, kept as saved sequence
// states on disk within a byte bound: a return to a place loads its state and reads only what
// changed, instead of the whole local part again (docs/ARCHITECTURE.md "The local engine").
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** One saved place: the tokens its state holds, and where the state lies. */
export interface SavedPlace {
  readonly tokens: readonly number[];
  readonly path: string;
  readonly bytes: number;
  lastUsed: number;
}

/** The number of leading tokens two sequences share. */
export function commonPrefix<T>(a: readonly T[], b: readonly T[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

export interface PlaceStoreOptions {
  dir: string;
  /** The most bytes all saved states may take together. */
  maxBytes: number;
  /** The most states kept. */
  maxPlaces: number;
}

/** Saved places, least recently used first out. Not thread-safe: the engine runs one request at a time. */
export class PlaceStore {
  private readonly places: SavedPlace[] = [];
  private serial = 0;
  private clock = 0;
  private swept: Promise<void> | undefined;

  constructor(private readonly options: PlaceStoreOptions) {}

  /** Removes what an earlier process left (states are only valid for the model and context that wrote them). */
  private sweep(): Promise<void> {
    this.swept ??= (async () => {
      await mkdir(this.options.dir, { recursive: true });
      for (const name of await readdir(this.options.dir))
        if (name.endsWith('.state')) await rm(join(this.options.dir, name), { force: true });
    })();
    return this.swept;
  }

  /** The saved place that shares the longest prefix with `tokens`, and how long it is. */
  best(tokens: readonly number[]): { place: SavedPlace; common: number } | undefined {
    let found: { place: SavedPlace; common: number } | undefined;
    for (const place of this.places) {
      const common = commonPrefix(place.tokens, tokens);
      if (!found || common > found.common) found = { place, common };
    }
    return found;
  }

  /** A path for a new state file. */
  async nextPath(): Promise<string> {
    await this.sweep();
    return join(this.options.dir, `place-${process.pid}-${++this.serial}.state`);
  }

  /**
   * Keeps a state just written. A saved place the new one extends or nearly repeats is replaced (it would
   * never be the better choice), then the oldest leave until the bounds hold.
   */
  async add(tokens: readonly number[], path: string, bytes: number): Promise<void> {
    const place: SavedPlace = { tokens: [...tokens], path, bytes, lastUsed: ++this.clock };
    for (let i = this.places.length - 1; i >= 0; i--) {
      const old = this.places[i]!;
      if (commonPrefix(old.tokens, tokens) >= old.tokens.length - 16) await this.drop(i);
    }
    this.places.push(place);
    while (this.places.length > 0 && (this.total() > this.options.maxBytes || this.places.length > this.options.maxPlaces)) {
      let oldest = 0;
      for (let i = 1; i < this.places.length; i++) if (this.places[i]!.lastUsed < this.places[oldest]!.lastUsed) oldest = i;
      await this.drop(oldest);
    }
  }

  touch(place: SavedPlace): void {
    place.lastUsed = ++this.clock;
  }

  get size(): number {
    return this.places.length;
  }

  total(): number {
    return this.places.reduce((n, p) => n + p.bytes, 0);
  }

  private async drop(i: number): Promise<void> {
    const [place] = this.places.splice(i, 1);
    if (place) await rm(place.path, { force: true });
  }

  /** Forgets every place and removes its file (the model unloads, or the engine closes). */
  async clear(): Promise<void> {
    while (this.places.length > 0) await this.drop(this.places.length - 1);
  }
}
