import { promises as fs } from 'node:fs';
import type { CheckpointRef } from '../shared/checkpoints';
import { checkpointIgnore } from './ignore';
import type { Manifest } from './manifest';
import { countChanges, changedPaths, recordCheckpoint, type CheckpointLimits } from './record';
import { loadManifest, restoreCheckpoint } from './restore';
import type { CheckpointStore } from './store';

/**
 * A worker's checkpoints of its runs' workspaces (docs/checkpoints.md): recordings after a turn's
 * tools, the failover check before a run's first call on this worker, and restores at run start.
 *
 * Per workspace (its real path), recordings, checks and restores are serialized by a mutex, so the
 * recording that started last saw every write of the turn's calls that finished before it. The worker
 * remembers, per workspace and in memory only, the manifest it recorded last (unchanged files are
 * then known by their stat and not read again) and the checkpoint ids it recorded or checked (a
 * run whose last checkpoint this worker made needs no check). A store failure never fails a call:
 * the turn's reference says `pending`, and the next call on this workspace records it first.
 */

export interface WorkerCheckpointsOptions {
  store: CheckpointStore;
  /** The worker's `checkpointIgnore` patterns (gitignore syntax), next to the defaults and the run's. */
  ignore?: readonly string[];
  limits?: Partial<CheckpointLimits>;
  /** Workspaces remembered (least recently used forgotten first); default 64. */
  maxWorkspaces?: number;
}

export interface FirstCallCheck {
  /** The workspace was missing or empty and was restored from the run's last checkpoint: entries written. */
  restored?: number;
  /** The workspace differs from the run's last checkpoint: some of the differing paths, and how many differ. */
  diverged?: { paths: string[]; count: number };
  /** The check could not be made (the store is down, the checkpoint is gone): why. */
  unchecked?: string;
}

/** Paths named in a divergence report at most (the count says how many differ). */
export const DIVERGED_PATHS_SHOWN = 20;

interface Space {
  tail: Promise<unknown>;
  /** The manifest this worker recorded last here, with its id: the stat cache of the next recording. */
  latest?: { id: string; manifest: Manifest };
  /** Manifests by id (the run's previous turn's, for `filesChanged`), newest last; a few. */
  manifests: Map<string, Manifest>;
  /** Checkpoint ids this worker recorded here or found the workspace equal to. */
  known: Set<string>;
  /** A turn whose recording failed (store down): recorded before the next call here runs. */
  pending?: { turn: number; runIgnore: readonly string[]; baseId?: string };
}

const KEPT_MANIFESTS = 4;
const KEPT_IDS = 256;

export class WorkerCheckpoints {
  readonly store: CheckpointStore;
  private readonly spaces = new Map<string, Space>();

  constructor(private readonly options: WorkerCheckpointsOptions) {
    this.store = options.store;
  }

  /**
   * Records the workspace after a tool call of turn `turn`. Never throws: a failed recording is a
   * pending reference (the store is down) or `undefined` (the workspace cannot be read: moved, gone).
   */
  async record(
    workspace: string,
    turn: number,
    options: { baseId?: string; runIgnore?: readonly string[] } = {},
  ): Promise<CheckpointRef | undefined> {
    const startedAtMs = Date.now();
    return this.locked(workspace, (space) => this.recordLocked(space, workspace, turn, startedAtMs, options));
  }

  /** A turn left pending on this workspace, recorded now (before the next call runs), or `undefined`. */
  async retryPending(workspace: string): Promise<CheckpointRef | undefined> {
    if (!this.spaces.get(workspace)?.pending) return undefined;
    return this.locked(workspace, async (space) => {
      const pending = space.pending;
      if (!pending) return undefined;
      const ref = await this.recordLocked(space, workspace, pending.turn, Date.now(), pending);
      return ref && !ref.pending ? ref : undefined;
    });
  }

  /**
   * Before a run's call on this worker: compare the workspace with the run's last checkpoint, unless
   * this worker recorded or checked it already. Missing (created by the caller) or empty: restored.
   * Different: left as it is and reported (docs/checkpoints.md#failover).
   */
  async checkBeforeCall(
    workspace: string,
    lastCheckpointId: string | undefined,
    runIgnore: readonly string[] = [],
  ): Promise<FirstCallCheck> {
    if (!lastCheckpointId || this.spaces.get(workspace)?.known.has(lastCheckpointId)) return {};
    return this.locked(workspace, async (space) => {
      if (space.known.has(lastCheckpointId)) return {};
      let manifest: Manifest;
      try {
        manifest = await this.manifest(space, lastCheckpointId);
      } catch (error) {
        return { unchecked: `the run's last checkpoint could not be read (${messageOf(error)})` };
      }
      const ignored = checkpointIgnore(workspace, [...(this.options.ignore ?? []), ...runIgnore]);
      if (await isEmpty(workspace, ignored)) {
        const restored = await restoreCheckpoint(lastCheckpointId, { workspace, store: this.store, ignored });
        remember(space.known, lastCheckpointId);
        return { restored: restored.written };
      }
      // A recording that uploads nothing: what the workspace holds now, hashed, against the checkpoint.
      const now = await recordCheckpoint({ workspace, store: DRY_STORE, ignored, limits: this.options.limits });
      const paths = changedPaths(manifest, now.manifest);
      remember(space.known, lastCheckpointId);
      if (paths.length === 0) return {};
      return { diverged: { paths: paths.slice(0, DIVERGED_PATHS_SHOWN), count: paths.length } };
    });
  }

  /**
   * Run start's `restoreFrom`: the checkpoint restored into the run's workspace, which must hold
   * nothing (ignored paths aside). Throws a message for the run's failure otherwise.
   */
  async restoreAtStart(workspace: string, checkpointId: string, runIgnore: readonly string[] = []): Promise<number> {
    return this.locked(workspace, async (space) => {
      const ignored = checkpointIgnore(workspace, [...(this.options.ignore ?? []), ...runIgnore]);
      if (!(await isEmpty(workspace, ignored))) {
        throw new RestoreRefused(
          `restoreFrom needs an empty workspace, and ${workspace} holds files: give a new or empty directory.`,
        );
      }
      const restored = await restoreCheckpoint(checkpointId, { workspace, store: this.store, ignored });
      space.manifests.set(checkpointId, restored.manifest);
      remember(space.known, checkpointId);
      return restored.written;
    });
  }

  private async recordLocked(
    space: Space,
    workspace: string,
    turn: number,
    startedAtMs: number,
    options: { baseId?: string; runIgnore?: readonly string[] },
  ): Promise<CheckpointRef | undefined> {
    const runIgnore = options.runIgnore ?? [];
    const ignored = checkpointIgnore(workspace, [...(this.options.ignore ?? []), ...runIgnore]);
    const store = new FailureTagged(this.store);
    try {
      const recorded = await recordCheckpoint({
        workspace,
        store,
        ignored,
        ...(space.latest ? { previous: space.latest.manifest } : {}),
        ...(this.options.limits ? { limits: this.options.limits } : {}),
      });
      const sinceLatest = space.latest?.id;
      space.latest = { id: recorded.id, manifest: recorded.manifest };
      keep(space.manifests, recorded.id, recorded.manifest);
      remember(space.known, recorded.id);
      if (space.pending && space.pending.turn <= turn) delete space.pending;
      let filesChanged = recorded.filesChanged;
      if (options.baseId !== undefined && options.baseId !== sinceLatest) {
        const base = await this.manifest(space, options.baseId).catch(() => undefined);
        filesChanged = base ? countChanges(base, recorded.manifest) : recorded.filesChanged;
      }
      const omitted = recorded.manifest.omitted.length;
      return {
        turn,
        id: recorded.id,
        filesChanged,
        bytes: recorded.bytes,
        startedAtMs,
        ...(omitted > 0 ? { omitted } : {}),
      };
    } catch (error) {
      if (!store.failed) {
        console.warn(`durable-agent: no checkpoint of ${workspace} for turn ${turn}: ${messageOf(error)}`);
        return undefined;
      }
      console.warn(
        `durable-agent: the checkpoint of ${workspace} for turn ${turn} is pending (${this.store.description}: ${messageOf(error)}); it is retried before the next call there`,
      );
      space.pending = { turn, runIgnore, ...(options.baseId !== undefined ? { baseId: options.baseId } : {}) };
      return { turn, id: '', filesChanged: 0, bytes: 0, startedAtMs, pending: true };
    }
  }

  private async manifest(space: Space, id: string): Promise<Manifest> {
    const known = space.manifests.get(id);
    if (known) return known;
    const manifest = await loadManifest(this.store, id);
    keep(space.manifests, id, manifest);
    return manifest;
  }

  /** Runs `use` with the workspace's mutex held. */
  private locked<T>(workspace: string, use: (space: Space) => Promise<T>): Promise<T> {
    let space = this.spaces.get(workspace);
    if (space) this.spaces.delete(workspace);
    else space = { tail: Promise.resolve(), manifests: new Map(), known: new Set() };
    this.spaces.set(workspace, space);
    this.forgetOldest();
    const held = space;
    const run = held.tail.then(() => use(held));
    held.tail = run.catch(() => undefined);
    return run;
  }

  private forgetOldest(): void {
    const max = this.options.maxWorkspaces ?? 64;
    for (const key of this.spaces.keys()) {
      if (this.spaces.size <= max) return;
      this.spaces.delete(key);
    }
  }
}

export class RestoreRefused extends Error {
  override readonly name = 'RestoreRefused';
}

/** True when the workspace is missing or holds nothing a checkpoint would record. */
async function isEmpty(workspace: string, ignored: (p: string, isDir: boolean) => boolean): Promise<boolean> {
  let names: import('node:fs').Dirent[];
  try {
    names = await fs.readdir(workspace, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw error;
  }
  return names.every((d) => ignored(d.name, d.isDirectory()));
}

/** A store that keeps nothing: a recording through it hashes the workspace and uploads nothing. */
const DRY_STORE: CheckpointStore = {
  description: 'none (comparison only)',
  hasBlob: async () => true,
  putBlob: async () => undefined,
  getBlob: async (hash) => {
    throw new Error(`no content ${hash} in a comparison`);
  },
  putManifest: async () => undefined,
  getManifest: async (id) => {
    throw new Error(`no manifest ${id} in a comparison`);
  },
};

/** The store, noting whether one of its calls failed (a pending checkpoint) rather than the walk. */
class FailureTagged implements CheckpointStore {
  failed = false;
  readonly description: string;
  constructor(private readonly inner: CheckpointStore) {
    this.description = inner.description;
  }
  hasBlob(hash: string) {
    return this.tag(this.inner.hasBlob(hash));
  }
  putBlob(hash: string, data: Buffer) {
    return this.tag(this.inner.putBlob(hash, data));
  }
  getBlob(hash: string) {
    return this.tag(this.inner.getBlob(hash));
  }
  putManifest(id: string, bytes: Buffer) {
    return this.tag(this.inner.putManifest(id, bytes));
  }
  getManifest(id: string) {
    return this.tag(this.inner.getManifest(id));
  }
  private async tag<T>(call: Promise<T>): Promise<T> {
    try {
      return await call;
    } catch (error) {
      this.failed = true;
      throw error;
    }
  }
}

function keep(map: Map<string, Manifest>, id: string, manifest: Manifest): void {
  map.delete(id);
  map.set(id, manifest);
  for (const key of map.keys()) {
    if (map.size <= KEPT_MANIFESTS) break;
    map.delete(key);
  }
}

function remember(ids: Set<string>, id: string): void {
  ids.delete(id);
  ids.add(id);
  for (const key of ids) {
    if (ids.size <= KEPT_IDS) break;
    ids.delete(key);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
