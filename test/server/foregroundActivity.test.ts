// Background embedding gives way to completion requests: the dense path's background run awaits
// ForegroundActivity.yield() between small chunks, pauses while a request is served and resumes
// after it; a request that retrieves meanwhile is answered from the vectors already there.
import test from 'node:test';
import assert from 'node:assert/strict';
import { DenseRetriever, type DenseEncoder } from '../../src/engine/retrieve/dense/denseRetrieve';
import { CancellationError } from '../../src/engine/util/errors';
import { ForegroundActivity } from '../../src/server/ForegroundActivity';
import { bagOfWordsEncoder, fixtureKb } from '../engine/retrieve/retrieveFixtures';

const recordingEncoder = (): ReturnType<typeof bagOfWordsEncoder> => bagOfWordsEncoder('bow-pace');

void test('yield() returns at once when idle, waits while a request runs, and ends on abort', async () => {
  const fg = new ForegroundActivity();
  await fg.yield();
  assert.equal(fg.pauses, 0);
  const request = fg.begin();
  let resumed = false;
  const waiting = fg.yield().then(() => (resumed = true));
  // Wait until the yield has seen the request (however loaded the machine is), then a little more.
  for (let waited = 0; fg.pauses === 0 && waited < 10_000; waited += 5) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(resumed, false);
  request.dispose();
  request.dispose(); // idempotent
  await waiting;
  assert.equal(resumed, true);
  assert.equal(fg.pauses, 1);
  assert.equal(fg.busy, false);
  const again = fg.begin();
  const controller = new AbortController();
  const aborted = fg.yield(controller.signal);
  controller.abort();
  await assert.rejects(aborted, CancellationError);
  again.dispose();
});

void test('background embedding: small chunks, paused while a request runs, resumed after; a retrieve meanwhile is not blocked', async () => {
  const kb = await fixtureKb('pyshop');
  const encoder = recordingEncoder();
  const fg = new ForegroundActivity();
  const dense = new DenseRetriever(kb, encoder, { chunkSize: 16, chunkChars: 512, pace: (s) => fg.yield(s) });
  try {
    // A request is being served when the background run starts: nothing is embedded until it ends.
    const request = fg.begin();
    const run = dense.prepare(new AbortController().signal);
    // Wait until the run reaches its first chunk and pauses there (however loaded the machine is).
    for (let waited = 0; fg.pauses === 0 && waited < 10_000; waited += 5) await new Promise((r) => setTimeout(r, 5));
    assert.equal(fg.pauses, 1, 'the background run paused for the request');
    assert.equal(encoder.calls.length, 0, 'no chunk embedded while the request runs');
    // The request retrieves meanwhile (the paced run waits for it): answered, not deadlocked.
    const answer = await dense.retrieve(
      { file: { path: 'app/main.py', lang: 'python', prefix: '' }, query: { strategy: 'last3', text: 'make_gateway', spans: [] }, topJ: 5 },
      new AbortController().signal,
    );
    assert.ok(
      answer.notes?.some((n) => /background/.test(n)),
      JSON.stringify(answer.notes),
    );
    request.dispose();
    await run;
    assert.ok(fg.pauses >= 1);
    // Every chunk within the character budget (a single longer item may stand alone).
    for (const call of encoder.calls) {
      const chars = call.reduce((n, t) => n + Math.min(t.length, 1024), 0);
      assert.ok(call.length === 1 || chars <= 512, `chunk of ${call.length} texts, ${chars} chars`);
      assert.ok(call.length <= 16);
    }
    assert.ok(encoder.calls.length > 2);
    const after = await dense.retrieve(
      {
        file: { path: 'app/main.py', lang: 'python', prefix: '' },
        query: { strategy: 'last3', text: 'def make_gateway(name, api_key)', spans: [] },
        topJ: 5,
      },
      new AbortController().signal,
    );
    assert.ok(after.results.some((r) => r.snippet.name === 'make_gateway'));
  } finally {
    dense.dispose();
  }
});
