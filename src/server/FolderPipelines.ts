// The completion pipelines of the server: one per workspace folder (and one for
// files outside every folder), built on the folder's first request and kept; built again when the
// folder's readiness changes (ready: the repository's stages and the auto mode; else line mode
// without retrieval) and, all of them, when the settings change.
import type { Pipeline } from '../engine/pipeline';

export class FolderPipelines<F extends object & { state: string }> {
  private byFolder = new WeakMap<F, { ready: boolean; pipeline: Pipeline }>();
  private outside: Pipeline | undefined;
  /** Pipelines built so far (the status and tests read it). */
  built = 0;

  constructor(private readonly build: (folder: F | undefined, ready: boolean) => Pipeline) {}

  /** The pipeline for a request in `folder` (undefined: a file outside every workspace folder). */
  for(folder: F | undefined): Pipeline {
    if (!folder) return (this.outside ??= this.make(undefined, false));
    const ready = folder.state === 'ready';
    const kept = this.byFolder.get(folder);
    if (kept && kept.ready === ready) return kept.pipeline;
    const pipeline = this.make(folder, ready);
    this.byFolder.set(folder, { ready, pipeline });
    return pipeline;
  }

  /** Forget every pipeline (the settings changed): each is built again on its folder's next request. */
  clear(): void {
    this.byFolder = new WeakMap();
    this.outside = undefined;
  }

  private make(folder: F | undefined, ready: boolean): Pipeline {
    this.built++;
    return this.build(folder, ready);
  }
}
