import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  openSync,
  readdirSync,
  readlinkSync,
  realpathSync,
} from 'node:fs';
import * as path from 'node:path';
import type { IgnoreFilter, IgnoreRules } from './gitignore';

/**
 * The file tree as the search threads see it: directories listed in path order, symlinks never
 * followed, and every directory listed and every file read through a descriptor whose real path is
 * checked to lie inside the workspace. A directory swapped for a symlink to the outside between the
 * listing of its parent and its own opening is therefore skipped, not searched. Synchronous on
 * purpose: this runs in a worker thread, where blocking is harmless and the deadline can still
 * terminate it between calls.
 */

/** `/proc/self/fd/N` names what descriptor N really opened (Linux); elsewhere realpath is the check. */
const PROC_FD = existsSync('/proc/self/fd') ? '/proc/self/fd' : undefined;
const O_DIRECTORY = constants.O_DIRECTORY ?? 0;
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
// A FIFO swapped in for a file must not block the open: O_NONBLOCK has no effect on regular files.
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;

/** True when `child` is `root` or lies beneath it (both absolute, normalised). */
function isInside(root: string, child: string): boolean {
  const rel = path.relative(root, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** Compare like `Array.prototype.sort` without a comparator would: by UTF-16 code units. */
function byKey(a: { key: string }, b: { key: string }): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/**
 * Open `absolute` without following a final symlink and return the descriptor if what was opened
 * lies inside `root`; otherwise close it and return undefined.
 */
export function openInside(root: string, absolute: string, directory: boolean): number | undefined {
  let fd: number;
  try {
    fd = openSync(absolute, constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | (directory ? O_DIRECTORY : 0));
  } catch {
    return undefined; // vanished, unreadable, or a symlink (ELOOP)
  }
  try {
    const real = PROC_FD ? readlinkSync(`${PROC_FD}/${fd}`) : realpathSync(absolute);
    const stat = fstatSync(fd);
    if (isInside(root, real) && (directory ? stat.isDirectory() : stat.isFile())) return fd;
  } catch {
    // fall through: not provably inside
  }
  closeSync(fd);
  return undefined;
}

interface Entry {
  name: string;
  isDirectory: boolean;
  /** The name, with `/` after a directory's: sorting siblings by it sorts the full paths. */
  key: string;
}

/** The entries of a directory, in path order, or undefined when it cannot be listed safely. */
function listDirectory(root: string, absolute: string, skipNames: ReadonlySet<string>): Entry[] | undefined {
  const fd = openInside(root, absolute, true);
  if (fd === undefined) return undefined;
  try {
    const dirents = readdirSync(PROC_FD ? `${PROC_FD}/${fd}` : absolute, { withFileTypes: true });
    const entries: Entry[] = [];
    for (const d of dirents) {
      if (skipNames.has(d.name)) continue;
      // Dirent types come from the directory itself (lstat semantics): a symlink is neither.
      if (d.isDirectory()) entries.push({ name: d.name, isDirectory: true, key: `${d.name}/` });
      else if (d.isFile()) entries.push({ name: d.name, isDirectory: false, key: d.name });
    }
    return entries.sort(byKey);
  } catch {
    return undefined; // unreadable: skipped, as ripgrep does with --no-messages
  } finally {
    closeSync(fd);
  }
}

/**
 * Yield the regular files below `base` as `/`-separated paths relative to `base`, sorted by
 * UTF-16 code units (the order `comparePaths` gives). `base` itself is always entered, even if
 * its name is in `skipNames` or its rules ignore it. `onDirectory` runs before each directory is
 * listed. With `ignore`, what the `.gitignore` rules in force exclude is left out, and an excluded
 * directory is not entered.
 */
export function* walkSorted(
  root: string,
  base: string,
  skipNames: ReadonlySet<string>,
  onDirectory?: () => void,
  ignore?: IgnoreFilter,
): Generator<string> {
  onDirectory?.();
  const top = listDirectory(root, base, skipNames);
  if (!top) return;
  const baseRel = path.relative(root, base).split(path.sep).join('/');
  const stack: Array<{ rel: string; entries: Entry[]; next: number; rules: IgnoreRules[] }> = [
    { rel: '', entries: top, next: 0, rules: ignore ? ignore.chainFor(baseRel) : [] },
  ];
  while (stack.length > 0) {
    const frame = stack[stack.length - 1] as (typeof stack)[number];
    const entry = frame.entries[frame.next++];
    if (!entry) {
      stack.pop();
      continue;
    }
    const rel = frame.rel ? `${frame.rel}/${entry.name}` : entry.name;
    const fromRoot = baseRel ? `${baseRel}/${rel}` : rel;
    if (ignore && frame.rules.length > 0 && ignore.ignored(frame.rules, fromRoot, entry.isDirectory)) continue;
    if (!entry.isDirectory) {
      yield rel;
      continue;
    }
    onDirectory?.();
    const entries = listDirectory(root, path.join(base, rel), skipNames);
    if (!entries) continue;
    const own = ignore?.rulesIn(fromRoot);
    stack.push({ rel, entries, next: 0, rules: own ? [...frame.rules, own] : frame.rules });
  }
}
