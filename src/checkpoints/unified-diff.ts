import { structuredPatch } from 'diff';
import type { ManifestEntry } from './manifest';
import type { PathChange } from './manifest-diff';
import type { CheckpointStore } from './store';

/**
 * Unified diffs of checkpoint changes, in git's format (`diff --git a/p b/p`, `---`/`+++`, hunks),
 * computed with jsdiff (the `diff` package: maintained, typed, no dependencies, the line diff most of
 * the npm ecosystem uses). Bounded: a file over {@link DIFF_LIMITS.fileBytes} is not diffed line by
 * line, a diff that would take more than {@link DIFF_LIMITS.editLength} edits or
 * {@link DIFF_LIMITS.timeoutMs} is summarized, and the caller stops writing at its own output bound.
 */

export const DIFF_LIMITS = {
  /** Larger contents are said to differ, with their sizes, not diffed. */
  fileBytes: 1024 * 1024,
  /** jsdiff's `maxEditLength`: a diff with more changed lines than this is summarized. */
  editLength: 20_000,
  /** jsdiff's `timeout` per file. */
  timeoutMs: 2000,
  /** Lines of context around each change, as git's default. */
  context: 3,
} as const;

export interface FileDiff {
  path: string;
  status: PathChange['status'];
  /** Lines added and removed (text files diffed in full). */
  added?: number;
  removed?: number;
  binary?: boolean;
  /** Why no line diff is shown (too large, too many changes). */
  note?: string;
  oldMode?: number;
  newMode?: number;
  /** The diff text for this path, git style, ending with a newline. */
  text: string;
}

/** Git's test: a NUL byte among the first 8000 bytes means binary; so does text that is not UTF-8. */
export function isBinary(data: Buffer): boolean {
  if (data.subarray(0, 8000).includes(0)) return true;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(data);
    return false;
  } catch {
    return true;
  }
}

const octal = (mode: number) => `100${(mode & 0o777).toString(8).padStart(3, '0')}`;

async function contentOf(store: CheckpointStore, entry: ManifestEntry | undefined): Promise<Buffer | undefined> {
  if (!entry) return Buffer.alloc(0);
  if (entry.kind === 'symlink') return Buffer.from(entry.target);
  if (entry.kind !== 'file') return Buffer.alloc(0);
  if (entry.size > DIFF_LIMITS.fileBytes) return undefined;
  return store.getBlob(entry.hash);
}

/** One change as a git-style diff, reading the contents it needs from the store. */
export async function fileDiff(store: CheckpointStore, change: PathChange): Promise<FileDiff> {
  const before = change.status === 'added' ? undefined : change.before;
  const after = change.status === 'removed' ? undefined : change.after;
  const p = change.path;
  const head = [`diff --git a/${p} b/${p}`];
  const oldMode = before?.kind === 'file' ? before.mode : undefined;
  const newMode = after?.kind === 'file' ? after.mode : undefined;
  if (change.status === 'added')
    head.push(`new file mode ${after?.kind === 'symlink' ? '120000' : octal(newMode ?? 0o644)}`);
  else if (change.status === 'removed')
    head.push(`deleted file mode ${before?.kind === 'symlink' ? '120000' : octal(oldMode ?? 0o644)}`);
  else if (oldMode !== undefined && newMode !== undefined && oldMode !== newMode) {
    head.push(`old mode ${octal(oldMode)}`, `new mode ${octal(newMode)}`);
  }
  const base = {
    path: p,
    status: change.status,
    ...(oldMode !== undefined ? { oldMode } : {}),
    ...(newMode !== undefined ? { newMode } : {}),
  };
  const sameContent =
    change.status === 'modified' && before?.kind === 'file' && after?.kind === 'file' && before.hash === after.hash;
  if (sameContent) return { ...base, text: `${head.join('\n')}\n` };
  const [a, b] = await Promise.all([contentOf(store, before), contentOf(store, after)]);
  const aName = change.status === 'added' ? '/dev/null' : `a/${p}`;
  const bName = change.status === 'removed' ? '/dev/null' : `b/${p}`;
  if (a === undefined || b === undefined) {
    const size = (e: ManifestEntry | undefined) => (e?.kind === 'file' ? e.size : 0);
    const note = `Files ${aName} and ${bName} differ (${size(before)} and ${size(after)} bytes; over the ${DIFF_LIMITS.fileBytes}-byte bound of a line diff)`;
    return { ...base, note, text: `${head.join('\n')}\n${note}\n` };
  }
  if (isBinary(a) || isBinary(b)) {
    return { ...base, binary: true, text: `${head.join('\n')}\nBinary files ${aName} and ${bName} differ\n` };
  }
  const patch = structuredPatch(aName, bName, a.toString('utf8'), b.toString('utf8'), undefined, undefined, {
    context: DIFF_LIMITS.context,
    maxEditLength: DIFF_LIMITS.editLength,
    timeout: DIFF_LIMITS.timeoutMs,
  });
  if (!patch) {
    const note = `Files ${aName} and ${bName} differ (too many changed lines to diff within the bounds)`;
    return { ...base, note, text: `${head.join('\n')}\n${note}\n` };
  }
  let added = 0;
  let removed = 0;
  const lines = [...head, `--- ${aName}`, `+++ ${bName}`];
  for (const hunk of patch.hunks) {
    lines.push(`@@ -${range(hunk.oldStart, hunk.oldLines)} +${range(hunk.newStart, hunk.newLines)} @@`);
    for (const line of hunk.lines) {
      if (line.startsWith('+')) added++;
      else if (line.startsWith('-')) removed++;
      lines.push(line);
    }
  }
  return { ...base, added, removed, text: `${lines.join('\n')}\n` };
}

/** Hunk ranges as diff(1) writes them: `start,count`, `start` for one line, the line before and `,0` for none. */
function range(start: number, count: number): string {
  if (count === 0) return `${Math.max(start - 1, 0)},0`;
  return count === 1 ? `${start}` : `${start},${count}`;
}
