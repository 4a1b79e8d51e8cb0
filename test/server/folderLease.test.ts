// A folder's readiness lease: taken while the folder is ready it holds until the folder indexes again
// (a rebuild), fails, is rebuilt from scratch or closes; once the folder is ready again a new lease is
// live. In-process: the real WorkspaceIndexer with real tree-sitter over a copy of the pyshop fixture.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FolderIndex } from '../../src/server/FolderIndex';
import { startIndexer, type IndexerSession } from '../faults/indexerHelpers';
import { copyFixture, tempDir } from '../helpers/paths';

void describe("a folder's readiness lease", () => {
  const repo = copyFixture('pyshop');
  const cache = tempDir('coderag-lease-');
  const fileUri = pathToFileURL(join(repo.path, 'app', 'main.py')).toString();
  let session: IndexerSession;

  const folder = (): FolderIndex => {
    const hit = session.indexer.folderFor(fileUri);
    assert.ok(hit, 'the file is in an indexed folder');
    return hit.folder;
  };
  const rebuild = (full: boolean): Promise<unknown> => session.indexer.rebuild(undefined, full, undefined, new AbortController().signal);

  before(async () => {
    session = await startIndexer(cache.path, {});
    const [summary] = await session.index([repo.path]);
    assert.equal(summary?.state, 'ready');
  });

  after(async () => {
    await session.close();
    repo.cleanup();
    cache.cleanup();
  });

  void test('a lease taken while ready ends when the folder indexes again; the next one is live once it is ready', async () => {
    const index = folder();
    const lease = index.lease;
    assert.equal(lease.aborted, false, 'a ready folder lends a live lease');
    let stateAtEnd: string | undefined;
    lease.addEventListener('abort', () => (stateAtEnd = index.state));

    await rebuild(false);

    assert.equal(folder(), index, 'the same folder was indexed again');
    assert.equal(stateAtEnd, 'indexing', 'the lease ended as the folder left ready for indexing');
    assert.equal(lease.aborted, true);
    const next = index.lease;
    assert.equal(index.state, 'ready');
    assert.equal(next.aborted, false, 'ready again: a new lease is live');
    assert.notEqual(next, lease);
  });

  void test('a full rebuild closes the folder: its lease ends and the new folder lends a live one', async () => {
    const index = folder();
    const lease = index.lease;
    assert.equal(lease.aborted, false);

    await rebuild(true);

    assert.equal(lease.aborted, true, 'the closed folder lease ended');
    assert.equal(index.lease.aborted, true, 'a closed folder lends no live lease');
    const rebuilt = folder();
    assert.notEqual(rebuilt, index, 'a full rebuild opens the folder anew');
    assert.equal(rebuilt.state, 'ready');
    assert.equal(rebuilt.lease.aborted, false);
  });

  void test('shutting the indexer down ends the lease', async () => {
    const lease = folder().lease;
    assert.equal(lease.aborted, false);
    await session.indexer.shutdown();
    assert.equal(lease.aborted, true);
  });
});
