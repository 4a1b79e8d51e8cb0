// Fault: the third credential corpus (test/fixtures/secrets-v3, written without sight of the rules or of
// the earlier rounds) must not reach a model server, wherever its text is: the file being completed
// (through the redaction boundary, and through the real language server at the file's end and in an empty
// function added to it, with the LLM reranker), and files that only retrieval reads (line and body mode;
// the LLM reranker and ProCC's union of similar code). Every case's plain canary arrives, so the case's
// text was really read. Both parts are held to every value (the held-out part was scored once before the
// next round developed on it).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { grammarsDir } from '../helpers/paths';
import { startOllamaTestServer } from '../helpers/ollamaServer';
import { loadSecretCorpusV2, scoreV2ThroughBoundary } from '../helpers/secretCorpus';
import { redactSecrets } from '../../src/engine/prompt/redact';
import { loadParsers } from '../../src/engine/kb/parsers';
import { leakedSecrets, measureOtherFiles, notRetrieved, otherFileFixture, type OtherFileFixture } from '../helpers/otherFileRepo';

const MODELS = { completion: 'qwen2.5-coder:1.5b-base', reranker: 'qwen3:8b' };
/** Completions whose case file retrieval may leave out (a share: which ones depends on ranking ties). */
const MAX_NOT_RETRIEVED = 0.1;

/** A held-out part through the redaction boundary, as the file being completed, against a capturing server. */
async function heldOutThroughBoundary(round: 'v3' | 'v4' | 'v5') {
  const server = await startOllamaTestServer(() => Promise.resolve({ text: 'x' }), { models: [MODELS.completion] });
  try {
    return await scoreV2ThroughBoundary(
      loadSecretCorpusV2('heldout', round),
      redactSecrets,
      server,
      MODELS.completion,
      new AbortController().signal,
    );
  } finally {
    await server.close();
  }
}

/** A held-out part placed as other files of a repository, line and body mode: the values sent, and the case files not retrieved. */
async function heldOutAsOtherFiles(round: 'v3' | 'v4' | 'v5') {
  const fx = await otherFileFixture(loadSecretCorpusV2('heldout', round), await loadParsers(grammarsDir), MODELS);
  try {
    const m = await measureOtherFiles(fx.root, fx.placed, fx.server, MODELS, 'line+body');
    return { leaked: leakedSecrets(m.sent, fx.placed), notRetrieved: notRetrieved(m.runs).length, runs: m.runs.length };
  } finally {
    await fx.close();
  }
}

void test('the file being completed (v3 dev): no credential reaches the capturing server through the boundary; canaries and look-alikes arrive', async () => {
  const server = await startOllamaTestServer(() => Promise.resolve({ text: 'x' }), { models: [MODELS.completion] });
  try {
    const cases = loadSecretCorpusV2('dev', 'v3');
    const score = await scoreV2ThroughBoundary(cases, redactSecrets, server, MODELS.completion, new AbortController().signal);
    assert.equal(server.requests.length, cases.length, 'one request per case');
    assert.ok(score.secrets >= 150 && score.negatives >= 60, `${score.secrets} credentials, ${score.negatives} look-alikes`);
    assert.deepEqual(score.missed, [], 'credentials that reached the server');
    assert.deepEqual(score.overRedacted, [], 'canaries or look-alikes that did not arrive intact');
  } finally {
    await server.close();
  }
});

void describe('the v3 dev corpus through the language server', () => {
  let fx: OtherFileFixture;

  before(async () => {
    fx = await otherFileFixture(loadSecretCorpusV2('dev', 'v3'), await loadParsers(grammarsDir), MODELS);
  });

  after(async () => {
    await fx?.close();
  });

  void test("as other files, line and body mode: no credential reaches the model server; each case file's canary does", async (t) => {
    const m = await measureOtherFiles(fx.root, fx.placed, fx.server, MODELS, 'line+body');
    assert.ok(
      m.runs.every((r) => r.requests > 0),
      'every completion asked the model',
    );
    assert.deepEqual(leakedSecrets(m.sent, fx.placed), [], 'credentials of other files sent to the model');
    const missing = notRetrieved(m.runs);
    t.diagnostic(`${m.requests.length} requests; case files not retrieved: ${missing.length}/${m.runs.length} ${missing.join(' ')}`);
    assert.ok(missing.length <= MAX_NOT_RETRIEVED * m.runs.length, `case files not retrieved: ${missing.join(', ')}`);
  });

  void test("as other files, the LLM reranker and ProCC's union of similar code: no credential reaches the model server", async () => {
    const m = await measureOtherFiles(fx.root, fx.placed, fx.server, MODELS, 'llm+union');
    assert.ok(
      m.requests.some((q) => q.path === '/api/chat'),
      'the LLM reranker was asked',
    );
    assert.deepEqual(leakedSecrets(m.sent, fx.placed), [], 'credentials of other files sent to the model');
    const missing = notRetrieved(m.runs);
    assert.ok(missing.length <= MAX_NOT_RETRIEVED * m.runs.length, `case files not retrieved: ${missing.join(', ')}`);
  });

  void test('as the file being edited, at its end and in an empty function (body sketch), with the LLM reranker: no credential reaches the model server', async () => {
    const m = await measureOtherFiles(fx.root, fx.placed, fx.server, MODELS, 'self');
    assert.ok(
      m.requests.some((q) => q.path === '/api/chat'),
      'the LLM reranker was asked',
    );
    const body = m.runs.filter((r) => r.mode === 'self-body');
    assert.ok(
      body.filter((r) => r.requests >= 2).length >= 0.9 * body.length,
      `body mode sends a sketch and a body: ${body.map((r) => r.requests).join(',')}`,
    );
    assert.deepEqual(leakedSecrets(m.sent, fx.placed), [], 'credentials of the edited file sent to the model');
    assert.deepEqual(
      m.runs.filter((r) => !r.canary).map((r) => `${r.mode}:${r.p.c.id}`),
      [],
      'the canary of the edited file reaches a request',
    );
  });
});

// The part held out of the third round was scored once, at 83% (docs/BENCHMARKS.md "Trust round: forms nobody listed"); the next
// round developed on it (its held-out part is test/fixtures/secrets-v4), so it is now held to every value, as the dev part is.
void test("the third round's held-out part, developed on since it was scored: no credential reaches the server, canaries and look-alikes arrive", async () => {
  const score = await heldOutThroughBoundary('v3');
  assert.ok(score.secrets >= 100, `${score.secrets} credentials`);
  assert.deepEqual(score.missed, [], 'credentials that reached the server');
  assert.deepEqual(score.overRedacted, [], 'canaries or look-alikes that did not arrive intact');
});

void test('the held-out part (v3) as other files, line and body mode: no credential reaches the model server', async () => {
  const m = await heldOutAsOtherFiles('v3');
  assert.deepEqual(m.leaked, [], 'credentials of other files sent to the model');
  assert.ok(m.notRetrieved <= MAX_NOT_RETRIEVED * m.runs, 'case files retrieved');
});

// The fourth round's held-out part (test/fixtures/secrets-v4) was scored once, at 86.2% (docs/BENCHMARKS.md "Trust round: forms
// nobody listed"); the round after developed on it, so it is held to every value.
void test("the fourth round's held-out part, developed on since it was scored: no credential reaches the server, canaries and look-alikes arrive", async () => {
  const score = await heldOutThroughBoundary('v4');
  assert.equal(score.secrets, 116);
  assert.deepEqual(score.missed, [], 'credentials that reached the server');
  assert.deepEqual(score.overRedacted, [], 'canaries or look-alikes that did not arrive intact');
});

void test('the held-out part (v4) as other files, line and body mode: no credential reaches the model server', async () => {
  const m = await heldOutAsOtherFiles('v4');
  assert.deepEqual(m.leaked, [], 'credentials of other files sent to the model');
  assert.ok(m.notRetrieved <= MAX_NOT_RETRIEVED * m.runs, 'case files retrieved');
});

// The fifth round's held-out part (test/fixtures/secrets-v5), scored once on the finished rules (docs/BENCHMARKS.md "Trust round:
// forms nobody listed"): the floors are what it scored then, so that a change that loses ground on it fails. Its failures are not
// read to write rules.
void test('the held-out part (v5): in the file being completed at least 105 of 117 credential values are kept from the server, at most 3 look-alikes lost, every canary arrives', async () => {
  const score = await heldOutThroughBoundary('v5');
  assert.equal(score.secrets, 117);
  assert.ok(score.secrets - score.missed.length >= 105, `kept ${score.secrets - score.missed.length}`);
  assert.ok(Math.round(score.falsePositiveRate * score.negatives) <= 3, `look-alikes lost: ${score.overRedacted.join(', ')}`);
  assert.equal(score.canaryLossRate, 0, 'canaries lost');
});

// As other files it scored 2 of 117 (a char array a snippet cut short, a byte list); other files mask both since, so this part is
// held to none there (no longer a held-out figure).
void test('the held-out part (v5) as other files, line and body mode: no credential reaches the model server', async () => {
  const m = await heldOutAsOtherFiles('v5');
  assert.deepEqual(m.leaked, [], 'credentials of other files sent to the model');
  assert.ok(m.notRetrieved <= MAX_NOT_RETRIEVED * m.runs, 'case files retrieved');
});
