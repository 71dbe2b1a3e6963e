import { createHash } from 'node:crypto';
import { z } from 'zod';
import { isWellFormed } from '../shared/well-formed';

/**
 * A checkpoint's manifest: what a run's workspace held after a turn, as path → content hash, mode and
 * symlink target, plus what was left out and why. Contents live in the store once per hash; the
 * manifest is stored under its own hash (its id), so two equal trees share one manifest.
 *
 * A manifest read back from a store is hostile input (anyone with write access to the bucket can
 * put one there): {@link parseManifest} checks its shape, its bounds and every path before a restore
 * uses it.
 */

export const MANIFEST_VERSION = 1;

/** A file's content hash: lowercase hex SHA-256. */
const HASH = /^[0-9a-f]{64}$/;

/** Linux's PATH_MAX and NAME_MAX, in bytes; a path the kernel could never resolve is refused. */
const MAX_PATH_BYTES = 4096;
const MAX_NAME_BYTES = 255;

/** Upper bounds on what a manifest from a store may hold, whatever the recording worker's limits were. */
export const MANIFEST_BOUNDS = { entries: 1_000_000, omitted: 10_000, symlinkTargetBytes: 4096 } as const;

export interface FileEntry {
  kind: 'file';
  path: string;
  hash: string;
  size: number;
  /** Permission bits only (`mode & 0o777`): set-id and sticky bits are never recorded or restored. */
  mode: number;
  /** What the incremental scan compares, as git's index does: unchanged stat → unchanged content. */
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
}

export interface SymlinkEntry {
  kind: 'symlink';
  path: string;
  /** The link's text, recorded as is and never followed (a restore recreates the link, nothing more). */
  target: string;
}

/** A directory, recorded so that empty ones and their permissions come back too. */
export interface DirEntry {
  kind: 'dir';
  path: string;
  mode: number;
}

export type ManifestEntry = FileEntry | SymlinkEntry | DirEntry;

/** Something the checkpoint does not hold, and why (a limit, a read error, a name it cannot store). */
export interface OmittedEntry {
  path: string;
  reason: string;
}

export interface Manifest {
  version: typeof MANIFEST_VERSION;
  /**
   * In walk order: depth first, each directory's names in byte order, a directory before what it holds.
   * The same tree therefore gives the same manifest.
   */
  entries: ManifestEntry[];
  omitted: OmittedEntry[];
  /** When the scan began (ms since the epoch): a file modified at or after it is rehashed next time. */
  scannedAt: number;
}

/** Why `p` cannot be a workspace-relative path, or `undefined` when it can. */
export function pathProblem(p: string): string | undefined {
  if (p.length === 0) return 'the path is empty';
  if (p.includes('\0')) return 'the path contains a NUL character';
  if (p.startsWith('/')) return 'the path is absolute';
  if (Buffer.byteLength(p) > MAX_PATH_BYTES) return `the path is longer than ${MAX_PATH_BYTES} bytes`;
  if (!isWellFormed(p)) return 'the path is not valid Unicode';
  for (const name of p.split('/')) {
    if (name === '' || name === '.' || name === '..') return `the path has a '${name}' component`;
    if (Buffer.byteLength(name) > MAX_NAME_BYTES) return `a name in the path is longer than ${MAX_NAME_BYTES} bytes`;
  }
  return undefined;
}

const relativePath = z.string().superRefine((p, ctx) => {
  const problem = pathProblem(p);
  if (problem) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(p.slice(0, 200))}: ${problem}` });
});
const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const time = z.number().finite().nonnegative();

const entrySchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('file'),
    path: relativePath,
    hash: z.string().regex(HASH, 'a content hash is 64 lowercase hex digits'),
    size: count,
    mode: z.number().int().min(0).max(0o777),
    mtimeMs: time,
    ctimeMs: time,
    ino: count,
  }),
  z.object({ kind: z.literal('dir'), path: relativePath, mode: z.number().int().min(0).max(0o777) }),
  z.object({
    kind: z.literal('symlink'),
    path: relativePath,
    target: z
      .string()
      .min(1)
      .refine((t) => !t.includes('\0') && Buffer.byteLength(t) <= MANIFEST_BOUNDS.symlinkTargetBytes, {
        message: `a symlink target is 1 to ${MANIFEST_BOUNDS.symlinkTargetBytes} bytes without NUL`,
      }),
  }),
]);

const manifestSchema = z.object({
  version: z.literal(MANIFEST_VERSION),
  entries: z.array(entrySchema).max(MANIFEST_BOUNDS.entries),
  omitted: z.array(z.object({ path: z.string().max(8192), reason: z.string().max(1000) })).max(MANIFEST_BOUNDS.omitted),
  scannedAt: time,
});

/**
 * A manifest from its stored bytes, checked: shape and bounds, every path relative and free of `..`,
 * no path given twice, and no entry below another entry that is not a directory (a file `a` and a
 * file `a/b` cannot both exist, and a restore must never write through the symlink `a`).
 */
export function parseManifest(bytes: Buffer | string): Manifest {
  let json: unknown;
  try {
    json = JSON.parse(typeof bytes === 'string' ? bytes : bytes.toString('utf8'));
  } catch {
    throw new Error('The checkpoint manifest is not JSON.');
  }
  const parsed = manifestSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `The checkpoint manifest is malformed at ${issue?.path.join('.') || 'its root'}: ${issue?.message}.`,
    );
  }
  const seen = new Set<string>();
  for (const entry of parsed.data.entries) {
    if (seen.has(entry.path)) throw new Error(`The checkpoint manifest lists ${JSON.stringify(entry.path)} twice.`);
    seen.add(entry.path);
  }
  const dirs = new Set(parsed.data.entries.filter((e) => e.kind === 'dir').map((e) => e.path));
  for (const entry of parsed.data.entries) {
    const parts = entry.path.split('/');
    for (let i = 1; i < parts.length; i += 1) {
      const parent = parts.slice(0, i).join('/');
      if (seen.has(parent) && !dirs.has(parent)) {
        throw new Error(
          `The checkpoint manifest puts ${JSON.stringify(entry.path)} below ${JSON.stringify(parent)}, which is not a directory.`,
        );
      }
    }
  }
  return parsed.data as Manifest;
}

/** The manifest's canonical bytes and its id (the SHA-256 of those bytes). */
export function serializeManifest(manifest: Manifest): { bytes: Buffer; id: string } {
  const bytes = Buffer.from(JSON.stringify(manifest));
  return { bytes, id: createHash('sha256').update(bytes).digest('hex') };
}

/** A checkpoint id names a manifest: the same 64 hex digits as a content hash. */
export function isCheckpointId(id: unknown): id is string {
  return typeof id === 'string' && HASH.test(id);
}

export function isContentHash(hash: unknown): hash is string {
  return typeof hash === 'string' && HASH.test(hash);
}
