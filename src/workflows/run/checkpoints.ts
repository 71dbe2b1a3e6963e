import { cutChars } from '../../shared/bounds';
import type { CheckpointRef } from '../../shared/checkpoints';
import type { RunEventInput } from '../../shared/run';

/** A turn's checkpoint as the run keeps it (and carries across continue-as-new): no wall clock. */
export interface TurnCheckpoint {
  turn: number;
  id: string;
  filesChanged: number;
  bytes: number;
  omitted?: number;
  pending?: true;
}

/** Turns kept in the run's state at most (the oldest forgotten first; history keeps every one). */
export const MAX_KEPT_CHECKPOINTS = 500;

const CHECKPOINT_ID = /^[0-9a-f]{64}$/;

/**
 * The run's workspace checkpoints (docs/checkpoints.md), in the workflow: the winner of each turn
 * (the reference whose recording started last saw every call's writes), the `checkpoint` event, and
 * the last id every tool call carries so a worker that did not record it checks the workspace first.
 * Deterministic: it only looks at activity results, in the order the workflow receives them.
 */
export class RunCheckpoints {
  private readonly turns: TurnCheckpoint[];
  /** This turn's best reference so far (its `startedAtMs` decides), until the turn settles. */
  private readonly open = new Map<number, CheckpointRef>();
  /** The last divergence a worker reported (shown by `status` until a newer checkpoint lands). */
  diverged: { paths: string[]; count: number } | undefined;

  constructor(
    carried: TurnCheckpoint[] | undefined,
    private readonly emit: (event: RunEventInput) => void,
  ) {
    this.turns = carried ? carried.map((c) => ({ ...c })) : [];
  }

  /** The newest checkpoint that landed (not pending). */
  get last(): TurnCheckpoint | undefined {
    for (let i = this.turns.length - 1; i >= 0; i -= 1) if (!this.turns[i]!.pending) return this.turns[i];
    return undefined;
  }

  /** The newest turn's entry, pending or not (what `status` shows). */
  get newest(): TurnCheckpoint | undefined {
    return this.turns[this.turns.length - 1];
  }

  /** The id tool calls carry (`lastCheckpointId`). */
  get lastId(): string | undefined {
    return this.last?.id;
  }

  /** A reference from an activity's result: kept when it is its turn's latest-started so far. */
  offer(ref: unknown): void {
    const r = wellFormed(ref);
    if (!r) return;
    const settled = this.turns.find((t) => t.turn === r.turn);
    if (settled) {
      // An earlier turn's pending checkpoint that landed later (retried by the worker).
      if (settled.pending && !r.pending) this.land(settled, r);
      return;
    }
    // The recording that started last saw every write of the calls that ended before it (the worker's
    // mutex orders them), pending or not: a pending winner is retried by the worker and lands later.
    const best = this.open.get(r.turn);
    if (!best || r.startedAtMs >= best.startedAtMs) this.open.set(r.turn, r);
  }

  /** The turn's calls are all done: its winner becomes the run's checkpoint of that turn, with its event. */
  settle(turn: number): void {
    const best = this.open.get(turn);
    this.open.clear();
    if (!best) return;
    const entry: TurnCheckpoint = {
      turn,
      id: best.pending ? '' : best.id,
      filesChanged: best.filesChanged,
      bytes: best.bytes,
      ...(best.omitted ? { omitted: best.omitted } : {}),
      ...(best.pending ? { pending: true as const } : {}),
    };
    this.turns.push(entry);
    if (this.turns.length > MAX_KEPT_CHECKPOINTS) this.turns.splice(0, this.turns.length - MAX_KEPT_CHECKPOINTS);
    if (!entry.pending) this.diverged = undefined;
    this.announce(entry);
  }

  /** A worker kept a workspace that differs from the last checkpoint: the event, and a line in `status`. */
  reportDiverged(report: unknown): void {
    const r = report as { paths?: unknown; count?: unknown } | undefined;
    if (!r || !Array.isArray(r.paths) || typeof r.count !== 'number') return;
    const paths = r.paths
      .filter((p): p is string => typeof p === 'string')
      .slice(0, 20)
      .map((p) => cutChars(p, 300));
    const count = Math.max(paths.length, Math.min(Math.floor(r.count), 1e9));
    this.diverged = { paths, count };
    this.emit({ kind: 'workspace_diverged', paths, count });
  }

  /** What a tool call's result says about the workspace: its checkpoint, a pending one that landed, a divergence. */
  take(result: {
    checkpoint?: unknown;
    landed?: unknown;
    workspaceDiverged?: unknown;
    workspaceRestored?: unknown;
  }): void {
    if (result.landed !== undefined) this.offer(result.landed);
    if (result.checkpoint !== undefined) this.offer(result.checkpoint);
    if (result.workspaceDiverged !== undefined) this.reportDiverged(result.workspaceDiverged);
    if (typeof result.workspaceRestored === 'number' && this.last) {
      this.emit({
        kind: 'notice',
        message: `the workspace was missing or empty on this worker: restored from the checkpoint of turn ${this.last.turn} (${result.workspaceRestored} entries)`,
      });
    }
  }

  /** The `state` query's fields. */
  stateFields(): { lastCheckpoint?: TurnCheckpoint; workspaceDiverged?: { paths: string[]; count: number } } {
    const newest = this.newest;
    return {
      ...(newest
        ? {
            lastCheckpoint: {
              turn: newest.turn,
              id: newest.id,
              filesChanged: newest.filesChanged,
              bytes: newest.bytes,
              ...(newest.pending ? { pending: true as const } : {}),
            },
          }
        : {}),
      ...(this.diverged ? { workspaceDiverged: this.diverged } : {}),
    };
  }

  /** What continue-as-new carries. */
  carried(): { checkpoints?: TurnCheckpoint[] } {
    return this.turns.length ? { checkpoints: this.turns.map((t) => ({ ...t })) } : {};
  }

  private land(entry: TurnCheckpoint, ref: CheckpointRef): void {
    entry.id = ref.id;
    entry.filesChanged = ref.filesChanged;
    entry.bytes = ref.bytes;
    delete entry.pending;
    if (ref.omitted) entry.omitted = ref.omitted;
    this.announce(entry);
  }

  private announce(entry: TurnCheckpoint): void {
    this.emit({
      kind: 'checkpoint',
      turn: entry.turn,
      filesChanged: entry.filesChanged,
      bytes: entry.bytes,
      id: entry.id,
      ...(entry.pending ? { pending: true as const } : {}),
    });
    if (entry.omitted) {
      this.emit({
        kind: 'notice',
        message: `checkpoint of turn ${entry.turn} left out ${entry.omitted} entries (limits or unreadable files; its manifest lists them)`,
      });
    }
  }
}

/** A reference from a worker, checked: anything else is ignored (a checkpoint never fails a run). */
function wellFormed(ref: unknown): CheckpointRef | undefined {
  if (typeof ref !== 'object' || ref === null) return undefined;
  const r = ref as Record<string, unknown>;
  const n = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
  if (!n(r.turn) || !n(r.filesChanged) || !n(r.bytes) || typeof r.startedAtMs !== 'number') return undefined;
  const pending = r.pending === true;
  if (!pending && (typeof r.id !== 'string' || !CHECKPOINT_ID.test(r.id))) return undefined;
  return {
    turn: r.turn as number,
    id: pending ? '' : (r.id as string),
    filesChanged: r.filesChanged as number,
    bytes: r.bytes as number,
    startedAtMs: r.startedAtMs,
    ...(n(r.omitted) && (r.omitted as number) > 0 ? { omitted: r.omitted as number } : {}),
    ...(pending ? { pending: true as const } : {}),
  };
}
