// Learning from what the user accepts (ProCC's bandit and the show gate): one LinUCB
// bandit per workspace folder chooses the similar-code perspective of each completion and one gate
// model decides whether it is shown (the pipeline reads both); the client's
// `coderag/completionOutcome` becomes the reward of the bandit's choice (with `coderag.similar.mode`
// `bandit`) and an online step of the gate on the shown suggestion's features (unless
// `coderag.suggestions.show` is `all`). The states are saved per folder under the index cache
// (`learning/<folder>.json`, `learning/<folder>.gate.json`), never sent anywhere;
// `coderag/resetLearning` and the command "CodeRAG: Reset Learned Preferences" forget them.
import { promises as fs, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { ClientCapabilities, Connection, ServerCapabilities } from 'vscode-languageserver/node';
import { indexFolderFor } from '../engine/kb/store';
import type { StageOutcomes } from '../engine/pipeline';
import { GateModel } from '../engine/gate/model';
import type { LinUcb } from '../engine/similar/linUcb';
import type { SimilarArm } from '../engine/similar/types';
import { errorMessage } from '../engine/util/errors';
import { isFileReadError, readRegularFile } from '../engine/util/safeFile';
import { sweepStaleTemps, writeFileAtomic } from '../engine/util/framedFile';
import { getLogger } from '../engine/util/logger';
import { CompletionOutcomeNotification, ResetLearningRequest, type CompletionOutcomeParams } from '../protocol/protocol';
import type { ServerConfig } from './config';
import type { Feature } from './feature';
import { LearningStore, type Learnable } from './learningStore';

const log = getLogger('learning');

/** Saved state is written this long after the last reward (and at shutdown). */
const SAVE_DELAY_MS = 1000;

/** A saved state is a few KiB (arms x dim^2 numbers); a larger file is not one, and is not read. */
const MAX_STATE_BYTES = 1024 * 1024;

interface LearningHost {
  /** Folder of the index cache (the state lives in its `learning/` folder). */
  cacheRoot: () => string;
  /** A bandit from saved state (undefined: a fresh one); a state it cannot use gives a fresh bandit and the reason. */
  newBandit: (saved?: unknown) => { bandit: LinUcb<SimilarArm>; error?: string };
}

interface FolderState {
  bandit: LinUcb<SimilarArm>;
  gate: GateModel;
  file: string;
  gateFile: string;
  /** What changed since the last save (each state has its own file). */
  dirty: { bandit: boolean; gate: boolean };
}

/** The reward of a suggestion's outcome: accepted 1, partly accepted the share of its characters, rejected 0. */
export function rewardOf(outcome: Pick<CompletionOutcomeParams, 'outcome' | 'acceptedChars' | 'shownChars'>): number {
  if (outcome.outcome === 'accepted') return 1;
  if (outcome.outcome === 'rejected') return 0;
  const shown = Number(outcome.shownChars);
  const accepted = Number(outcome.acceptedChars);
  if (!Number.isFinite(shown) || !Number.isFinite(accepted) || shown <= 0) return 0;
  return Math.min(1, Math.max(0, accepted / shown));
}

export class LearningFeature implements Feature {
  private enabled = true;
  private gateEnabled = true;
  private readonly folders = new Map<string, FolderState>();
  /** Saved states being read, per folder root. */
  private readonly loading = new Map<string, Promise<FolderState>>();
  /** What each suggestion can teach, by its id, until its outcome arrives (learningStore.ts). */
  private readonly learnable = new LearningStore();
  private saveTimer: ReturnType<typeof setTimeout> | undefined;
  /** The sweep of the learning folder's stale temp files, once per process (at start). */
  private swept: Promise<void> | undefined;
  /** The save in progress: saves run one after another, so two never write one file at once. */
  private saving: Promise<void> = Promise.resolve();
  /** Resets so far: a save that began before a reset removes what it wrote, so the forgotten state does not come back. */
  private resets = 0;
  /** Rewards applied since start (tests and the status). */
  updates = 0;

  constructor(private readonly host: LearningHost) {}

  initialize(connection: Connection, _caps: ClientCapabilities, config: ServerConfig): Partial<ServerCapabilities> {
    this.updateConfig(config);
    connection.onNotification(CompletionOutcomeNotification.type, (params) => this.onOutcome(params));
    connection.onRequest(ResetLearningRequest.type, () => ({ folders: this.reset() }));
    return {};
  }

  /** The temp files of saves a crash interrupted are swept at start, not at the first completion. */
  async initialized(): Promise<void> {
    await this.sweepOnce();
  }

  updateConfig(config: ServerConfig): void {
    this.enabled = config.similar.mode === 'bandit';
    this.gateEnabled = config.suggestions.show !== 'all';
  }

  /** The bandit of a workspace folder (loaded from its saved state on first use, off the event loop). */
  async banditFor(folderRoot: string): Promise<LinUcb<SimilarArm>> {
    return (await this.stateOf(folderRoot)).bandit;
  }

  /** The show gate of a workspace folder as it learned (loaded with the bandit, off the event loop). */
  async gateFor(folderRoot: string): Promise<GateModel> {
    return (await this.stateOf(folderRoot)).gate;
  }

  /** The show gate of a workspace folder once its saved state is read; undefined before (the pipeline then uses the shipped weights). */
  loadedShowGate(folderRoot: string): GateModel | undefined {
    return this.folders.get(folderRoot)?.gate;
  }

  /** The bandit of a workspace folder once its saved state is read (banditFor reads it); undefined before. */
  loadedBandit(folderRoot: string): LinUcb<SimilarArm> | undefined {
    return this.folders.get(folderRoot)?.bandit;
  }

  /**
   * Keep what a suggestion made in `folderRoot` can teach, from its stages' outcomes: the bandit's choice, the gate's view of a suggestion
   * it showed (nothing kept when neither applies).
   */
  remember(traceId: string, folderRoot: string, outcomes: Pick<StageOutcomes, 'similar' | 'gate'>): void {
    const { similar, gate } = outcomes;
    const bandit = similar?.chosenBy === 'bandit' ? { arm: similar.arm, features: [...similar.features] } : undefined;
    const shown = gate?.shown ? { features: gate.features, logprobs: gate.logprobs } : undefined;
    if (!bandit && !shown) return;
    this.learnable.remember(traceId, { folderRoot, ...(bandit ? { bandit } : {}), ...(shown ? { gate: shown } : {}) });
  }

  /** The reward the bandit learned from a suggestion, once its outcome arrived (Explain shows it). */
  banditReward(traceId: string): number | undefined {
    const kept = this.learnable.get(traceId);
    return kept?.banditLearned ? kept.reward : undefined;
  }

  /** Apply one outcome; returns the reward applied, or undefined when nothing was learned (and why in the log). */
  onOutcome(params: CompletionOutcomeParams): number | undefined {
    if (!this.enabled && !this.gateEnabled) return undefined;
    if (!params || typeof params.traceId !== 'string' || !['accepted', 'partial', 'rejected'].includes(params.outcome)) {
      log.warn('completion outcome ignored: not a valid outcome');
      return undefined;
    }
    const kept = this.learnable.get(params.traceId);
    if (!kept || kept.reward !== undefined) return undefined;
    // The folder's state was loaded before its completion ran (bandit mode or the gate on).
    const state = this.folders.get(kept.folderRoot);
    if (!state) return undefined;
    const reward = rewardOf(params);
    const bandit = this.enabled ? this.rewardBandit(state, kept, reward) : false;
    const gate = this.gateEnabled ? this.rewardGate(state, kept, reward) : false;
    if (!bandit && !gate) return undefined;
    kept.reward = reward;
    kept.banditLearned = bandit;
    this.updates++;
    state.dirty = { bandit: state.dirty.bandit || bandit, gate: state.dirty.gate || gate };
    this.scheduleSave();
    log.debug(
      `reward ${reward.toFixed(2)} (${params.outcome})${bandit ? ` for arm ${kept.bandit!.arm}` : ''}${gate ? ' for the gate' : ''}`,
    );
    return reward;
  }

  /** The bandit's choice of the suggestion gets `reward`; false when the bandit did not choose it. */
  private rewardBandit(state: FolderState, kept: Learnable, reward: number): boolean {
    const choice = kept.bandit;
    if (!choice) return false;
    if (!state.bandit.arms.includes(choice.arm) || choice.features.length !== state.bandit.dim) return false;
    try {
      state.bandit.update(choice.arm, choice.features, reward);
    } catch (e) {
      log.warn(`completion outcome ignored: ${errorMessage(e)}`);
      return false;
    }
    return true;
  }

  /** The gate learns from a suggestion it showed; false when it did not show this one. */
  private rewardGate(state: FolderState, kept: Learnable, reward: number): boolean {
    if (!kept.gate) return false;
    state.gate.update(kept.gate.features, kept.gate.logprobs, reward);
    return true;
  }

  /** Forget what every folder learned (memory and saved files); returns the folders reset. */
  reset(): number {
    const root = join(this.host.cacheRoot(), 'learning');
    let n = 0;
    for (const state of this.folders.values()) {
      state.bandit.reset();
      state.gate.reset();
      state.dirty = { bandit: false, gate: false };
      n++;
    }
    this.resets++;
    try {
      rmSync(root, { recursive: true, force: true });
    } catch (e) {
      log.warn(`removing the learned state failed: ${errorMessage(e)}`);
    }
    this.learnable.forgetRewards();
    log.info(`learned preferences reset (${n} folder${n === 1 ? '' : 's'} in memory)`);
    return n;
  }

  /**
   * Write every changed state now, after the save in progress. Each file is written atomically
   * (util/framedFile): a save that fails (a full disk) removes its temp file, and the state stays
   * to be saved the next time.
   */
  save(): Promise<void> {
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    this.saving = this.saving.then(() => this.saveChanged());
    return this.saving;
  }

  private async saveChanged(): Promise<void> {
    for (const state of this.folders.values()) {
      // What is written is taken now: a reward that arrives during the write marks the state again.
      const changed = [
        ...(state.dirty.bandit ? [{ file: state.file, text: JSON.stringify(state.bandit.toJSON()), part: 'bandit' as const }] : []),
        ...(state.dirty.gate ? [{ file: state.gateFile, text: JSON.stringify(state.gate.toJSON()), part: 'gate' as const }] : []),
      ];
      if (changed.length === 0) continue;
      state.dirty = { bandit: false, gate: false };
      const resets = this.resets;
      for (const { file, text, part } of changed) {
        try {
          await writeFileAtomic(file, text);
          if (this.resets !== resets) await fs.rm(file, { force: true });
        } catch (e) {
          if (this.resets === resets) state.dirty[part] = true;
          log.warn(`saving the learned state failed: ${errorMessage(e)}`);
        }
      }
    }
  }

  async shutdown(): Promise<void> {
    await this.save();
  }

  private scheduleSave(): void {
    if (this.saveTimer) return;
    this.saveTimer = setTimeout(() => void this.save(), SAVE_DELAY_MS);
    this.saveTimer.unref?.();
  }

  private stateOf(folderRoot: string): Promise<FolderState> {
    const state = this.folders.get(folderRoot);
    if (state) return Promise.resolve(state);
    let load = this.loading.get(folderRoot);
    if (!load) {
      load = this.load(folderRoot).then((loaded) => {
        this.loading.delete(folderRoot);
        const kept = this.folders.get(folderRoot) ?? loaded;
        this.folders.set(folderRoot, kept);
        return kept;
      });
      this.loading.set(folderRoot, load);
    }
    return load;
  }

  /** Remove the temp files interrupted saves left in the learning folder (the index's sweep, util/framedFile), once per process. */
  private sweepOnce(): Promise<void> {
    return (this.swept ??= sweepStaleTemps(join(this.host.cacheRoot(), 'learning')).then((names) => {
      if (names.length > 0) log.info(`removed ${names.length} temp file(s) of interrupted saves: ${names.join(', ')}`);
    }));
  }

  /** The folder's saved states (bandit and gate), read asynchronously; what cannot be used starts afresh (with a warning). */
  private async load(folderRoot: string): Promise<FolderState> {
    const base = join(this.host.cacheRoot(), 'learning', basename(indexFolderFor(this.host.cacheRoot(), folderRoot)));
    const file = `${base}.json`;
    const gateFile = `${base}.gate.json`;
    await this.sweepOnce();
    const [saved, savedGate] = await Promise.all([readSavedState(file), readSavedState(gateFile)]);
    const { bandit, error } = this.host.newBandit(saved);
    if (error && saved !== undefined) log.warn(`the learned state ${file} is not usable (starting afresh): ${error}`);
    let gate = new GateModel();
    if (savedGate !== undefined) {
      const loaded = GateModel.fromJSON(savedGate);
      gate = loaded.model;
      if (loaded.error) log.warn(`the learned gate ${gateFile} is not usable (starting from the shipped weights): ${loaded.error}`);
    }
    return { bandit, gate, file, gateFile, dirty: { bandit: false, gate: false } };
  }
}

/**
 * A saved state, read asynchronously through the safe reader (a FIFO or a device in its place is
 * refused, not waited on) and only up to MAX_STATE_BYTES; undefined when absent or unusable (with a warning).
 */
async function readSavedState(file: string): Promise<unknown> {
  try {
    return JSON.parse((await readRegularFile(file, MAX_STATE_BYTES)).toString('utf8')) as unknown;
  } catch (e) {
    if (isFileReadError(e) && e.code === 'ENOENT') return undefined;
    if (isFileReadError(e) && e.problem === 'tooLarge')
      log.warn(
        `the learned state is too large (${e.message}), more than a saved state can be (${MAX_STATE_BYTES / 2 ** 20} MiB): starting afresh`,
      );
    else log.warn(`the learned state ${file} is unreadable (starting afresh): ${errorMessage(e)}`);
    return undefined;
  }
}
