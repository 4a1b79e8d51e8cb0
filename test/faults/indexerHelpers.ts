// The server's indexing lifecycle in-process: a WorkspaceIndexer with its status reporter, real
// tree-sitter and a sparse retrieval path, configured from `coderag.*` settings.
import { loadParsers, type Parsers } from '../../src/engine/kb/parsers';
import { createRepositoryIndex } from '../../src/engine/index/repositoryIndex';
import type { FolderIndexSummary } from '../../src/protocol/protocol';
import { mergeConfig } from '../../src/server/config';
import { StatusReporter } from '../../src/server/StatusReporter';
import { Trust } from '../../src/server/trust';
import { folderFromPath, WorkspaceIndexer } from '../../src/server/WorkspaceIndexer';
import { grammarsDir } from '../helpers/paths';

let parsersPromise: Promise<Parsers> | undefined;
const parsers = (): Promise<Parsers> => (parsersPromise ??= loadParsers(grammarsDir));

export interface IndexerSession {
  indexer: WorkspaceIndexer;
  status: StatusReporter;
  /** Index these folders (as at startup) and wait until done. */
  index(folders: string[]): Promise<FolderIndexSummary[]>;
  /** Apply new settings, as a didChangeConfiguration does, and wait for what they start. */
  configure(settings: unknown): Promise<void>;
  close(): Promise<void>;
}

export async function startIndexer(cacheRoot: string, settings: unknown): Promise<IndexerSession> {
  const p = await parsers();
  const status = new StatusReporter();
  const indexer = new WorkspaceIndexer(
    {
      parsers: parsers,
      cacheRoot: () => cacheRoot,
      retrievers: (kb) => Promise.resolve(createRepositoryIndex(kb, p, { paths: ['sparse'] })),
    },
    status,
    new Trust(),
  );
  indexer.updateConfig(mergeConfig(settings).config);
  return {
    indexer,
    status,
    async index(folders) {
      indexer.setWorkspaceFolders(folders.map(folderFromPath));
      return (await indexer.rebuild(undefined, false, undefined, new AbortController().signal)).folders;
    },
    async configure(next) {
      indexer.updateConfig(mergeConfig(next).config);
      await indexer.whenIdle();
    },
    async close() {
      await indexer.shutdown();
      status.dispose();
    },
  };
}
