// The typing-through cache: a shown suggestion's rest is served as its first characters are typed,
// near its start from pre-filled keys and further in (a whole method body) from the recent ones.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CompletionCache } from '../../src/server/completionCache';

const FILE = 'src/Gateways.java';
const PREFIX = 'class Gateways {\n    static PaymentGateway create(String name, String apiKey) {\n        ';
const SUFFIX = '\n    }\n}\n';
const BODY =
  'Function<String, PaymentGateway> factory = REGISTRY.get(name);\n        if (factory == null) {\n            throw new IllegalArgumentException(name);\n        }\n        return factory.apply(apiKey);';

void describe('CompletionCache', () => {
  void test('every start of a long suggestion, past its first line, gives the rest of it', () => {
    const cache = new CompletionCache(1000);
    cache.put(FILE, PREFIX, SUFFIX, { text: BODY, traceId: 't1' });
    for (let k = 0; k < BODY.length; k++) {
      const hit = cache.get(FILE, PREFIX + BODY.slice(0, k), SUFFIX);
      assert.deepEqual(hit, { text: BODY.slice(k), traceId: 't1' }, `after ${k} characters typed`);
    }
    assert.equal(cache.get(FILE, PREFIX + BODY, SUFFIX), undefined, 'typed to its end: nothing left to suggest');
  });

  void test('typing something else, in another file or before another suffix, is a miss', () => {
    const cache = new CompletionCache(1000);
    cache.put(FILE, PREFIX, SUFFIX, { text: BODY, traceId: 't1' });
    const typed = BODY.slice(0, 70);
    assert.ok(cache.get(FILE, PREFIX + typed, SUFFIX));
    assert.equal(cache.get(FILE, PREFIX + typed.slice(0, -1) + 'X', SUFFIX), undefined, 'a different character');
    assert.equal(cache.get('src/Other.java', PREFIX + typed, SUFFIX), undefined, 'another file');
    assert.equal(cache.get(FILE, PREFIX + typed, '\n}\n'), undefined, 'another suffix');
    assert.equal(cache.get(FILE, 'x' + PREFIX + typed, SUFFIX), undefined, 'another text before the suggestion');
  });

  void test('clear and a capacity of 0 forget the suggestions', () => {
    const cache = new CompletionCache(1000);
    cache.put(FILE, PREFIX, SUFFIX, { text: BODY, traceId: 't1' });
    cache.clear();
    assert.equal(cache.get(FILE, PREFIX + BODY.slice(0, 70), SUFFIX), undefined);
    cache.put(FILE, PREFIX, SUFFIX, { text: BODY, traceId: 't1' });
    cache.resize(0);
    assert.equal(cache.get(FILE, PREFIX + BODY.slice(0, 70), SUFFIX), undefined);
  });
});
