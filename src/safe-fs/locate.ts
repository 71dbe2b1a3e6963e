import { promises as fs, type Stats } from 'node:fs';
import * as path from 'node:path';
import { isInside, realWorkspace, WorkspaceError } from './workspace';
import { errorCode, PinnedDir } from './dir';

/** POSIX allows 40 symlink hops before ELOOP; links are followed by hand here, so the limit is ours. */
const MAX_SYMLINK_HOPS = 40;
/** A directory created on the way and then removed by someone else is retried this often, not forever. */
const MAX_CREATE_ATTEMPTS = 3;

export interface LocateOptions {
  /** Create missing directories on the way (write_file, the spill writer). */
  createDirs?: boolean;
  /**
   * Follow symlinks whose target stays inside the workspace (the file tools; pnpm's node_modules is
   * made of them). When false, any symlink on the path is refused (the spill writer's own folder).
   */
  followLinks?: boolean;
}

/** Where a path ends: its parent directory, held open and verified, and the final name in it. */
export interface Located {
  /** The workspace's real path. */
  root: string;
  /** The directory holding the final name (the directory itself when the path names a directory). */
  dir: PinnedDir;
  /** The final name in `dir`; `undefined` when the path is the workspace root or ends in `..`. */
  name: string | undefined;
  /** `lstat` of the final name (never a symlink when links are followed); `undefined` when missing. */
  stat: Stats | undefined;
  /** Workspace-relative path of what was located, as the model should see it (`.` for the root). */
  shown: string;
  /** Close every descriptor the walk holds. */
  close(): Promise<void>;
}

function outside(userPath: string, root: string, resolvedTo?: string): WorkspaceError {
  const via = resolvedTo ? ` (it resolves to ${resolvedTo})` : '';
  return new WorkspaceError(
    `Path '${userPath}' is outside the workspace ${root}${via}; tools may only access files inside it.`,
  );
}

/** Linux's PATH_MAX and NAME_MAX, in bytes. */
const MAX_PATH_BYTES = 4096;
const MAX_NAME_BYTES = 255;

/**
 * A path the kernel could never resolve is refused before the walk: it would otherwise create up to
 * thousands of nested directories (write_file creates missing ones) before failing half-way.
 */
function refuseOverlong(userPath: string): void {
  const bytes = Buffer.byteLength(userPath);
  if (bytes > MAX_PATH_BYTES) {
    throw new WorkspaceError(
      `Path '${userPath.slice(0, 100)}…' is ${bytes} bytes long; paths may be at most ${MAX_PATH_BYTES} bytes.`,
    );
  }
  const long = userPath.split('/').find((name) => Buffer.byteLength(name) > MAX_NAME_BYTES);
  if (long !== undefined) {
    throw new WorkspaceError(
      `The name '${long.slice(0, 100)}…' in the path is longer than ${MAX_NAME_BYTES} bytes, the longest file name allowed.`,
    );
  }
}

/** The components of `candidate` below the workspace (spelled with its real or configured path), or null. */
function componentsBelow(candidate: string, root: string, configured: string): string[] | null {
  const base = isInside(root, candidate) ? root : isInside(configured, candidate) ? configured : undefined;
  if (base === undefined) return null;
  return path.relative(base, candidate).split(path.sep).filter(Boolean);
}

/**
 * Walk a path the model gave, one component at a time, from the workspace root held open by
 * descriptor: every directory is opened with `O_NOFOLLOW` through its verified parent and its real
 * path checked inside the workspace; a symlink met on the way is read (never followed by the
 * kernel) and its target walked again from the root, refused when it leads outside. A path
 * swapped while this runs can only make the walk fail, never leave the workspace.
 *
 * The caller must `close()` the result.
 */
export async function locate(workspace: string, userPath: string, options: LocateOptions = {}): Promise<Located> {
  if (typeof userPath !== 'string' || userPath.trim() === '') {
    throw new WorkspaceError('Path must be a non-empty string (relative to the workspace, or absolute inside it).');
  }
  if (userPath.includes('\0')) throw new WorkspaceError(`Path '${userPath}' contains a NUL byte.`);
  refuseOverlong(userPath);
  const configured = path.resolve(workspace);
  const root = await realWorkspace(workspace);
  const candidate = path.isAbsolute(userPath) ? path.resolve(userPath) : path.resolve(root, userPath);
  // Lexical check first: `../x` is refused before the file system is consulted.
  const queue = componentsBelow(candidate, root, configured);
  if (queue === null) throw outside(userPath, root);

  const rootDir = await PinnedDir.openRoot(root);
  const stack: { dir: PinnedDir; name: string }[] = [];
  const top = () => stack[stack.length - 1]?.dir ?? rootDir;
  const shownWith = (name?: string) => [...stack.map((s) => s.name), ...(name ? [name] : [])].join('/') || '.';
  const unwind = async () => {
    for (const entry of stack.splice(0)) await entry.dir.close();
  };
  const close = async () => {
    await unwind();
    await rootDir.close();
  };

  let hops = 0;
  /** Replace `name` (a symlink in the current directory) by its target, walked again from the root. */
  const follow = async (name: string) => {
    const here = shownWith(name);
    if (!options.followLinks) {
      throw new WorkspaceError(`'${here}' is a symbolic link; this path may not contain symbolic links.`);
    }
    if (++hops > MAX_SYMLINK_HOPS) {
      throw new WorkspaceError(`Too many levels of symbolic links while resolving '${userPath}'.`);
    }
    const target = await fs.readlink(top().child(name));
    const resolved = path.resolve(top().realPath, target);
    const below = componentsBelow(resolved, root, configured);
    if (below === null) throw outside(userPath, root, path.join(resolved, ...queue));
    await unwind();
    queue.unshift(...below);
  };

  try {
    let attempts = 0;
    for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
      if (name === '.') continue;
      if (name === '..') {
        // Lexical resolution and link targets are normalised, so this only follows a followed link.
        const popped = stack.pop();
        if (!popped) throw outside(userPath, root);
        await popped.dir.close();
        continue;
      }
      if (queue.length === 0) {
        const stat = await top().lstatChild(name);
        if (stat?.isSymbolicLink()) {
          await follow(name);
          continue;
        }
        return { root, dir: top(), name, stat, shown: shownWith(name), close };
      }
      const here = shownWith(name);
      try {
        stack.push({ dir: await top().openChild(name, root, here), name });
        attempts = 0;
        continue;
      } catch (error) {
        const code = errorCode(error);
        if (code === 'ENOENT' && options.createDirs && ++attempts <= MAX_CREATE_ATTEMPTS) {
          await fs.mkdir(top().child(name)).catch((e: unknown) => {
            if (errorCode(e) !== 'EEXIST') throw e;
          });
          queue.unshift(name);
          continue;
        }
        if (code === 'ENOENT') throw new Error(`File not found: '${[here, ...queue].join('/')}'.`);
        if (code !== 'ENOTDIR' && code !== 'ELOOP') throw error;
      }
      const stat = await top().lstatChild(name);
      if (!stat?.isSymbolicLink()) {
        throw new Error(`'${here}' is not a directory, so '${userPath}' cannot be reached through it.`);
      }
      await follow(name);
    }
    // The path names a directory the walk is standing in (the root, or a path ending in `..`).
    const stat = await top().stat();
    return { root, dir: top(), name: undefined, stat, shown: shownWith(), close };
  } catch (error) {
    await close();
    throw error;
  }
}
