import { promises as fs } from 'node:fs';
import * as path from 'node:path';

/**
 * Directory traversal on the worker's main thread (the outcome-unknown report of a mutating tool):
 * regular files only, symlinks never followed, unreadable directories skipped, and entries with a
 * name in `skipNames` left out. glob and grep walk in their search thread instead (search/tree.ts),
 * with the same rules and the same skipped names.
 */

/** Directories that are almost never what the model is looking for and can be enormous. */
export const DEFAULT_SKIPPED_NAMES: readonly string[] = ['.git', 'node_modules'];

/** Compare like `Array.prototype.sort` without a comparator would, but explicitly: by UTF-16 code units. */
export function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Yield the regular files below `root` as `/`-separated paths relative to `root`, in no particular
 * order (callers sort). `root` itself is always entered, even if its name is in `skipNames`.
 */
export async function* walkFiles(
  root: string,
  skipNames: ReadonlySet<string>,
  onDirectory?: () => void,
): AsyncGenerator<string> {
  const pending: string[] = [''];
  while (pending.length > 0) {
    const rel = pending.pop() as string;
    onDirectory?.();
    let entries;
    try {
      entries = await fs.readdir(rel ? path.join(root, rel) : root, { withFileTypes: true });
    } catch {
      continue; // vanished or unreadable: skipped, as ripgrep does with --no-messages
    }
    for (const entry of entries) {
      if (skipNames.has(entry.name)) continue;
      const childRel = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) pending.push(childRel);
      else if (entry.isFile()) yield childRel;
    }
  }
}
