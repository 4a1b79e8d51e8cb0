// `npm run demo`: the main job on the embedded defaults (no model server needed).
// Indexes the Python fixture repository, shows what the knowledge base holds for one name, then
// runs one completion at a marked cursor through the whole CodeRAG pipeline (probing query,
// sparse + dataflow retrieval, prompt, the embedded model, postprocessing) and prints it with its trace.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const cli = join(root, 'bin', 'coderag.js');
const fixture = join(root, 'test', 'fixtures', 'pyshop');
const indexDir = join(root, '.tmp', 'demo-index');
const CURSOR = '\u2038';

// The file being written: the cursor needs CheckoutService's constructor from another file.
const marked = `"""Demo: a checkout helper written against the package's own API."""
from pyshop.models import Cart, Product
from pyshop.payments import make_gateway
from pyshop.services import CheckoutService


def checkout_for(owner: str) -> str:
    cart = Cart(owner)
    cart.add(Product("sku-9", "Tea", 4.5), quantity=3)
    gateway = make_gateway("stripe", api_key="demo")
    service = CheckoutService(${CURSOR}
`;

function run(args, { allowFail = false } = {}) {
  console.log(`\n$ coderag ${args.join(' ')}`);
  const r = spawnSync(process.execPath, [cli, ...args], { stdio: 'inherit' });
  if (r.status !== 0 && !allowFail) process.exit(r.status ?? 1);
  return r.status ?? 1;
}

run(['index', fixture, '--index-dir', indexDir]);
run(['kb', fixture, '--name', process.argv[2] ?? 'CheckoutService.__init__', '--index-dir', indexDir]);

// A working copy of the fixture with the marked file written into it (the cursor marker removed).
const repo = join(root, '.tmp', 'demo-repo');
rmSync(repo, { recursive: true, force: true });
mkdirSync(join(root, '.tmp'), { recursive: true });
cpSync(fixture, repo, { recursive: true });
const offset = marked.indexOf(CURSOR);
const before = marked.slice(0, offset);
const line = before.split('\n').length;
const column = before.length - before.lastIndexOf('\n');
writeFileSync(join(repo, 'app', 'demo_checkout.py'), before + marked.slice(offset + CURSOR.length));
console.log(`\nCompleting app/demo_checkout.py at line ${line}, column ${column}:\n${before.split('\n').slice(-3).join('\n')}${CURSOR}`);
const status = run(['complete', repo, `app/demo_checkout.py:${line}:${column}`, '--index-dir', indexDir], { allowFail: true });
if (status !== 0) console.log('\n(The embedded model gave no usable completion here; the trace above shows each stage.)');
