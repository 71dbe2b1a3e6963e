import { constants, existsSync, promises as fs, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import { isInside, WorkspaceError } from './workspace';

/**
 * A directory held open by descriptor: the primitive every file tool's path walk is built from.
 *
 * Node has no `openat`, but on Linux `/proc/self/fd/<fd>/<name>` is resolved by the kernel from the
 * directory the descriptor refers to, not from its path: renaming that directory, or replacing it
 * with a symlink, after it was opened cannot redirect a later call. Every name is opened or created
 * through {@link PinnedDir.child}, with `O_NOFOLLOW` where the call follows links, so a path component
 * swapped for a symlink fails instead of leading elsewhere.
 */

/** Whether the kernel offers `/proc/self/fd` (Linux). Elsewhere see {@link PinnedDir.child}. */
export const HAS_PROC_FD = process.platform === 'linux' && existsSync('/proc/self/fd');

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

export function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

/** The path the kernel has for an open descriptor; `(deleted)` is dropped, it is still where it was. */
async function descriptorPath(handle: FileHandle, fallback: string): Promise<string> {
  if (HAS_PROC_FD) return (await fs.readlink(`/proc/self/fd/${handle.fd}`)).replace(/ \(deleted\)$/, '');
  // Without /proc: the path is only trusted when it still names the very file that is open.
  const real = await fs.realpath(fallback);
  const [opened, now] = [await handle.stat(), await fs.stat(real)];
  if (now.ino !== opened.ino || now.dev !== opened.dev) {
    throw new WorkspaceError(`'${fallback}' changed while it was being opened; try again.`);
  }
  return real;
}

/**
 * Throws unless the open descriptor's real path lies inside `root`. This is the check that makes
 * "open first, then verify" hold: whatever a path said before, this is what was opened.
 */
export async function verifyInside(handle: FileHandle, root: string, shown: string, fallback: string): Promise<void> {
  const real = await descriptorPath(handle, fallback);
  if (!isInside(root, real)) {
    throw new WorkspaceError(
      `Path '${shown}' is outside the workspace ${root} (it resolves to ${real}); tools may only access files inside it.`,
    );
  }
}

/** An open directory inside the workspace, verified at open time. Close it when done. */
export class PinnedDir {
  private constructor(
    private readonly handle: FileHandle,
    /** The directory's real path when it was opened (for messages and the non-Linux fallback). */
    readonly realPath: string,
  ) {}

  /** Open the workspace root itself. The operator chose it, so a symlink leading to it is fine. */
  static async openRoot(realRoot: string): Promise<PinnedDir> {
    const handle = await fs.open(realRoot, constants.O_RDONLY | constants.O_DIRECTORY);
    const dir = new PinnedDir(handle, realRoot);
    try {
      const real = await descriptorPath(handle, realRoot);
      if (real !== realRoot) throw new WorkspaceError(`The workspace ${realRoot} moved while it was being opened.`);
      return dir;
    } catch (error) {
      await dir.close();
      throw error;
    }
  }

  /**
   * Open the subdirectory `name` without following a symlink. Fails with `ENOTDIR` (Linux) or
   * `ELOOP` when `name` is a symlink or not a directory, `ENOENT` when it is missing.
   */
  async openChild(name: string, root: string, shown: string): Promise<PinnedDir> {
    const handle = await fs.open(this.child(name), DIR_FLAGS);
    const dir = new PinnedDir(handle, path.join(this.realPath, name));
    try {
      await verifyInside(handle, root, shown, dir.realPath);
      return dir;
    } catch (error) {
      await dir.close();
      throw error;
    }
  }

  /**
   * The path through which `name` in this directory is reached. On Linux it goes through the
   * descriptor, so it cannot be redirected. Elsewhere it is the real path recorded at open time:
   * a narrower guarantee (see docs/file-safety.md), still checked after every open.
   */
  child(name: string): string {
    if (name.includes('/') || name === '' || name === '.' || name === '..') {
      throw new Error(`Internal error: '${name}' is not a single path component.`);
    }
    return HAS_PROC_FD ? `/proc/self/fd/${this.handle.fd}/${name}` : path.join(this.realPath, name);
  }

  /** `lstat` of `name` in this directory, or `undefined` when nothing is there. */
  async lstatChild(name: string): Promise<Stats | undefined> {
    try {
      return await fs.lstat(this.child(name));
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return undefined;
      throw error;
    }
  }

  /**
   * The names in this directory, read through its own descriptor (never through a path that could be
   * swapped since it was opened), as raw bytes: a name need not be valid UTF-8.
   */
  async list(): Promise<Buffer[]> {
    const self = HAS_PROC_FD ? `/proc/self/fd/${this.handle.fd}` : this.realPath;
    return fs.readdir(self, { encoding: 'buffer' });
  }

  /** `fstat` of the directory itself. */
  async stat(): Promise<Stats> {
    return this.handle.stat();
  }

  async close(): Promise<void> {
    await this.handle.close().catch(() => undefined);
  }
}
