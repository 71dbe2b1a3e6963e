import { constants, promises as fs, lstatSync, readlinkSync, type Stats } from 'node:fs';
import { PinnedDir } from '../safe-fs';
import { wellFormed } from '../shared/well-formed';
import { MANIFEST_VERSION, serializeManifest, type Manifest, type ManifestEntry, type OmittedEntry } from './manifest';
import { sha256, type CheckpointStore } from './store';

/**
 * Recording a checkpoint: walk the run's workspace from its root held open by descriptor (no symlink
 * is followed, every directory is opened with O_NOFOLLOW and checked inside the workspace, so a tree
 * swapped mid-walk can only make an entry fail, never bring an outside file in), hash what changed,
 * upload the contents the store lacks, and store the manifest.
 *
 * Incremental as git's index is: a file whose size, mtime, ctime and inode equal the previous
 * manifest's keeps its hash unread, unless it was modified within {@link RACY_MS} of the previous scan
 * (its mtime cannot then tell a later write apart), in which case it is read again.
 */

export interface CheckpointLimits {
  /** A larger file is left out (listed in `omitted`). */
  maxFileBytes: number;
  /** Entries (files, directories, symlinks) per checkpoint; later ones are left out. */
  maxEntries: number;
  /** The sum of the recorded files' sizes; a file that would pass it is left out. */
  maxTotalBytes: number;
}

export const DEFAULT_CHECKPOINT_LIMITS: CheckpointLimits = {
  maxFileBytes: 64 * 1024 * 1024,
  maxEntries: 100_000,
  maxTotalBytes: 2 * 1024 * 1024 * 1024,
};

/** File systems with coarse timestamps (ext3: 1 s, FAT: 2 s): a write within this of a scan may share its mtime. */
export const RACY_MS = 2000;

/** Entries handled between yields to the event loop, so heartbeats and other calls go on during a large walk. */
const YIELD_EVERY = 256;

/** Uploads in flight at most, and the bytes they may hold in memory together (S3 round trips overlap). */
export const UPLOAD_CONCURRENCY = 16;
const UPLOAD_BYTES_IN_FLIGHT = 64 * 1024 * 1024;

export interface RecordOptions {
  /** The workspace's real path. */
  workspace: string;
  store: CheckpointStore;
  /** The run's previous checkpoint: unchanged files are not read again, and `filesChanged` counts from it. */
  previous?: Manifest;
  /** Paths left out by rule (ignore files, `checkpointIgnore`); a directory's whole subtree when it matches. */
  ignored?: (relativePath: string, isDirectory: boolean) => boolean;
  limits?: Partial<CheckpointLimits>;
  now?: () => number;
}

export interface RecordedCheckpoint {
  id: string;
  manifest: Manifest;
  /** Paths added, changed (content, mode, link target, kind) or removed since `previous` (all, without one). */
  filesChanged: number;
  /** Bytes of content uploaded (what the store did not hold yet). */
  bytes: number;
  /** Files read and hashed (the rest were known unchanged by their stat). */
  filesHashed: number;
}

interface Walk {
  root: string;
  store: CheckpointStore;
  limits: CheckpointLimits;
  previous: Map<string, ManifestEntry>;
  previousScan: number;
  ignored: (relativePath: string, isDirectory: boolean) => boolean;
  entries: ManifestEntry[];
  omitted: OmittedEntry[];
  total: number;
  uploaded: number;
  hashed: number;
  sinceYield: number;
  uploads: Set<Promise<void>>;
  inFlightBytes: number;
  uploadError: unknown;
}

export async function recordCheckpoint(options: RecordOptions): Promise<RecordedCheckpoint> {
  const now = options.now ?? Date.now;
  const scannedAt = now();
  const walk: Walk = {
    root: options.workspace,
    store: options.store,
    limits: { ...DEFAULT_CHECKPOINT_LIMITS, ...options.limits },
    previous: new Map((options.previous?.entries ?? []).map((e) => [e.path, e])),
    previousScan: options.previous?.scannedAt ?? 0,
    ignored: options.ignored ?? (() => false),
    entries: [],
    omitted: [],
    total: 0,
    uploaded: 0,
    hashed: 0,
    sinceYield: 0,
    uploads: new Set(),
    inFlightBytes: 0,
    uploadError: undefined,
  };
  const root = await PinnedDir.openRoot(options.workspace);
  try {
    await walkDir(walk, root, '');
  } finally {
    await root.close();
    await Promise.all(walk.uploads);
  }
  if (walk.uploadError !== undefined) throw walk.uploadError;
  const manifest: Manifest = { version: MANIFEST_VERSION, entries: walk.entries, omitted: walk.omitted, scannedAt };
  const { bytes, id } = serializeManifest(manifest);
  await options.store.putManifest(id, bytes);
  return {
    id,
    manifest,
    filesChanged: countIn(walk.previous, walk.entries, options.previous !== undefined),
    bytes: walk.uploaded,
    filesHashed: walk.hashed,
  };
}

async function walkDir(walk: Walk, dir: PinnedDir, rel: string): Promise<void> {
  const names = (await dir.list()).sort(Buffer.compare);
  for (const raw of names) {
    if ((walk.sinceYield += 1) >= YIELD_EVERY) {
      walk.sinceYield = 0;
      await new Promise((resolve) => setImmediate(resolve));
    }
    const name = raw.toString('utf8');
    const p = rel ? `${rel}/${name}` : name;
    if (!Buffer.from(name).equals(raw)) {
      omit(walk, p, 'its name is not valid UTF-8');
      continue;
    }
    let stat: Stats;
    try {
      stat = lstatSync(dir.child(name));
    } catch {
      continue; // removed while the walk ran: not in this checkpoint
    }
    if (walk.ignored(p, stat.isDirectory())) continue;
    if (walk.entries.length >= walk.limits.maxEntries) {
      omit(walk, p, `the checkpoint holds at most ${walk.limits.maxEntries} entries`);
      continue;
    }
    if (stat.isDirectory()) await recordDir(walk, dir, name, p, stat);
    else if (stat.isSymbolicLink()) recordLink(walk, dir, name, p);
    else if (stat.isFile()) await recordFile(walk, dir, name, p, stat);
    else omit(walk, p, 'it is not a regular file, directory or symlink (a socket, FIFO or device)');
  }
}

async function recordDir(walk: Walk, parent: PinnedDir, name: string, p: string, stat: Stats): Promise<void> {
  let dir: PinnedDir;
  try {
    dir = await parent.openChild(name, walk.root, p);
  } catch {
    omit(walk, p, 'it changed while the checkpoint was recorded (it is no longer a directory inside the workspace)');
    return;
  }
  walk.entries.push({ kind: 'dir', path: p, mode: stat.mode & 0o777 });
  try {
    await walkDir(walk, dir, p);
  } finally {
    await dir.close();
  }
}

function recordLink(walk: Walk, dir: PinnedDir, name: string, p: string): void {
  try {
    walk.entries.push({ kind: 'symlink', path: p, target: readlinkSync(dir.child(name)) });
  } catch {
    omit(walk, p, 'it changed while the checkpoint was recorded');
  }
}

async function recordFile(walk: Walk, dir: PinnedDir, name: string, p: string, stat: Stats): Promise<void> {
  const { maxFileBytes, maxTotalBytes } = walk.limits;
  if (stat.size > maxFileBytes)
    return omit(walk, p, `it is ${stat.size} bytes, over the ${maxFileBytes}-byte limit for one file`);
  if (walk.total + stat.size > maxTotalBytes) {
    return omit(walk, p, `the checkpoint's files may total at most ${maxTotalBytes} bytes`);
  }
  const known = walk.previous.get(p);
  const unchanged =
    known?.kind === 'file' &&
    known.size === stat.size &&
    known.mtimeMs === stat.mtimeMs &&
    known.ctimeMs === stat.ctimeMs &&
    known.ino === stat.ino &&
    stat.mtimeMs < walk.previousScan - RACY_MS;
  let hash = unchanged ? known.hash : undefined;
  let final = stat;
  if (hash === undefined) {
    const read = await readStable(dir.child(name), p);
    if (typeof read === 'string') return omit(walk, p, read);
    ({ stat: final } = read);
    hash = sha256(read.data);
    walk.hashed += 1;
    await upload(walk, hash, read.data);
  }
  walk.total += final.size;
  walk.entries.push({
    kind: 'file',
    path: p,
    hash,
    size: final.size,
    mode: final.mode & 0o777,
    mtimeMs: final.mtimeMs,
    ctimeMs: final.ctimeMs,
    ino: final.ino,
  });
}

const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * The file's bytes as they were at one moment: read through a descriptor, and read again (once) when
 * its size or mtime moved during the read. A file still changing is left out with the reason.
 */
async function readStable(at: string, shown: string): Promise<{ data: Buffer; stat: Stats } | string> {
  for (let attempt = 0; attempt < 2; attempt += 1) {
    let handle;
    try {
      handle = await fs.open(at, READ_FLAGS);
    } catch {
      return 'it changed while the checkpoint was recorded (replaced or removed)';
    }
    try {
      const before = await handle.stat();
      if (!before.isFile()) return 'it changed while the checkpoint was recorded (no longer a regular file)';
      const data = await handle.readFile();
      const after = await handle.stat();
      if (after.size === data.length && after.mtimeMs === before.mtimeMs && after.size === before.size) {
        return { data, stat: after };
      }
    } catch (error) {
      return `it could not be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
    } finally {
      await handle.close();
    }
  }
  return `it was being written while the checkpoint was recorded (${shown} changed twice while it was read)`;
}

/** Upload `data` unless the store has it, in a bounded pool: the walk goes on while earlier uploads run. */
async function upload(walk: Walk, hash: string, data: Buffer): Promise<void> {
  if (walk.uploadError !== undefined) throw walk.uploadError;
  while (
    walk.uploads.size >= UPLOAD_CONCURRENCY ||
    (walk.uploads.size > 0 && walk.inFlightBytes + data.length > UPLOAD_BYTES_IN_FLIGHT)
  ) {
    await Promise.race(walk.uploads);
  }
  walk.inFlightBytes += data.length;
  const one: Promise<void> = putIfMissing(walk, hash, data).finally(() => {
    walk.inFlightBytes -= data.length;
    walk.uploads.delete(one);
  });
  walk.uploads.add(one);
}

async function putIfMissing(walk: Walk, hash: string, data: Buffer): Promise<void> {
  try {
    if (!(await walk.store.hasBlob(hash))) {
      await walk.store.putBlob(hash, data);
      walk.uploaded += data.length;
    }
  } catch (error) {
    walk.uploadError ??= error;
  }
}

function omit(walk: Walk, p: string, reason: string): void {
  if (walk.omitted.length < 10_000) walk.omitted.push({ path: wellFormed(p), reason });
}

function sameEntry(a: ManifestEntry, b: ManifestEntry): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'file' && b.kind === 'file') return a.hash === b.hash && a.mode === b.mode;
  if (a.kind === 'symlink' && b.kind === 'symlink') return a.target === b.target;
  return a.kind === 'dir' && b.kind === 'dir' && a.mode === b.mode;
}

/** Files and links added, changed or removed between two manifests (directories count only when their mode changed). */
export function countChanges(before: Manifest, after: Manifest): number {
  return changedPaths(before, after).length;
}

/** The paths {@link countChanges} counts, in `after`'s order, then the removed ones. */
export function changedPaths(before: Manifest, after: Manifest): string[] {
  const previous = new Map(before.entries.map((e) => [e.path, e]));
  const out: string[] = [];
  const now = new Set<string>();
  for (const entry of after.entries) {
    now.add(entry.path);
    const was = previous.get(entry.path);
    if (was === undefined ? entry.kind !== 'dir' : !sameEntry(was, entry)) out.push(entry.path);
  }
  for (const [p, was] of previous) if (!now.has(p) && was.kind !== 'dir') out.push(p);
  return out;
}

function countIn(previous: Map<string, ManifestEntry>, entries: ManifestEntry[], hadPrevious: boolean): number {
  if (!hadPrevious) return entries.filter((e) => e.kind !== 'dir').length;
  let changed = 0;
  const now = new Set<string>();
  for (const entry of entries) {
    now.add(entry.path);
    const before = previous.get(entry.path);
    if (before === undefined ? entry.kind !== 'dir' : !sameEntry(before, entry)) changed += 1;
  }
  for (const [p, before] of previous) if (!now.has(p) && before.kind !== 'dir') changed += 1;
  return changed;
}
