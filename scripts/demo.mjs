// `npm run demo`: the main job on the embedded defaults (no model server needed).
// Indexes the Python fixture repository and shows what the knowledge base holds for one name.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const cli = join(root, 'bin', 'coderag.js');
const repo = join(root, 'test', 'fixtures', 'pyshop');
const indexDir = join(root, '.tmp', 'demo-index');

function run(args) {
  console.log(`\n$ coderag ${args.join(' ')}`);
  const r = spawnSync(process.execPath, [cli, ...args], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

run(['index', repo, '--index-dir', indexDir]);
run(['kb', repo, '--name', process.argv[2] ?? 'Cart', '--index-dir', indexDir]);
