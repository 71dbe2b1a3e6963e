/**
 * Workspace-confined file access for the file tools and the spill writer: walk a path component by
 * component from the workspace root held open by descriptor, open first and verify what was opened,
 * write by rename. See docs/file-safety.md for the rules and their limits.
 */
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
  const located = await locate(workspace, userPath, options);
  try {
    return await use(located);
  } finally {
    await located.close();
  }
}
