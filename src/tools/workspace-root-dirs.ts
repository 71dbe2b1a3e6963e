import { existsSync, mkdirSync, realpathSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isInside, realpathAllowMissingSync } from '../safe-fs/workspace';

/**
 * The workspace roots themselves (docs/file-safety.md, "Workspace roots"): where they are configured,
 * which directories can never be one (`/`, system trees), and creating a missing one for
 * `durable-agent worker`. The rules for the workspaces inside them are in workspace-roots.ts.
 */

export const WORKSPACE_ROOTS_ENV_VAR = 'DURABLE_AGENT_WORKSPACE_ROOTS';
/** Directories whose whole tree belongs to the system: no workspace lies in them. */
export const SYSTEM_TREES = [
  '/bin',
  '/boot',
  '/dev',
  '/etc',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/proc',
  '/run',
].concat(['/sbin', '/sys', '/usr', '/var', '/snap', '/System', '/Library', '/private/etc', '/private/var']);
/** Shared top-level directories: a folder inside them may be a workspace, the directory itself not. */
export const SHARED_TOPS = [
  '/',
  '/tmp',
  '/var/tmp',
  '/home',
  '/Users',
  '/root',
  '/mnt',
  '/media',
  '/opt',
  '/srv',
].concat(['/private/tmp', '/Volumes']);

/** Roots from `DURABLE_AGENT_WORKSPACE_ROOTS` (separated by `:`, `path.delimiter`); undefined when unset. */
export function rootsFromEnv(env: NodeJS.ProcessEnv = process.env): string[] | undefined {
  const raw = env[WORKSPACE_ROOTS_ENV_VAR]?.trim();
  if (!raw) return undefined;
  const roots = raw.split(path.delimiter).filter((r) => r.trim() !== '');
  return roots.length ? roots : undefined;
}

/** Why `real` (a real absolute path) is a system location, or undefined. */
export function systemReason(real: string, tmp: string): string | undefined {
  if (SHARED_TOPS.includes(real) || real === tmp) return `${real} is a system directory shared by the whole machine`;
  // The system temporary directory may live under /var (macOS): folders inside it are fine.
  if (isInside(tmp, real)) return undefined;
  const tree = SYSTEM_TREES.find((t) => isInside(t, real));
  return tree ? `${real} lies in the system directory ${tree}` : undefined;
}

export function realOrSelf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/** Why `root` cannot be a workspace root (missing, `/`, a system directory), or undefined. */
export function rootProblem(root: string): string | undefined {
  let real: string;
  try {
    real = realpathSync(path.resolve(root));
  } catch {
    return (
      `The workspace root ${root} does not exist (${WORKSPACE_ROOTS_ENV_VAR}, --workspace-root): create it ` +
      `(mkdir -p -m 700 ${root}); \`durable-agent worker\` creates a missing root itself.`
    );
  }
  // A shared directory (/tmp, /home) may be a root, the workspaces being folders inside it.
  const system =
    real === '/'
      ? 'it is the whole file system'
      : SHARED_TOPS.includes(real)
        ? undefined
        : systemReason(real, realOrSelf(os.tmpdir()));
  return system ? `The workspace root ${root} cannot be a root: ${system}.` : undefined;
}

/**
 * Creates the roots that do not exist yet (mode 0700, and their missing parents), as `durable-agent
 * worker --workspace-root /srv/agents` is expected to: the roots that it created. A root that would
 * be `/` or lie in a system directory is not created (the worker then refuses it, saying why).
 */
export function createMissingRoots(roots: readonly string[]): string[] {
  const created: string[] = [];
  for (const root of roots) {
    const absolute = path.resolve(root);
    if (existsSync(absolute)) continue;
    let target: string;
    try {
      // Where it would be, through the links of the existing part of its path.
      target = realpathAllowMissingSync(absolute);
    } catch {
      continue;
    }
    if (target === '/' || systemReason(target, realOrSelf(os.tmpdir())) !== undefined) continue;
    try {
      mkdirSync(absolute, { recursive: true, mode: 0o700 });
      created.push(absolute);
    } catch {
      // Not allowed or not possible: the worker's check says it does not exist, and what to do.
    }
  }
  return created;
}
