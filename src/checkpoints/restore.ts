import { constants, promises as fs } from 'node:fs';
import { PinnedDir, replaceFile, withLocated, type Located } from '../safe-fs';
import { parseManifest, type Manifest, type ManifestEntry } from './manifest';
import type { CheckpointStore } from './store';

/**
 * Restoring a checkpoint into a workspace. The manifest is checked first (src/checkpoints/manifest.ts:
 * relative paths only, no `..`, nothing below a file or a link), and every write goes through safe-fs
 * with symlinks refused on the way: a path leads to the workspace's own directories or the write
 * fails, whatever the store or the workspace holds. Symlinks are recreated as links with their
 * recorded text and never followed. Contents are verified against their hash as they are read.
 */

export interface RestoreOptions {
  /** The workspace's real path; it is created beforehand by the caller (an empty or missing tree is the failover case). */
  workspace: string;
  store: CheckpointStore;
  /**
   * Also remove what the workspace holds beyond the checkpoint (rewind, fork onto an existing tree).
   * Paths for which `ignored` answers true are kept: they were never recorded.
   */
  exact?: boolean;
  ignored?: (relativePath: string, isDirectory: boolean) => boolean;
}

export interface RestoredCheckpoint {
  manifest: Manifest;
  /** Files, links and directories written. */
  written: number;
  /** Paths removed (only with `exact`). */
  removed: number;
}

/** Files restored at once at most. */
export const RESTORE_CONCURRENCY = 16;

export async function loadManifest(store: CheckpointStore, id: string): Promise<Manifest> {
  return parseManifest(await store.getManifest(id));
}

export async function restoreCheckpoint(id: string, options: RestoreOptions): Promise<RestoredCheckpoint> {
  const manifest = await loadManifest(options.store, id);
  let written = 0;
  // Directories first, in order (a directory comes before what it holds); then files and links, whose
  // parents all exist by then, downloaded and written by a bounded pool (S3 round trips overlap).
  for (const entry of manifest.entries) {
    if (entry.kind !== 'dir') continue;
    await restoreEntry(entry, options);
    written += 1;
  }
  const rest = manifest.entries.filter((e) => e.kind !== 'dir');
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < rest.length) {
      const entry = rest[next++]!;
      await restoreEntry(entry, options);
      written += 1;
    }
  };
  await Promise.all(Array.from({ length: Math.min(RESTORE_CONCURRENCY, rest.length) }, lane));
  const removed = options.exact ? await removeExtra(manifest, options) : 0;
  return { manifest, written, removed };
}

const SAFE = { createDirs: true, followLinks: false } as const;

/**
 * Run `use` in the directory that holds `p`'s final name, reached from the workspace root with no
 * symlink on the way (safe-fs refuses one), and created when missing. The final name itself may be
 * anything (a link planted there is replaced, never followed).
 */
async function inParent(
  workspace: string,
  p: string,
  use: (dir: PinnedDir, name: string, shown: string) => Promise<void>,
) {
  const slash = p.lastIndexOf('/');
  const name = p.slice(slash + 1);
  if (slash < 0) {
    const root = await PinnedDir.openRoot(workspace);
    try {
      return await use(root, name, p);
    } finally {
      await root.close();
    }
  }
  const parent = p.slice(0, slash);
  await withLocated(workspace, parent, SAFE, async (loc) => {
    if (loc.name === undefined) return use(loc.dir, name, p);
    if (!loc.stat) await fs.mkdir(loc.dir.child(loc.name), { mode: 0o700 });
    const dir = await loc.dir.openChild(loc.name, loc.root, loc.shown);
    try {
      await use(dir, name, p);
    } finally {
      await dir.close();
    }
  });
}

async function restoreEntry(entry: ManifestEntry, options: RestoreOptions): Promise<void> {
  const data = entry.kind === 'file' ? await options.store.getBlob(entry.hash) : undefined;
  await inParent(options.workspace, entry.path, async (dir, name, shown) => {
    const stat = await dir.lstatChild(name);
    const at = dir.child(name);
    if (entry.kind === 'dir') {
      if (stat && !stat.isDirectory()) await fs.unlink(at);
      if (!stat?.isDirectory()) await fs.mkdir(at, { mode: entry.mode });
      await chmodDir(at, entry.mode);
      return;
    }
    if (stat?.isDirectory()) await fs.rm(at, { recursive: true, force: true });
    else if (stat && (entry.kind === 'symlink' || !stat.isFile())) await fs.unlink(at);
    if (entry.kind === 'symlink') {
      await fs.symlink(entry.target, at);
      return;
    }
    const located: Located = {
      root: options.workspace,
      dir,
      name,
      stat: stat?.isFile() ? stat : undefined,
      shown,
      close: async () => undefined,
    };
    await replaceFile(located, data as Buffer);
    const handle = await fs.open(at, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      await handle.chmod(entry.mode);
    } finally {
      await handle.close();
    }
  });
}

async function chmodDir(at: string, mode: number): Promise<void> {
  const handle = await fs.open(at, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    // The owner keeps write and search rights while the restore fills it; a read-only directory is recorded as such.
    await handle.chmod(mode | 0o700);
  } finally {
    await handle.close();
  }
}

/** Remove every path the checkpoint does not hold (links removed, never followed), keeping ignored ones. */
async function removeExtra(manifest: Manifest, options: RestoreOptions): Promise<number> {
  const kept = new Set(manifest.entries.map((e) => e.path));
  const ignored = options.ignored ?? (() => false);
  const root = await PinnedDir.openRoot(options.workspace);
  try {
    return await removeIn(root, '', kept, ignored, options.workspace);
  } finally {
    await root.close();
  }
}

async function removeIn(
  dir: PinnedDir,
  rel: string,
  kept: Set<string>,
  ignored: (p: string, isDir: boolean) => boolean,
  root: string,
): Promise<number> {
  let removed = 0;
  for (const raw of await dir.list()) {
    const name = raw.toString('utf8');
    const p = rel ? `${rel}/${name}` : name;
    const stat = await dir.lstatChild(name).catch(() => undefined);
    if (!stat || ignored(p, stat.isDirectory())) continue;
    const valid = Buffer.from(name).equals(raw);
    if (valid && kept.has(p)) {
      if (stat.isDirectory()) {
        const child = await dir.openChild(name, root, p);
        try {
          removed += await removeIn(child, p, kept, ignored, root);
        } finally {
          await child.close();
        }
      }
      continue;
    }
    // A name that is not valid UTF-8 was never recorded (its checkpoint lists it as omitted), and a path
    // string cannot name it: it stays.
    if (!valid) continue;
    await fs.rm(dir.child(name), { recursive: true, force: true });
    removed += 1;
  }
  return removed;
}
