import { constants, promises as fs } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { realWorkspace, WorkspaceError } from '../safe-fs/workspace';

/**
 * The workspace a sandbox binds, held open by descriptor from the moment it was verified.
 *
 * Bubblewrap mounts what it is given. Given a path, it resolves that path again when it mounts it,
 * a few milliseconds after the worker's check: a parent folder replaced by a symlink in between
 * (by another run whose workspace is a parent folder) would mount the symlink's target writable.
 * So the worker opens the workspace, checks the real path of what it opened, and the sandbox
 * launcher reopens that very directory through the descriptor (inherited, or `/proc/<worker
 * pid>/fd/<fd>`: the kernel follows the descriptor, not a path) and hands it to bubblewrap as `--bind-fd`, which checks after
 * mounting that the mount is the descriptor's directory. A swap at any instant fails the call; it
 * can never lead it elsewhere.
 */
export interface HeldWorkspace {
  /** The workspace's real path: where the sandbox mounts it and starts. */
  path: string;
  /** The descriptor, for a child process to inherit. */
  fd: number;
  /** Where a child process of this worker reopens the held directory (`/proc/<pid>/fd/<fd>`). */
  source: string;
  /** Closes the descriptor: once the sandbox has started (or will not start). Idempotent. */
  close(): Promise<void>;
}

/**
 * Resolves the workspace as {@link realWorkspace} does (a pinned workspace that now resolves
 * elsewhere is refused), opens it, and refuses unless the opened directory's real path is that one.
 * Linux only (the sandbox is).
 */
export async function holdWorkspace(workspace: string): Promise<HeldWorkspace> {
  const real = await realWorkspace(workspace);
  let handle: FileHandle;
  try {
    handle = await fs.open(real, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch (error) {
    throw new WorkspaceError(`The workspace ${real} could not be opened: ${(error as Error).message}`);
  }
  let opened: string;
  try {
    opened = (await fs.readlink(`/proc/self/fd/${handle.fd}`)).replace(/ \(deleted\)$/, '');
  } catch (error) {
    await handle.close();
    throw error;
  }
  if (opened !== real) {
    await handle.close();
    throw new WorkspaceError(
      `The workspace ${real} now resolves to ${opened}: a symlink replaced part of it while the call was starting.`,
    );
  }
  let closed = false;
  return {
    path: real,
    fd: handle.fd,
    source: `/proc/${process.pid}/fd/${handle.fd}`,
    async close() {
      if (closed) return;
      closed = true;
      await handle.close();
    },
  };
}
