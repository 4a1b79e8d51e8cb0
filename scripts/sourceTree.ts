// The Python and Java source files under a folder, for the measuring scripts.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Absolute paths of the .py and .java files under `dir`, sorted. */
export function sourcePaths(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourcePaths(p));
    else if (/\.(java|py)$/.test(name)) out.push(p);
  }
  return out.sort();
}
