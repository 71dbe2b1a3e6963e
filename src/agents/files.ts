import { constants, promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { FileHandle } from 'node:fs/promises';
import { withLocated } from '../safe-fs';
import { errorMessage } from '../tools/registry';
import { listNames, readCapped, readTextFrom, type DirList, type FileRead } from '../context/workspace-files';

/**
 * Finding and reading agent files. A workspace's agents folders are model-writable: listed and read
 * through the file tools' safe layer (walked by descriptor, a symlink followed only while it stays
 * in the workspace, the opened file verified, hard links and other users' files refused). The
 * operator's folder is the operator's own: read with plain opens, still bounded and never blocking
 * on a FIFO.
 */

/** Agent file names: `<name>.md`, letters, digits, `.`, `_`, `-` (the path is shown in warnings). */
export const AGENT_FILE = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,126}\.md$/;

/** Names in `relDir` of `root` that may be agent files (anything but a folder, ending `.md`), sorted, at most `max`. */
export async function listWorkspaceAgentFiles(root: string, relDir: string, max: number): Promise<DirList> {
  try {
    return await withLocated(root, relDir, { followLinks: true }, async (located): Promise<DirList> => {
      if (!located.stat) return { kind: 'missing' };
      if (!located.stat.isDirectory() || located.name === undefined) return { kind: 'refused', reason: 'not a folder' };
      const pinned = await located.dir.openChild(located.name, located.root, located.shown);
      try {
        // The pinned folder's own path (through its descriptor on Linux): a swap cannot redirect it.
        return await listDir(path.dirname(pinned.child('_')), max);
      } finally {
        await pinned.close();
      }
    });
  } catch (error) {
    const message = errorMessage(error);
    if (message.startsWith('File not found') || message.includes('is not a directory, so')) return { kind: 'missing' };
    return { kind: 'refused', reason: message };
  }
}

/** The operator's folder: names ending `.md` that are not folders, sorted, at most `max`. */
export async function listOperatorAgentFiles(dir: string, max: number): Promise<DirList> {
  try {
    const stat = await fs.stat(dir);
    if (!stat.isDirectory()) return { kind: 'refused', reason: 'not a folder' };
    return await listDir(dir, max);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    return { kind: 'refused', reason: errorMessage(error) };
  }
}

/** The `.md` files of a folder. FIFOs, sockets and devices are listed too: the read refuses them by name, without blocking. */
function listDir(dir: string, max: number): Promise<DirList> {
  return listNames(dir, max, (entry) => entry.name.endsWith('.md') && !entry.isDirectory());
}

/** A workspace agent file, at most `maxBytes`, owned by one of `owners`, never a hard link. */
export function readWorkspaceAgentFile(
  root: string,
  relPath: string,
  maxBytes: number,
  owners?: readonly number[],
): Promise<FileRead> {
  return readCapped(root, relPath, maxBytes, owners);
}

/** O_NONBLOCK: a FIFO is opened without waiting for a writer, then refused as not a regular file. */
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

/** An operator agent file, at most `maxBytes` (links followed: the operator placed them). */
export async function readOperatorAgentFile(file: string, maxBytes: number): Promise<FileRead> {
  let handle: FileHandle;
  try {
    handle = await fs.open(file, READ_FLAGS);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    return { kind: 'refused', reason: errorMessage(error) };
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return { kind: 'refused', reason: 'it is not a regular file' };
    return await readTextFrom(handle, stat.size, maxBytes);
  } catch (error) {
    return { kind: 'refused', reason: errorMessage(error) };
  } finally {
    await handle.close().catch(() => undefined);
  }
}
