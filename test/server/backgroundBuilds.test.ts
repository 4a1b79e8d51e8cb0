// The status says where each folder's background builds stand, as the status bar's tooltip shows
// them: dense retrieval's embeddings and ProCC's code windows are building, then ready with their
// counts; an embedding run that fails says failed with its reason (and the windows, which need its
// vectors, off); without a code encoder both are off. In-process: a WorkspaceIndexer with its
// status reporter, real tree-sitter and the shipped code encoder on the pyshop fixture.
import test from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { loadParsers } from '../../src/engine/kb/parsers';
import { ModelRegistry } from '../../src/engine/models';
import type { Encoder } from '../../src/engine/models/types';
import type { DenseEncoder } from '../../src/engine/retrieve/dense/denseRetrieve';
import { createRepositoryIndex } from '../../src/engine/index/repositoryIndex';
import type { FolderIndexSummary } from '../../src/protocol/protocol';
import { mergeConfig } from '../../src/server/config';
import { StatusReporter } from '../../src/server/StatusReporter';
import { Trust } from '../../src/server/trust';
import { folderFromPath, WorkspaceIndexer } from '../../src/server/WorkspaceIndexer';
import { statusBarView } from '../../src/client/statusBar';
import { copyFixture, grammarsDir, repoRoot, tempDir } from '../helpers/paths';

const registry = new ModelRegistry({ modelsDir: join(repoRoot, 'models'), threads: 2 });
let encoderPromise: Promise<Encoder> | undefined;
const encoder = (): Promise<Encoder> => (encoderPromise ??= registry.encoder(undefined, new AbortController().signal));

/** Index pyshop with the given encoder (none: no dense path) and similar code asked for; returns the status reporter and the indexer. */
async function indexPyshop(
  dense: DenseEncoder | undefined,
): Promise<{ status: StatusReporter; indexer: WorkspaceIndexer; close: () => Promise<void> }> {
  const repo = copyFixture('pyshop');
  const cache = tempDir('coderag-builds-');
  const parsers = await loadParsers(grammarsDir);
  const status = new StatusReporter();
  const indexer = new WorkspaceIndexer(
    {
      parsers: () => Promise.resolve(parsers),
      cacheRoot: () => cache.path,
      retrievers: (kb, p, context) =>
        Promise.resolve(
          createRepositoryIndex(kb, p, {
            paths: ['sparse', 'dense'],
            ...(dense
              ? {
                  dense: { encoder: dense, indexFolder: context.indexFolder },
                  similar: { encoder: dense, indexFolder: context.indexFolder },
                }
              : {}),
          }),
        ),
    },
    status,
    new Trust(),
  );
  indexer.updateConfig(mergeConfig({ similar: { mode: 'lexical' } }).config);
  indexer.setWorkspaceFolders([folderFromPath(repo.path)]);
  await indexer.rebuild(undefined, false, undefined, new AbortController().signal);
  return {
    status,
    indexer,
    close: async () => {
      await indexer.shutdown();
      status.dispose();
      repo.cleanup();
      cache.cleanup();
    },
  };
}

/** The folder's summary once `done` holds for it (the builds run in the background after indexing). */
async function folderWhen(
  status: StatusReporter,
  done: (f: FolderIndexSummary) => boolean,
  timeoutMs = 120_000,
): Promise<FolderIndexSummary> {
  const start = performance.now();
  for (;;) {
    const f = status.current.folders[0];
    if (f && done(f)) return f;
    if (performance.now() - start > timeoutMs)
      throw new Error(`no such status in ${timeoutMs} ms: ${JSON.stringify(status.current.folders)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

void test('the embeddings and the code windows: building after indexing, then ready with their counts; the tooltip says so', async () => {
  const enc = await encoder();
  const run = await indexPyshop(enc);
  try {
    const indexed = run.status.current.folders[0];
    assert.equal(indexed?.state, 'ready');
    assert.equal(indexed.dense?.state, 'building', JSON.stringify(indexed));
    assert.equal(indexed.similar?.state, 'building', JSON.stringify(indexed));
    const ready = await folderWhen(run.status, (f) => f.similar?.state !== 'building');
    assert.equal(ready.dense?.state, 'ready', JSON.stringify(ready));
    assert.equal(ready.similar?.state, 'ready', JSON.stringify(ready));
    assert.ok(ready.dense.items > 0 && ready.dense.items <= (ready.items ?? 0), JSON.stringify(ready));
    assert.ok(ready.similar.windows > 0, JSON.stringify(ready));
    const tooltip = statusBarView(run.status.snapshot(), true).tooltip;
    assert.match(tooltip, new RegExp(`Dense retrieval: ready \\(${ready.dense.items.toLocaleString('en-US')} items\\)`));
    assert.match(tooltip, new RegExp(`Similar code: ready \\(${ready.similar.windows} code windows\\)`));
    // Turning similar code off shows it off at once.
    run.indexer.updateConfig(mergeConfig({ similar: { mode: 'off' } }).config);
    assert.deepEqual(run.status.current.folders[0]?.similar, { state: 'off', windows: 0, message: 'coderag.similar.mode is off' });
  } finally {
    await run.close();
  }
});

void test('an embedding run that fails: dense retrieval failed with the reason, the code windows off', async () => {
  const enc = await encoder();
  const failing: DenseEncoder = {
    name: enc.name,
    dim: enc.dim,
    embed: (texts, signal) => enc.embed(texts, signal),
    embedItems: () => Promise.reject(new Error('ENOSPC: no space left on device')),
  };
  const run = await indexPyshop(failing);
  try {
    const ended = await folderWhen(run.status, (f) => f.dense?.state !== 'building');
    assert.equal(ended.dense?.state, 'failed', JSON.stringify(ended));
    assert.match(ended.dense.message ?? '', /no space left on device/);
    assert.deepEqual(ended.similar, { state: 'off', windows: 0, message: 'dense retrieval failed' });
    assert.match(statusBarView(run.status.snapshot(), true).tooltip, /Dense retrieval: failed: .*no space left on device/);
  } finally {
    await run.close();
  }
});

void test('no code encoder: dense retrieval and similar code are off, and say why', async () => {
  const run = await indexPyshop(undefined);
  try {
    const f = run.status.current.folders[0];
    assert.deepEqual(f?.dense, { state: 'off', items: 0, message: 'the code encoder did not load' });
    assert.deepEqual(f.similar, { state: 'off', windows: 0, message: 'the code encoder did not load' });
  } finally {
    await run.close();
  }
});
