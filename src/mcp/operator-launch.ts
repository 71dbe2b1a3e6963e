import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isInside } from '../tools/workspace';

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
 * The working directory of an operator server: `preferred` (the directory of the worker's
 * configuration file, else the worker's own working directory) unless it lies in a directory a
 * run can write; then a private empty directory of this worker's.
 */
export function operatorCwd(preferred: string, unsafe: readonly string[], privateDir: () => string): string {
  return path.isAbsolute(preferred) && !inUnsafe(preferred, unsafe) ? preferred : privateDir();
}

/**
 * An operator server's environment with its search paths cleaned: every entry that is relative
 * (empty included: both mean the working directory) or lies in a directory a run can write is
 * removed from `PATH`, `NODE_PATH` and `PYTHONPATH`; and `PYTHONSAFEPATH=1` (Python 3.11+ then
 * puts neither the working directory nor a script's directory first on `sys.path`) unless the
 * server's own `env` sets it.
 */
export function operatorEnv(
  env: Record<string, string>,
  own: Record<string, string> | undefined,
  unsafe: readonly string[],
): Record<string, string> {
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
  return out;
}

/**
 * A private empty directory (mode 0700, in the system's temporary directory, which the bash
 * sandbox never shows a run: its `/tmp` is its own), created on first use and removed by `remove`.
 */
export class PrivateDirectory {
  private dir: string | undefined;

  get path(): string {
    this.dir ??= mkdtempSync(path.join(os.tmpdir(), 'durable-agent-mcp-'));
    return this.dir;
  }

  remove(): void {
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }
}
