import { randomBytes } from 'node:crypto';
import { constants, promises as fs, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import { WorkspaceError } from './workspace';
import { errorCode, verifyInside } from './dir';
import type { Located } from './locate';

/**
 * Opening and writing the final name of a {@link Located} path. Reads go through a descriptor whose
 * real path was checked; writes create a new file beside the old one and rename it over it, so a
 * file's other hard links keep their content and a name swapped for a symlink is replaced, not
 * followed.
 */

/** O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused as "not a regular file" after. */
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
/** Longest file name most file systems accept, in bytes; temp names must fit too. */
const MAX_NAME_BYTES = 255;

function finalName(loc: Located): string {
  if (loc.name === undefined) throw new Error(`'${loc.shown}' is a directory, not a file.`);
  return loc.name;
}

function changedWhileOpening(shown: string): WorkspaceError {
  return new WorkspaceError(`'${shown}' changed while it was being opened (it is now a symbolic link); try again.`);
}

/**
 * Open the located file for reading: the final name is opened without following a symlink, must
 * be a regular file, and its descriptor's real path must be inside the workspace.
 */
export async function openRegularFile(loc: Located): Promise<{ handle: FileHandle; stat: Stats }> {
  if (loc.stat?.isDirectory() || loc.name === undefined) {
    throw new Error(`'${loc.shown}' is a directory, not a file. Use glob to list the files in it.`);
  }
  let handle: FileHandle;
  try {
    handle = await fs.open(loc.dir.child(loc.name), READ_FLAGS);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT') throw new Error(`File not found: '${loc.shown}'.`);
    if (code === 'EACCES') throw new Error(`Permission denied reading '${loc.shown}'.`);
    if (code === 'ELOOP') throw changedWhileOpening(loc.shown);
    throw error;
  }
  try {
    const stat = await handle.stat();
    if (stat.isDirectory()) {
      throw new Error(`'${loc.shown}' is a directory, not a file. Use glob to list the files in it.`);
    }
    // A FIFO or device would block or never end; only regular files are read.
    if (!stat.isFile()) throw new Error(`'${loc.shown}' is not a regular file.`);
    await verifyInside(handle, loc.root, loc.shown, path.join(loc.dir.realPath, loc.name));
    return { handle, stat };
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
}

/** A fresh name beside `name` for the new content; dot-prefixed so directory listings skip it. */
function tempName(name: string): string {
  const suffix = `.${randomBytes(6).toString('hex')}.tmp`;
  let base = `.${name}`;
  while (Buffer.byteLength(base + suffix) > MAX_NAME_BYTES) base = base.slice(0, -1);
  return base + suffix;
}

/** Create `name` in the located directory, which must not exist yet; verified inside the workspace. */
async function createExclusive(loc: Located, name: string, mode: number): Promise<FileHandle> {
  const handle = await fs.open(loc.dir.child(name), CREATE_FLAGS, mode);
  try {
    await verifyInside(handle, loc.root, loc.shown, path.join(loc.dir.realPath, name));
    return handle;
  } catch (error) {
    await handle.close().catch(() => undefined);
    await fs.unlink(loc.dir.child(name)).catch(() => undefined);
    throw error;
  }
}

/**
 * Replace the located file's content with `data`: write a new file in the same (pinned) directory,
 * then rename it over the final name. The old file's permission bits are kept (and its owner, when
 * the worker may set it). A planted hard link to an outside file therefore keeps its content, and
 * a final name swapped for a symlink meanwhile is replaced by the file, never written through.
 */
export async function replaceFile(loc: Located, data: Buffer | string): Promise<void> {
  const name = finalName(loc);
  if (loc.stat?.isDirectory()) throw new Error(`'${loc.shown}' is a directory; give the path of a file to write.`);
  const previous = loc.stat?.isFile() ? loc.stat : undefined;
  const mode = previous ? previous.mode & 0o7777 : 0o666;
  const temp = tempName(name);
  const handle = await createExclusive(loc, temp, mode);
  try {
    try {
      // The umask applied at creation; an existing file's exact bits are restored.
      if (previous) {
        await handle.chmod(mode);
        if (previous.uid !== process.getuid?.() || previous.gid !== process.getgid?.()) {
          await handle.chown(previous.uid, previous.gid).catch(() => undefined);
        }
      }
      await handle.writeFile(data);
    } finally {
      await handle.close();
    }
    await fs.rename(loc.dir.child(temp), loc.dir.child(name));
  } catch (error) {
    await fs.unlink(loc.dir.child(temp)).catch(() => undefined);
    if (errorCode(error) === 'EISDIR')
      throw new Error(`'${loc.shown}' is a directory; give the path of a file to write.`);
    throw error;
  }
}

/**
 * Open the located name for writing as a new, empty file (the streaming spill): whatever was there
 * is unlinked first, never truncated, so a planted hard link or symlink is not written through.
 */
export async function createFresh(loc: Located): Promise<FileHandle> {
  const name = finalName(loc);
  await fs.unlink(loc.dir.child(name)).catch((error: unknown) => {
    if (errorCode(error) !== 'ENOENT') throw error;
  });
  return createExclusive(loc, name, 0o666);
}
