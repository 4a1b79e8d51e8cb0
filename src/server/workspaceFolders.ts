// Workspace folders as the client names them (URIs), and the local folders CodeRAG can index:
// each folder is judged on its own, so one it cannot index never stops the others.
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { InitializeParams, WorkspaceFolder } from 'vscode-languageserver/node';

/** The folders of an initialize request: its workspace folders, else its root (an older client). */
export function initialWorkspaceFolders(params: Pick<InitializeParams, 'workspaceFolders' | 'rootUri' | 'rootPath'>): WorkspaceFolder[] {
  if (params.workspaceFolders) return params.workspaceFolders;
  const name = (uri: string): string => decodeURIComponent(uri.replace(/\/+$/, '').split('/').pop() ?? '') || uri;
  if (params.rootUri) return [{ uri: params.rootUri, name: name(params.rootUri) }];
  if (params.rootPath) {
    const uri = pathToFileURL(params.rootPath).toString();
    return [{ uri, name: name(uri) }];
  }
  return [];
}

/**
 * The local path of a workspace folder, or why it has none: a URI of another scheme (a virtual or
 * remote file system), a file URI naming another host (outside Windows, where it is a UNC path),
 * or one that does not parse.
 */
export function localFolderPath(folder: WorkspaceFolder): { path: string } | { problem: string } {
  let url: URL;
  try {
    url = new URL(folder.uri);
  } catch {
    return { problem: `${folder.name} (${folder.uri}) is not a valid folder URI: not indexed` };
  }
  if (url.protocol !== 'file:')
    return {
      problem:
        `${folder.name} (${folder.uri}) is not a folder on this machine (${url.protocol} URI): not indexed; ` +
        `CodeRAG indexes local folders only`,
    };
  try {
    return { path: fileURLToPath(url) };
  } catch {
    if (url.host !== '' && url.host !== 'localhost')
      return {
        problem: `${folder.name} (${folder.uri}) is on another host (${url.host}): not indexed; CodeRAG indexes local folders only`,
      };
    return { problem: `${folder.name} (${folder.uri}) does not name a local path: not indexed` };
  }
}
