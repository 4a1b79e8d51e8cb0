// The language server with `coderag.experimental.check.mode: constrain` and the embedded model: the cursor
// right after `cart.` (a Cart the repository types) gets a suggestion starting with a real member
// of Cart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { copyFixture } from '../helpers/paths';
import { startLsp } from './lspHarness';

const CART_MEMBERS = [
  'max_items',
  'owner',
  'currency',
  'lines',
  '_discount',
  'add',
  'apply_discount',
  'discount_applied',
  'total',
  'empty',
  'for_guest',
  'guest_carts',
  'Line',
];

void test('checked completion over LSP: after cart. the suggestion starts with a member of Cart', async () => {
  const repo = copyFixture('pyshop');
  const lsp = await startLsp(repo.path, {
    model: { provider: 'embedded' },
    rerank: { kind: 'none' },
    experimental: { model: { maxNewTokens: 8 }, query: { strategy: 'last10' }, check: { mode: 'constrain' } },
  });
  try {
    await lsp.waitForStatus((s) => s.folders.length > 0 && s.folders.every((f) => f.state === 'ready'));
    const path = join(repo.path, 'app', 'main.py');
    const lines = readFileSync(path, 'utf8').split('\n');
    // Line 19 (0-based 18) becomes `    cart.`, right after `cart = build_demo_cart("ann")`.
    const text = [...lines.slice(0, 18), '    cart.', ...lines.slice(18)].join('\n');
    const uri = lsp.open(path, 'python', text);
    const items = await lsp.complete(uri, 18, '    cart.'.length);
    const shown = typeof items[0]?.insertText === 'string' ? items[0].insertText : '';
    const first = /^[\w]*/.exec(shown)?.[0] ?? '';
    assert.ok(CART_MEMBERS.includes(first), `"${shown}" does not start with a member of Cart`);
  } finally {
    await lsp.close();
    repo.cleanup();
  }
});
