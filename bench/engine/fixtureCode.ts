// Prompt text for engine benchmarks: the Python and Java sources of the repository's test fixtures.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The fixtures' Python and Java files under `root`/test/fixtures, in path order, joined; enough for any prompt here. */
export function fixtureCode(root: string): string {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.py') || name.endsWith('.java')) files.push(readFileSync(p, 'utf8'));
    }
  };
  walk(join(root, 'test', 'fixtures'));
  return files.join('\n');
}
