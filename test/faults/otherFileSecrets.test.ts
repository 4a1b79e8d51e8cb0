// Fault: a credential in a file that only retrieval reads (never the file being completed) must not
// reach a model server. Every case of the v2 dev corpus is placed as another file of a repository,
// beside a plain canary in the same file; through the real language server, completions of files
// that use the case's names (line mode, body mode in an empty method; then the LLM reranker and
// ProCC's union of similar code) go to a capturing Ollama-compatible server. No credential of any
// case, nor an escape-decoded form or a 12-character piece of a long one, is in any request, while
// each case's canary is (so the case's file was really read).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { grammarsDir } from '../helpers/paths';
import { loadSecretCorpusV2 } from '../helpers/secretCorpus';
import { loadParsers } from '../../src/engine/kb/parsers';
import { leakedSecrets, measureOtherFiles, notRetrieved, otherFileFixture, type OtherFileFixture } from '../helpers/otherFileRepo';

const MODELS = { completion: 'qwen2.5-coder:1.5b-base', reranker: 'qwen3:8b' };
/** Cases whose file retrieval may leave out (a share, not a list: which ones depends on ranking ties). */
const MAX_NOT_RETRIEVED = 0.1;

void describe('credentials in files only retrieval reads (v2 dev corpus)', () => {
  let fx: OtherFileFixture;

  before(async () => {
    fx = await otherFileFixture(loadSecretCorpusV2('dev'), await loadParsers(grammarsDir), MODELS);
  });

  after(async () => {
    await fx?.close();
  });

  void test("line and body mode: no credential of another file reaches the model server; each case file's canary does", async (t) => {
    const m = await measureOtherFiles(fx.root, fx.placed, fx.server, MODELS, 'line+body');
    assert.ok(
      m.runs.every((r) => r.requests > 0),
      'every completion asked the model',
    );
    const body = m.runs.filter((r) => r.mode === 'body');
    assert.ok(
      body.every((r) => r.requests >= 2),
      `body mode sends a sketch and a body: ${body.map((r) => r.requests).join(',')}`,
    );
    assert.deepEqual(leakedSecrets(m.sent, fx.placed), [], 'credentials of other files sent to the model');
    const missing = notRetrieved(m.runs);
    t.diagnostic(
      `${m.requests.length} requests; case files not retrieved: ${missing.length}/${m.runs.length} ${missing.join(' ')}; canary in a completion request: ${m.runs.filter((r) => r.canaryInCompletion).length}/${m.runs.length}`,
    );
    assert.ok(
      missing.length <= MAX_NOT_RETRIEVED * m.runs.length,
      `case files not retrieved (${missing.length}/${m.runs.length}): ${missing.join(', ')}`,
    );
  });

  void test("the LLM reranker and ProCC's union of similar code: no credential of another file reaches the model server", async (t) => {
    const m = await measureOtherFiles(fx.root, fx.placed, fx.server, MODELS, 'llm+union');
    assert.ok(
      m.requests.some((q) => q.path === '/api/chat'),
      'the LLM reranker was asked',
    );
    assert.deepEqual(leakedSecrets(m.sent, fx.placed), [], 'credentials of other files sent to the model');
    const missing = notRetrieved(m.runs);
    t.diagnostic(
      `${m.requests.length} requests; case files not retrieved: ${missing.length}/${m.runs.length} ${missing.join(' ')}; canary in a completion request: ${m.runs.filter((r) => r.canaryInCompletion).length}/${m.runs.length}`,
    );
    assert.ok(
      missing.length <= MAX_NOT_RETRIEVED * m.runs.length,
      `case files not retrieved (${missing.length}/${m.runs.length}): ${missing.join(', ')}`,
    );
  });
});
