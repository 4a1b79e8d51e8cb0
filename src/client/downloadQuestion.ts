// The consent question before the local model's download: what it fetches, from where, how much,
// and where it goes. Pure and free of `vscode`, so the tests check the words a user reads.
import type { LocalModelDownloadInfo } from '../protocol/protocol';

/** Sizes as a download dialog shows them: `1.6 GB`, `512 MB`, `0.5 MB`. */
export function sizeWords(bytes: number): string {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(1)} GB`;
  if (bytes >= 1e7) return `${Math.round(bytes / 1e6)} MB`;
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/** The modal's message and detail for a download the server said it can make. */
export function downloadQuestion(info: LocalModelDownloadInfo): { message: string; detail: string } {
  const size = info.totalBytes !== undefined ? sizeWords(info.totalBytes) : 'a file of unknown size';
  return {
    message: `Download ${size} from ${info.host ?? 'the configured host'} into VS Code's storage?`,
    detail:
      `${info.fileName ?? 'The model file'} (coderag.local.downloadUrl) is downloaded once and used only if its SHA-256 matches ` +
      `coderag.local.downloadSha256. It stays in this extension's storage until you uninstall it; a cancelled download resumes ` +
      `where it stopped.`,
  };
}
