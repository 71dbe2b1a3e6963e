import { lstatSync, opendirSync, promises as fs, type Dirent, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { openRegularFile, withLocated } from '../safe-fs';
import { errorMessage } from '../tools/registry';

/**
 * Reading the files the context is built from through the file tools' safe layer (safe-fs: walked by
 * descriptor, symlinks followed only while they stay inside `root`, the opened file verified before
 * a byte is read), bounded in bytes. A file that is missing is not an error; one that is refused
 * (a link out of `root`, a FIFO, a binary file) is reported with the reason, never read.
 */

export type FileRead =
  | { kind: 'ok'; text: string; /** size of the whole file */ fileBytes: number; truncated: boolean }
  | { kind: 'missing' }
  | { kind: 'refused'; reason: string };

export type DirList =
  { kind: 'ok'; names: string[]; more: boolean } | { kind: 'missing' } | { kind: 'refused'; reason: string };

function isMissing(error: unknown): boolean {
  const message = errorMessage(error);
  return message.startsWith('File not found') || message.includes('is not a directory, so');
}

/**
 * Why a context file is not the workspace's own, or undefined: a hard link (its other names may be
 * anywhere on the file system, another user's file included), or a file whose owner is not one of
 * `owners` (when given).
 */
function foreignFile(stat: Stats, owners: readonly number[] | undefined): string | undefined {
  if (stat.nlink > 1) return `it is a hard link (${stat.nlink} names): a file linked in from elsewhere is not read`;
  if (owners && !owners.includes(stat.uid)) {
    return `it belongs to user ${stat.uid}, not to the user this worker runs as (${owners.join(' or ')})`;
  }
  return undefined;
}

/** A folder with more entries than this is not listed up front: its files are walked to one by one. */
const MAX_TOP_NAMES = 4096;

/**
 * The names at the top of a folder, lower-cased, listed once so that a context file whose first
 * path component is not there is known to be missing without a walk. Run start asks for about ten
 * names (SOUL.md, AGENTS.md, MEMORY.md, the skill folders…) and most workspaces hold few of them;
 * each walk costs the root's `realpath`, `open`, `readlink` and an `lstat`.
 *
 * The listing only ever makes a read skip something that was not there: a file created after it is
 * treated like one created after the read, and the names it does hold are still reached by the safe
 * walk. Lower-cased so that a case-insensitive file system's `memory.md` is still walked to.
 */
export type TopNames = ReadonlySet<string>;

/**
 * The top names of `dir`; undefined (every path walked) when it cannot be listed or holds more than
 * MAX_TOP_NAMES. Read synchronously, like the worker's other run-start probes (docs/contributing.md,
 * "The hot path"): every run start lists its workspace's top, and at most MAX_TOP_NAMES entries are
 * read before it gives up, so the thread is held for a bounded time. (Asynchronously, each entry was a
 * promise, and opening, closing and each batch of 32 entries a thread pool round trip.) The filtered
 * listings below stay asynchronous: they may read a whole folder to find their few names.
 */
export function listTop(dir: string): TopNames | undefined {
  try {
    const names = new Set<string>();
    const handle = opendirSync(dir);
    try {
      for (let entry = handle.readSync(); entry !== null; entry = handle.readSync()) {
        if (names.size >= MAX_TOP_NAMES) return undefined;
        names.add(entry.name.toLowerCase());
      }
    } finally {
      handle.closeSync();
    }
    return names;
  } catch {
    return undefined;
  }
}

/** Whether `top` shows that `relPath` (relative, `/`-separated) cannot be there. */
export function absentFrom(top: TopNames | undefined, relPath: string): boolean {
  if (top === undefined) return false;
  const first = relPath.split('/').find((name) => name !== '' && name !== '.');
  return first !== undefined && first !== '..' && !top.has(first.toLowerCase());
}

/**
 * The first `maxBytes` of `relPath` in `root` as UTF-8 text (an incomplete last character is
 * dropped). A hard-linked file, or one not owned by one of `owners`, is refused. `top`: `root`'s
 * top names, when listed ({@link listTop}).
 */
export async function readCapped(
  root: string,
  relPath: string,
  maxBytes: number,
  owners?: readonly number[],
  top?: TopNames,
): Promise<FileRead> {
  if (absentFrom(top, relPath)) return { kind: 'missing' };
  try {
    return await withLocated(root, relPath, { followLinks: true }, async (located): Promise<FileRead> => {
      if (!located.stat) return { kind: 'missing' };
      const { handle, stat } = await openRegularFile(located);
      try {
        const foreign = foreignFile(stat, owners);
        if (foreign) return { kind: 'refused', reason: foreign };
        return await readTextFrom(handle, stat.size, maxBytes);
      } finally {
        await handle.close();
      }
    });
  } catch (error) {
    if (isMissing(error)) return { kind: 'missing' };
    return { kind: 'refused', reason: errorMessage(error) };
  }
}

/**
 * The first `maxBytes` of an open regular file of `size` bytes, as UTF-8 text; a file holding a NUL
 * byte is refused as binary.
 */
export async function readTextFrom(handle: FileHandle, size: number, maxBytes: number): Promise<FileRead> {
  const buffer = Buffer.alloc(Math.min(maxBytes, size));
  let filled = 0;
  while (filled < buffer.length) {
    const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  const bytes = buffer.subarray(0, filled);
  const nul = bytes.indexOf(0);
  if (nul !== -1) return { kind: 'refused', reason: `it is a binary file (a NUL byte at offset ${nul})` };
  return { kind: 'ok', text: new StringDecoder('utf8').write(bytes), fileBytes: size, truncated: size > filled };
}

/** Whether anything (file, folder, link) is named `name` in `dir` (a `.git` boundary). */
export async function exists(dir: string, name: string): Promise<boolean> {
  return (await ownerOf(path.join(dir, name))) !== undefined;
}

/**
 * The user owning `p` itself (a link is not followed); undefined when nothing is there. Synchronous
 * inside, without an error for a missing path: run start asks this of every folder up to the
 * repository root, where most answers are "nothing", and a thread pool round trip and an error
 * object each cost a busy worker more than the lstat.
 */
export async function ownerOf(p: string): Promise<number | undefined> {
  try {
    return lstatSync(p, { throwIfNoEntry: false })?.uid;
  } catch {
    return undefined;
  }
}

/** The user this worker runs as (undefined where the platform has none: no owner checks there). */
export function workerUser(): number | undefined {
  return typeof process.getuid === 'function' ? process.getuid() : undefined;
}

/**
 * Names in the folder `relDir` of `root` that may be folders (folders and symlinks; a symlink is
 * only ever followed by the later safe read), sorted, at most `maxEntries` of them. The folder
 * itself is opened by descriptor without following a link, and verified inside `root`. `top`: as for
 * {@link readCapped}.
 */
export async function listFolders(root: string, relDir: string, maxEntries: number, top?: TopNames): Promise<DirList> {
  if (absentFrom(top, relDir)) return { kind: 'missing' };
  try {
    return await withLocated(root, relDir, { followLinks: true }, async (located): Promise<DirList> => {
      if (!located.stat) return { kind: 'missing' };
      if (!located.stat.isDirectory() || located.name === undefined) return { kind: 'refused', reason: 'not a folder' };
      const pinned = await located.dir.openChild(located.name, located.root, located.shown);
      try {
        // The pinned folder's own path (through its descriptor on Linux): a swap cannot redirect it.
        return await listNames(
          path.dirname(pinned.child('_')),
          maxEntries,
          (entry) => entry.isDirectory() || entry.isSymbolicLink(),
        );
      } finally {
        await pinned.close();
      }
    });
  } catch (error) {
    if (isMissing(error)) return { kind: 'missing' };
    return { kind: 'refused', reason: errorMessage(error) };
  }
}

/** The names in `dir` that `keep` accepts, sorted; at most `max` (`more` says some were left out). */
export async function listNames(dir: string, max: number, keep: (entry: Dirent) => boolean): Promise<DirList> {
  const handle = await fs.opendir(dir);
  const names: string[] = [];
  let more = false;
  try {
    for (let entry = await handle.read(); entry !== null; entry = await handle.read()) {
      if (!keep(entry)) continue;
      if (names.length >= max) {
        more = true;
        break;
      }
      names.push(entry.name);
    }
  } finally {
    await handle.close();
  }
  return { kind: 'ok', names: names.sort(), more };
}
