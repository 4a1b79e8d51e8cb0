// What the client sends of the settings: of the experimental subtree, only the values a person set
// (VS Code fills every contributed key with its default, which would hide an old name's value).
import test from 'node:test';
import assert from 'node:assert/strict';
import { explicitOnly } from '../../src/client/settings';

void test('explicitOnly keeps the leaves a person set, as a tree, and nothing when none is set', () => {
  const tree = { rerank: { topU: 10, timeoutMs: 900 }, prompt: { budgetTokens: 2048 }, cache: { size: 1000 } };
  const set = new Set(['experimental.rerank.timeoutMs', 'experimental.cache.size']);
  assert.deepEqual(explicitOnly(tree, 'experimental', (k) => set.has(k)), { rerank: { timeoutMs: 900 }, cache: { size: 1000 } });
  assert.equal(explicitOnly(tree, 'experimental', () => false), undefined);
  assert.equal(explicitOnly(undefined, 'experimental', () => true), undefined);
});
