// Makes the real engine ready on a fresh clone: bench/engine's own install (node-llama-cpp and its
// prebuilt Linux x64 CPU binaries only) and the shipped LM exported to GGUF in bench/engine/.cache.
// Usage: node --import tsx bench/engine/prepare.ts   (tests call ensureEngine() themselves)
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const INSTALL_COMMAND = 'npm ci --prefix bench/engine --omit=optional';

/** bench/engine installed (running INSTALL_COMMAND once when it is not); throws saying how to install it otherwise. */
export function ensureEngineInstalled(): void {
  const installed = (): boolean => existsSync(join(__dirname, 'node_modules', 'node-llama-cpp', 'package.json'));
  if (installed()) return;
  process.stderr.write(`engine: bench/engine is not installed; running \`${INSTALL_COMMAND}\` once (about 30 s)\n`);
  const run = spawnSync('npm', ['ci', '--prefix', __dirname, '--omit=optional', '--no-audit', '--no-fund'], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (run.status !== 0 || !installed())
    throw new Error(
      `the real engine (node-llama-cpp in bench/engine) is missing and \`${INSTALL_COMMAND}\` failed (exit ${run.status}); run it by hand`,
    );
}

/** The engine installed and the shipped LM's GGUF made; resolves to the GGUF's path. */
export async function ensureEngine(): Promise<string> {
  ensureEngineInstalled();
  // Loaded only now: models.ts needs bench/engine's own packages.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const models = require('./models') as { shippedLmGguf(): Promise<string> };
  return models.shippedLmGguf();
}

if (require.main === module) {
  ensureEngine().then(
    (file) => console.log(`engine ready: ${file}`),
    (e: unknown) => {
      console.error(e instanceof Error ? e.message : e);
      process.exit(1);
    },
  );
}
