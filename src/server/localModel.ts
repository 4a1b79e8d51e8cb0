// The GGUF model the `local` provider runs when coderag.local.modelPath is empty: the newest
// complete file downloaded into the models folder (a download in progress ends in `.part`).
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** The newest `.gguf` file in `dir`, or undefined when there is none (or no folder). */
export async function downloadedModel(dir: string): Promise<string | undefined> {
  const names = await readdir(dir).catch(() => [] as string[]);
  let best: { path: string; mtime: number } | undefined;
  for (const name of names) {
    if (!name.toLowerCase().endsWith('.gguf')) continue;
    const path = join(dir, name);
    const s = await stat(path).catch(() => undefined);
    if (s?.isFile() && s.size > 0 && (!best || s.mtimeMs > best.mtime)) best = { path, mtime: s.mtimeMs };
  }
  return best?.path;
}
