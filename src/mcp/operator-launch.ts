import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { durableAgentCacheDir } from '../safe-fs/operator-files';
import { isInside } from '../safe-fs/workspace';

/**
 * Where an operator's stdio server starts, and what it may load from (docs/mcp.md, "Where operator
 * servers run"). An operator server runs with the worker's rights and environment, so nothing it
 * resolves may come from a directory a run can write: not its working directory (where `npx`
 * finds `node_modules/`, `python3 -m` and `uvx` find modules, and `./server.sh` is looked up), not
 * an entry of its `PATH`, `NODE_PATH` or `PYTHONPATH`. Directories a run can write are the
 * worker's workspace roots (every run's workspace lies in one) and the run's own workspace.
 */

/** Search paths cleaned of entries a run can write (relative entries mean the working directory). */
const SEARCH_PATH_VARIABLES = ['PATH', 'NODE_PATH', 'PYTHONPATH'] as const;

/** The real path of `p`, or `p` resolved when it does not exist (yet). */
function realOrResolved(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/** Whether `dir` is, or lies in, one of `unsafe` (each already a real path or resolved). */
export function inUnsafe(dir: string, unsafe: readonly string[]): boolean {
  const real = realOrResolved(dir);
  return unsafe.some((u) => isInside(u, real) || isInside(realOrResolved(u), real));
}

/**
 * Directory names that npm, node and Python tools look for in each directory going up from the
 * working directory: a directory a run can write by one of these names beside an ancestor of the
 * working directory is found by them (a root `/srv/node_modules` for a server started in `/srv/op`).
 */
const LOOKED_UP_NAMES = new Set(['node_modules', '.node_modules', '.venv', 'venv', '__pypackages__']);

/**
 * Why `dir` may not be an operator server's working directory, or undefined: it lies in a directory
 * a run can write, or one of its ancestors does (npx, node and Python walk up from their working
 * directory for `node_modules/`, `package.json`, `.venv`…), or such a directory by a looked-up name
 * lies beside one of its ancestors.
 */
export function unsafeCwd(dir: string, unsafe: readonly string[]): string | undefined {
  const real = realOrResolved(dir);
  for (const u of unsafe) {
    for (const spelling of new Set([path.resolve(u), realOrResolved(u)])) {
      if (isInside(spelling, real)) return `${real} lies in ${spelling}, a directory a run can write`;
      if (LOOKED_UP_NAMES.has(path.basename(spelling)) && isInside(path.dirname(spelling), real)) {
        return `${spelling}, a directory a run can write, is found going up from ${real}`;
      }
    }
  }
  return undefined;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

/** The private directory, checked: never in (nor below, nor beside an ancestor of) a directory a run can write. */
export function checkedPrivateDir(
  privateDir: () => string,
  unsafe: readonly string[],
  use = 'it would start in its private directory',
): Checked<string> {
  let dir: string;
  try {
    dir = privateDir();
  } catch (err) {
    return { ok: false, error: `its private working directory could not be made: ${(err as Error).message}` };
  }
  const why = unsafeCwd(dir, unsafe);
  if (!why) return { ok: true, value: dir };
  return {
    ok: false,
    error:
      `${use}, but ${why} (npx, node and Python find packages and modules ` +
      "going up from there): an operator server runs with the worker's rights, so it is not started. Set " +
      'XDG_CACHE_HOME (the private directory is $XDG_CACHE_HOME/durable-agent/mcp, else ~/.cache/durable-agent/mcp) ' +
      'to a directory outside the workspace roots, or give the worker roots that do not hold it ' +
      '(--workspace-root, DURABLE_AGENT_WORKSPACE_ROOTS)',
  };
}

/**
 * The working directory of an operator server: `preferred` (the directory of the worker's
 * configuration file, else the worker's own working directory) unless a run could plant what is
 * found from it (see {@link unsafeCwd}); then this worker's private empty directory, checked the
 * same way (refused with the setting to change when it fails).
 */
export function operatorCwd(preferred: string, unsafe: readonly string[], privateDir: () => string): Checked<string> {
  if (path.isAbsolute(preferred) && !unsafeCwd(preferred, unsafe)) return { ok: true, value: preferred };
  return checkedPrivateDir(privateDir, unsafe);
}

/** Where tools keep caches and settings under HOME: moved into the private directory when HOME is unsafe. */
const HOME_REDIRECTS = ['npm_config_cache', 'UV_CACHE_DIR', 'XDG_CACHE_HOME', 'XDG_DATA_HOME', 'XDG_CONFIG_HOME'];

/**
 * An operator server's environment with its search paths cleaned: every entry that is relative
 * (empty included: both mean the working directory) or lies in a directory a run can write is
 * removed from `PATH`, `NODE_PATH` and `PYTHONPATH`; `PYTHONSAFEPATH=1` (Python 3.11+ then puts
 * neither the working directory nor a script's directory first on `sys.path`) and
 * `PYTHONNOUSERSITE=1` (no user site `~/.local/lib/python3.*`, whose `usercustomize.py` runs at
 * every start) unless the server's own `env` sets them. When `HOME` lies in a directory a run can
 * write, npm's and uv's caches and the XDG folders move to `privateDir` (unless the server's own
 * `env` sets them); without a safe private directory the server is not started.
 */
export function operatorEnv(
  env: Record<string, string>,
  own: Record<string, string> | undefined,
  unsafe: readonly string[],
  privateDir: () => string = () => {
    throw new Error('no private directory');
  },
): Checked<Record<string, string>> {
  const out: Record<string, string> = { ...env };
  for (const name of SEARCH_PATH_VARIABLES) {
    const value = out[name];
    if (value === undefined) continue;
    out[name] = value
      .split(path.delimiter)
      .filter((entry) => entry !== '' && path.isAbsolute(entry) && !inUnsafe(entry, unsafe))
      .join(path.delimiter);
  }
  if (own?.PYTHONSAFEPATH === undefined) out.PYTHONSAFEPATH = '1';
  if (own?.PYTHONNOUSERSITE === undefined) out.PYTHONNOUSERSITE = '1';
  const home = out.HOME;
  const moved = HOME_REDIRECTS.filter((name) => own?.[name] === undefined);
  if (home && moved.length && (!path.isAbsolute(home) || inUnsafe(home, unsafe))) {
    const use = `its HOME (${home}) lies in a directory a run can write, so its caches and settings would move to its private directory`;
    const dir = checkedPrivateDir(privateDir, unsafe, use);
    if (!dir.ok) return dir;
    for (const name of moved) {
      const target = path.join(dir.value, 'home', name.toLowerCase());
      mkdirSync(target, { recursive: true, mode: 0o700 });
      out[name] = target;
    }
  }
  return { ok: true, value: out };
}

/**
 * A private empty directory of this worker's (mode 0700), created on first use and removed by
 * `remove`: in durable-agent's own cache (`$XDG_CACHE_HOME/durable-agent/mcp`, else
 * `~/.cache/durable-agent/mcp`), which no workspace may hold or lie in (src/safe-fs/operator-files.ts).
 * Not the system's temporary directory: any local user, and a run without the sandbox, can write
 * `/tmp/node_modules`, which npx finds going up from `/tmp/…`.
 */
export class PrivateDirectory {
  private dir: string | undefined;
  private readonly base: string;

  constructor(env: NodeJS.ProcessEnv = process.env) {
    this.base = path.join(durableAgentCacheDir(env), 'mcp');
  }

  get path(): string {
    if (!this.dir) {
      mkdirSync(this.base, { recursive: true, mode: 0o700 });
      this.dir = mkdtempSync(path.join(this.base, 'worker-'));
    }
    return this.dir;
  }

  remove(): void {
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }
}

/**
 * Why a configuration file read as the operator's on the client (`run --mcp-config FILE`) is
 * refused, or undefined: it lies (as given or as it resolves) in the run's workspace or a workspace
 * root, where an earlier run's model could have written the servers that would now run
 * unsandboxed with the worker's rights and environment.
 */
export function clientConfigFileRefusal(file: string, workspace: string, roots: readonly string[]): string | undefined {
  const spelt = [...new Set([path.resolve(file), realOrResolved(file)])];
  const dirs: [string, string][] = [
    [workspace, "the run's workspace"],
    ...roots.map((r): [string, string] => [r, 'the workspace root']),
  ];
  for (const [dir, what] of dirs) {
    const found = [...new Set([path.resolve(dir), realOrResolved(dir)])].find((d) => spelt.some((f) => isInside(d, f)));
    if (found === undefined) continue;
    const resolves = spelt.length > 1 ? ` (it resolves to ${spelt[1]})` : '';
    return (
      `${file}${resolves} lies in ${what} ${found}, which a run's model can write: its servers would run ` +
      "unsandboxed with the worker's rights and environment, so it is not read. Move the file outside the " +
      'workspace and the workspace roots (DURABLE_AGENT_WORKSPACE_ROOTS, else the directory run starts in), or ' +
      "leave the project's servers in the workspace's own .mcp.json, which the worker runs sandboxed"
    );
  }
  return undefined;
}
