import { parseManifest } from './manifest';
import type { CollectableStore, ObjectStore } from './objects';
import type { CheckpointStore } from './store';

/**
 * Mark and sweep over a checkpoint store (`durable-agent checkpoints gc`, docs/checkpoints.md#gc):
 * - live manifests: those a run still needs (`keep`: every checkpoint id an open run or a run closed
 *   within the grace period references) and every manifest written within the grace period (a run the
 *   caller could not see, or one being recorded now);
 * - marked contents: every content a live manifest names;
 * - swept: manifests not live, and contents neither marked nor written within the grace period (an
 *   upload whose manifest is not written yet is recent).
 * The manifests are listed again after marking, so one written meanwhile keeps its contents. A live
 * manifest that cannot be read (a missing key, corruption) stops the sweep of contents: what it names
 * is unknown, so nothing is deleted that it might need.
 */

export interface GcOptions {
  store: CheckpointStore & CollectableStore;
  /** Checkpoint ids runs reference: never deleted. */
  keep: ReadonlySet<string>;
  /** Objects written at or after this time (ms since the epoch) are kept. */
  cutoffMs: number;
  /** Only count what would be deleted. */
  dryRun?: boolean;
}

export interface GcReport {
  manifests: { kept: number; deleted: number };
  contents: { kept: number; deleted: number; bytesDeleted: number };
  /** Referenced checkpoints the store does not hold (already gone, or another store's). */
  missing: string[];
  /** Live manifests that could not be read: contents were not swept because of them. */
  unreadable: Array<{ id: string; error: string }>;
}

export async function collectGarbage(options: GcOptions): Promise<GcReport> {
  const { store, keep, cutoffMs } = options;
  const objects: ObjectStore = store.objects;
  const report: GcReport = {
    manifests: { kept: 0, deleted: 0 },
    contents: { kept: 0, deleted: 0, bytesDeleted: 0 },
    missing: [],
    unreadable: [],
  };
  const live = new Set<string>();
  const dead: string[] = [];
  for await (const m of objects.list('manifest')) {
    if (keep.has(m.name) || m.modifiedMs >= cutoffMs) live.add(m.name);
    else dead.push(m.name);
  }
  for (const id of keep) if (!live.has(id)) report.missing.push(id);
  const marked = new Set<string>();
  const mark = async (id: string) => {
    try {
      const manifest = parseManifest(await store.getManifest(id));
      for (const entry of manifest.entries) if (entry.kind === 'file') marked.add(entry.hash);
    } catch (error) {
      report.unreadable.push({ id, error: (error as Error).message.slice(0, 300) });
    }
  };
  for (const id of live) await mark(id);
  // Written while we marked: live too (its recording is recent by definition).
  const deadSet = new Set(dead);
  for await (const m of objects.list('manifest')) {
    if (!live.has(m.name) && !deadSet.has(m.name)) {
      live.add(m.name);
      await mark(m.name);
    }
  }
  report.manifests.kept = live.size;
  for (const id of dead) {
    if (!options.dryRun) await objects.delete('manifest', id);
    report.manifests.deleted += 1;
  }
  for await (const blob of objects.list('blob')) {
    if (marked.has(blob.name) || blob.modifiedMs >= cutoffMs || report.unreadable.length > 0) {
      report.contents.kept += 1;
      continue;
    }
    if (!options.dryRun) await objects.delete('blob', blob.name);
    report.contents.deleted += 1;
    report.contents.bytesDeleted += blob.size;
  }
  return report;
}

/** `30d`, `12h`, `90m`, `2w`, `45s` → milliseconds; undefined for anything else. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d{1,9})(s|m|h|d|w)$/.exec(text.trim());
  if (!match) return undefined;
  const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[
    match[2] as 's' | 'm' | 'h' | 'd' | 'w'
  ];
  return Number(match[1]) * unit;
}

/** Whether a store can be collected (the stores this package makes all can). */
export function isCollectable(store: CheckpointStore): store is CheckpointStore & CollectableStore {
  const objects = (store as Partial<CollectableStore>).objects;
  return typeof objects?.list === 'function' && typeof objects.delete === 'function';
}
