import { lstatSync, promises as fs, readlinkSync, realpathSync, statSync } from 'node:fs';
import * as path from 'node:path';

/**
 * Workspace paths: the real workspace root, the lexical and real-path containment check, and how
 * paths are shown to the model.
 *
 * read_file, write_file, edit_file and the spill writer do not use {@link resolveInWorkspace}: they
 * walk the path by descriptor (safe-fs/locate.ts), which a concurrent swap cannot redirect. glob and
 * grep resolve their starting folder here and their search thread re-checks every directory and file
 * it opens through its descriptor (tools/search/tree.ts). The bash tool runs in the workspace inside the
 * bubblewrap sandbox, where the workspace and a private /tmp are the only writable places and the
 * worker's other files are not mounted (sandbox/bwrap.ts); only with DURABLE_AGENT_SANDBOX=off can
 * a shell reach anything the worker can.
 */

/** A path the model asked for that lies outside the workspace (or cannot be resolved safely). */
export class WorkspaceError extends Error {
  override readonly name = 'WorkspaceError';
}

/** POSIX allows 40 symlink hops before ELOOP; we follow dangling links by hand, so we enforce it too. */
const MAX_SYMLINK_HOPS = 40;

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

/** ENOENT and ENOTDIR both mean "nothing exists at this path yet" for the purpose of resolving it. */
function isMissing(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** True when `child` is `parent` or lies beneath it. Both must be absolute and normalised. */
export function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  // A name like `..foo` is a legitimate child; only `..` as a whole first segment climbs out.
  return rel === '' || (rel !== '..' && !rel.startsWith('..' + path.sep) && !path.isAbsolute(rel));
}

/**
 * Like `fs.realpath`, but also works for paths that do not exist yet (a file write_file is about to
 * create): the deepest existing ancestor is resolved and the missing tail appended. A dangling
 * symlink on the way is followed by hand, because writing through it would create its target —
 * which may be outside the workspace.
 */
export async function realpathAllowMissing(p: string, hops = 0): Promise<string> {
  if (hops > MAX_SYMLINK_HOPS) throw new WorkspaceError(`Too many levels of symbolic links while resolving '${p}'.`);
  try {
    return await fs.realpath(p);
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  let stat: Awaited<ReturnType<typeof fs.lstat>> | undefined;
  try {
    stat = await fs.lstat(p);
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  if (stat?.isSymbolicLink()) {
    const target = await fs.readlink(p);
    // `..` in a link target is resolved against the link's real directory, as the kernel would.
    const base = await fs.realpath(path.dirname(p));
    return realpathAllowMissing(path.resolve(base, target), hops + 1);
  }
  const parent = path.dirname(p);
  if (parent === p) return p;
  return path.join(await realpathAllowMissing(parent, hops), path.basename(p));
}

/**
 * {@link realpathAllowMissing} without the thread pool: for the checks before every tool call,
 * where each of the asynchronous version's steps (one per missing component) waited its turn for a
 * pool thread and for the event loop, milliseconds on a busy worker for work of microseconds.
 */
export function realpathAllowMissingSync(p: string, hops = 0): string {
  if (hops > MAX_SYMLINK_HOPS) throw new WorkspaceError(`Too many levels of symbolic links while resolving '${p}'.`);
  try {
    return realpathSync.native(p);
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  let stat: ReturnType<typeof lstatSync> | undefined;
  try {
    stat = lstatSync(p);
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  if (stat?.isSymbolicLink()) {
    const base = realpathSync.native(path.dirname(p));
    return realpathAllowMissingSync(path.resolve(base, readlinkSync(p)), hops + 1);
  }
  const parent = path.dirname(p);
  if (parent === p) return p;
  return path.join(realpathAllowMissingSync(parent, hops), path.basename(p));
}

/** How many recorded workspaces this process remembers as pinned (the oldest are forgotten first). */
const MAX_PINNED_WORKSPACES = 4096;
const pinned = new Set<string>();

/**
 * Marks `real` as a run's recorded workspace (its real path, admitted at run start): from now on
 * {@link realWorkspace} refuses to resolve it anywhere else, so a symlink put in its way after the
 * check before a call cannot lead the call's tools elsewhere (the file tools open the root by this
 * path and verify the opened directory's real path).
 */
export function pinWorkspace(real: string): void {
  pinned.delete(real);
  pinned.add(real);
  if (pinned.size > MAX_PINNED_WORKSPACES) pinned.delete(pinned.values().next().value as string);
}

/**
 * The workspace's real absolute path; a clear error when it does not exist or is not a directory.
 * Synchronous inside (a real path and a stat, microseconds on a local disk): it runs before every
 * file tool call, where two thread pool round trips cost a busy worker more than the calls.
 */
export async function realWorkspace(workspace: string): Promise<string> {
  let real: string;
  const asked = path.resolve(workspace);
  try {
    real = realpathSync.native(asked);
  } catch (error) {
    if (isMissing(error)) throw new WorkspaceError(`The workspace directory ${workspace} does not exist.`);
    throw error;
  }
  if (real !== asked && pinned.has(asked)) {
    throw new WorkspaceError(
      `The workspace ${asked} now resolves to ${real}: a symlink replaced part of it since the run started.`,
    );
  }
  if (!statSync(real).isDirectory()) throw new WorkspaceError(`The workspace ${workspace} is not a directory.`);
  return real;
}

function outside(userPath: string, workspace: string, resolvedTo?: string): WorkspaceError {
  const via = resolvedTo ? ` (it resolves to ${resolvedTo})` : '';
  return new WorkspaceError(
    `Path '${userPath}' is outside the workspace ${workspace}${via}; tools may only access files inside it.`,
  );
}

/**
 * Resolve a path the model gave to an absolute real path inside the workspace, or throw a
 * {@link WorkspaceError} that says why not.
 *
 * - Relative paths resolve against the workspace; absolute paths are accepted only when they lie
 *   inside it (spelled with either the workspace path as configured or its real path).
 * - `..` that climbs out is refused before the file system is consulted.
 * - Symlinks are resolved (for paths that do not exist yet, via the deepest existing ancestor and
 *   any dangling links), and the real result must still be inside the workspace.
 */
export async function resolveInWorkspace(workspace: string, userPath: string): Promise<string> {
  if (typeof userPath !== 'string' || userPath.trim() === '') {
    throw new WorkspaceError('Path must be a non-empty string (relative to the workspace, or absolute inside it).');
  }
  if (userPath.includes('\0')) throw new WorkspaceError(`Path '${userPath}' contains a NUL byte.`);
  const configured = path.resolve(workspace);
  const real = await realWorkspace(workspace);

  const candidate = path.isAbsolute(userPath) ? path.resolve(userPath) : path.resolve(real, userPath);
  // Lexical check first: `../x` is refused even when x does not exist.
  if (!isInside(real, candidate) && !isInside(configured, candidate)) throw outside(userPath, real);

  const resolved = await realpathAllowMissing(candidate);
  if (!isInside(real, resolved)) throw outside(userPath, real, resolved);
  return resolved;
}

/** How a workspace path is shown to the model: relative to the workspace root, `.` for the root itself. */
export function workspaceRelative(realWorkspaceRoot: string, absolute: string): string {
  const rel = path.relative(realWorkspaceRoot, absolute);
  return rel === '' ? '.' : rel.split(path.sep).join('/');
}
