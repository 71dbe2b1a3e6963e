/**
 * Workspace-confined file access for the file tools and the spill writer: walk a path component by
 * component from the workspace root held open by descriptor, open first and verify what was opened,
 * write by rename. See docs/file-safety.md for the rules and their limits.
 */
import { errorCode } from './dir';
import { locate, type Located, type LocateOptions } from './locate';

export { HAS_PROC_FD, PinnedDir } from './dir';
export { locate, type Located, type LocateOptions } from './locate';
export { createFresh, openRegularFile, replaceFile } from './file';

/** Locate `userPath` in the workspace, run `use` on it, and close every descriptor afterwards. */
export async function withLocated<T>(
  workspace: string,
  userPath: string,
  options: LocateOptions,
  use: (located: Located) => Promise<T>,
): Promise<T> {
  try {
    const located = await locate(workspace, userPath, options);
    try {
      return await use(located);
    } finally {
      await located.close();
    }
  } catch (error) {
    throw plainError(error, userPath);
  }
}

/** What an errno means, for the model. */
const ERRNO_TEXT: Record<string, string> = {
  ENXIO: 'it is not a regular file (a socket or a device)',
  ENAMETOOLONG: 'the path is too long',
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is exhausted',
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EMFILE: 'too many open files',
};

/**
 * A system error whose message names the internal `/proc/self/fd/…` path the walk uses, restated
 * with the path the model gave and what the errno means; other errors pass unchanged.
 */
function plainError(error: unknown, userPath: string): unknown {
  // Not `instanceof Error`: errors from Node's own modules may come from another realm (jest, vm).
  const message = typeof error === 'object' && error !== null && 'message' in error ? error.message : undefined;
  if (typeof message !== 'string' || !message.includes('/proc/self/fd/')) return error;
  const code = errorCode(error);
  const meaning = (code !== undefined ? ERRNO_TEXT[code] : undefined) ?? systemText(message) ?? 'the system refused it';
  return new Error(`Cannot use '${userPath}': ${meaning}${code !== undefined ? ` (${code})` : ''}.`);
}

/** The system's own words in a Node error message (`EINVAL: invalid argument, open '…'` → `invalid argument`). */
function systemText(message: string): string | undefined {
  return /^[A-Z][A-Z0-9_]*: ([^,]+),/.exec(message)?.[1];
}
