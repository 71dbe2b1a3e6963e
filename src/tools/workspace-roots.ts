import { existsSync, lstatSync, realpathSync, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseSwitch } from '../shared/switch';
import { operatorFileRefusal, operatorPaths, spellings, type OperatorPath } from '../safe-fs/operator-files';
import { isInside, pinWorkspace, WorkspaceError } from '../safe-fs/workspace';
import { realOrSelf, rootProblem, rootsFromEnv, systemReason, WORKSPACE_ROOTS_ENV_VAR } from './workspace-root-dirs';

export { createMissingRoots, rootProblem, rootsFromEnv, WORKSPACE_ROOTS_ENV_VAR } from './workspace-root-dirs';

/**
 * Which workspaces a worker accepts: the operator decides, once, by the worker's workspace roots.
 * A run's workspace is admitted at run start (docs/file-safety.md, "Workspace roots"): it must
 * resolve, through every symlink, to a directory inside a root, and must not be `/`, a system
 * directory, or a directory that holds the worker's own settings, keys or code. The real path it
 * resolved to is recorded in the run's history; every later tool call and hook checks that this
 * path still is itself (no symlink put in its way since), so no run can redirect another.
 */

/**
 * `1`: a workspace given by a path with a symbolic link inside a root is admitted (at its real
 * path). Off by default: a run whose workspace held that folder could have put the link there.
 */
export const WORKSPACE_LINKS_ENV_VAR = 'DURABLE_AGENT_WORKSPACE_LINKS';

/** A workspace refused by the worker's rules: the run fails at start, non-retryably. */
export class WorkspaceRefusedError extends WorkspaceError {
  constructor(
    readonly rule: string,
    message: string,
  ) {
    super(message);
  }
}

interface Protected extends OperatorPath {
  /** As configured, and as it resolves (through symlinks, dangling ones included). */
  paths: string[];
}

export interface WorkspacePolicyOptions {
  /** Workspace roots (any form; resolved here). Default: `DURABLE_AGENT_WORKSPACE_ROOTS`, else `defaultRoot`. */
  roots?: string[];
  /** The root when nothing is configured: the worker's working directory. */
  defaultRoot?: string;
  /** The worker-wide hooks settings file. */
  settingsFile: string;
  /** The worker's MCP configuration file (the MCP option `configFile`); default `DURABLE_AGENT_MCP_CONFIG`. */
  mcpConfigFile?: string;
  /** The operator's agents folder (`--agents-dir`); default `DURABLE_AGENT_AGENTS_DIR`, else `~/.durable-agent/agents`. */
  agentsDir?: string;
  /** Admit a workspace path through a symbolic link inside a root; default `DURABLE_AGENT_WORKSPACE_LINKS`. */
  allowLinks?: boolean;
  env?: NodeJS.ProcessEnv;
}

/** The package this code belongs to (the worker's code), found by its package.json. */
function packageRoot(): string | undefined {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'bin', 'durable-agent.js'))) return dir;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/**
 * The worker's code: no workspace may lie in it, nor hold it. Two installations are the developer's
 * own project, where a workspace may hold the code and only lying inside it is refused: a source
 * checkout (a package root with `.git`, on which `npm start` runs the agent; its built code and
 * installed dependencies are protected) and a project that installed durable-agent in its
 * `node_modules` (where `npx durable-agent run` runs in the project).
 */
function codeRule(): { dirs: string[]; mayHold: boolean } {
  const root = packageRoot();
  if (!root) return { dirs: [], mayHold: true };
  // As they are spelt and as they resolve (node_modules may be a link to a shared install).
  const both = (dirs: string[]) => [...new Set(dirs.flatMap((d) => [d, realOrSelf(d)]))];
  if (existsSync(path.join(root, '.git'))) {
    return { dirs: both([path.join(root, 'dist'), path.join(root, 'node_modules')]), mayHold: true };
  }
  const inProject = root.split(path.sep).includes('node_modules');
  return { dirs: both([root]), mayHold: inProject };
}

/** How long a resolution of the worker's protected paths is reused (see `WorkspacePolicy`). */
export const PROTECTED_PATHS_TTL_MS = 1000;

/**
 * A worker's workspace rules. Built once at worker start: a root that is `/` or a system directory,
 * or that does not exist, is an error then (the worker does not start).
 */
export class WorkspacePolicy {
  readonly roots: readonly string[];
  private readonly tmp = realOrSelf(os.tmpdir());
  private readonly protectedPaths: OperatorPath[];
  private readonly code: { dirs: string[]; mayHold: boolean };
  private readonly allowLinks: boolean;

  constructor(options: WorkspacePolicyOptions) {
    const env = options.env ?? process.env;
    this.allowLinks = options.allowLinks ?? parseSwitch(WORKSPACE_LINKS_ENV_VAR, env[WORKSPACE_LINKS_ENV_VAR]);
    const configured = options.roots ?? rootsFromEnv(env) ?? [options.defaultRoot ?? process.cwd()];
    this.roots = [...new Set(configured.map((root) => this.realRoot(root)))];
    this.protectedPaths = operatorPaths({
      settingsFile: options.settingsFile,
      ...(options.mcpConfigFile !== undefined ? { mcpConfigFile: options.mcpConfigFile } : {}),
      ...(options.agentsDir !== undefined ? { agentsDir: options.agentsDir } : {}),
      env,
    });
    this.code = codeRule();
  }

  private realRoot(root: string): string {
    const why = rootProblem(root);
    if (why) throw new WorkspaceError(why);
    return realpathSync(path.resolve(root));
  }

  /**
   * The roots that hold one of the worker's own files (its settings file first), for the worker's
   * start-up lines: workspaces there are refused when they hold the file, folders beside it are not.
   */
  async rootsHoldingOwnFiles(): Promise<string[]> {
    const lines: string[] = [];
    for (const p of this.resolvedProtectedNow()) {
      for (const root of this.roots) {
        const held = p.paths.find((one) => isInside(root, one));
        if (held)
          lines.push(`the workspace root ${root} holds ${p.what} (${held}): no workspace holding it is accepted`);
      }
    }
    return lines;
  }

  /** The last resolution of the protected paths, and when it was made (see `resolvedProtectedNow`). */
  private protectedCache?: { at: number; resolved: Protected[] };

  /**
   * The paths as they resolve now: protected files may be missing, or links the worker's user
   * changed. Resolved without the thread pool (see {@link realpathAllowMissingSync}: a dozen thread
   * pool round trips cost a busy worker more than the call they guard), at most once per
   * {@link PROTECTED_PATHS_TTL_MS}: resolving them before every tool call was a third of a busy
   * worker's CPU (docs/benchmarks.md, "Worker cost"), and only the worker's own user can change them.
   */
  private resolvedProtectedNow(): Protected[] {
    const now = performance.now();
    const cached = this.protectedCache;
    if (cached && now - cached.at < PROTECTED_PATHS_TTL_MS) return cached.resolved;
    const resolved = this.resolveProtectedNow();
    this.protectedCache = { at: now, resolved };
    return resolved;
  }

  private resolveProtectedNow(): Protected[] {
    return this.protectedPaths.map((p) => ({ ...p, paths: spellings(p.path) }));
  }

  private refuse(rule: string, workspace: string, why: string): WorkspaceRefusedError {
    return new WorkspaceRefusedError(
      rule,
      `The workspace ${workspace} is refused (${rule}): ${why}. This worker's workspace roots: ` +
        `${this.roots.join(', ')} (set with --workspace-root or ${WORKSPACE_ROOTS_ENV_VAR}; docs/file-safety.md).`,
    );
  }

  /**
   * Admit a run's workspace at run start: its real path, or a {@link WorkspaceRefusedError} that
   * names the rule and the roots.
   */
  async admit(workspace: string): Promise<string> {
    if (typeof workspace !== 'string' || workspace === '' || workspace.includes('\0')) {
      throw this.refuse('not a path', JSON.stringify(workspace), 'a workspace is a directory path');
    }
    const lexical = path.resolve(workspace);
    let real: string;
    try {
      real = realpathSync.native(lexical);
    } catch {
      throw this.refuse('missing', workspace, 'it does not exist');
    }
    const admitted = this.check(workspace, lexical, real);
    let link: { at: string; root: string } | undefined;
    try {
      link = real === lexical || this.allowLinks ? undefined : this.linkInRoots(lexical);
    } catch {
      throw this.refuse('moved', workspace, 'a folder on its way changed while it was checked');
    }
    if (link) {
      throw this.refuse(
        'symlink in its path',
        workspace,
        `${link.at} is a symbolic link in the workspace root ${link.root}, which a run could have put there ` +
          `(it leads to ${real}); give the workspace by its real path, or let this worker follow such links ` +
          `(${WORKSPACE_LINKS_ENV_VAR}=1)`,
      );
    }
    return admitted;
  }

  /**
   * The first symbolic link on the way to `lexical` that lies in a root (its folder inside one, the
   * root itself included): any run whose workspace holds that folder could have made it. Links above
   * the roots (a root reached through a link, `/tmp` on macOS) are the machine's, not a run's.
   */
  private linkInRoots(lexical: string): { at: string; root: string } | undefined {
    let folder = path.parse(lexical).root;
    for (const name of path.relative(folder, lexical).split(path.sep)) {
      const at = path.join(folder, name);
      if (lstatSync(at, { throwIfNoEntry: false })?.isSymbolicLink()) {
        const root = this.roots.find((r) => isInside(r, realpathSync.native(folder)));
        if (root) return { at, root };
      }
      folder = at;
    }
    return undefined;
  }

  /**
   * The rules, for a workspace whose real path is known. Synchronous file system calls (a stat and
   * the protected paths' real paths, microseconds): they run before every tool call and hook, where
   * a dozen thread pool round trips cost a busy worker more than the MCP call they guard.
   */
  private check(workspace: string, lexical: string, real: string): string {
    if (!statSync(real).isDirectory()) throw this.refuse('not a directory', workspace, 'it is not a directory');
    const protectedNow = this.resolvedProtectedNow();
    // The rules below are a function of the real path and of the protected paths' resolution alone.
    if (lexical === real && this.passed?.against === protectedNow && this.passed.paths.has(real)) return real;
    if (!this.roots.some((root) => isInside(root, real))) {
      const via = real !== lexical ? ` (it resolves to ${real})` : '';
      throw this.refuse('outside the workspace roots', workspace, `it is not inside a workspace root${via}`);
    }
    const system = systemReason(real, this.tmp);
    if (system) throw this.refuse('system directory', workspace, system);
    for (const p of protectedNow) {
      const held = p.paths.find(
        (one) => isInside(real, one) || isInside(lexical, one) || (p.folder && isInside(one, real)),
      );
      if (held) throw this.refuse("worker's own files", workspace, operatorFileRefusal(p, held));
    }
    const code = this.code.dirs.find((dir) => isInside(dir, real) || (!this.code.mayHold && isInside(real, dir)));
    if (code) throw this.refuse("worker's own files", workspace, `the worker's code is there (${code})`);
    if (lexical === real) {
      if (this.passed?.against !== protectedNow) this.passed = { against: protectedNow, paths: new Set() };
      this.passed.paths.add(real);
    }
    return real;
  }

  /**
   * Real paths that passed the rules, with the protected paths' resolution they were checked
   * against: forgotten when that resolution is renewed (at most {@link PROTECTED_PATHS_TTL_MS}
   * later), so a re-link by the worker's user is seen as soon as without this, and the set holds at
   * most the workspaces checked in one period. The checks before each tool call then cost the
   * real path and the `stat`, which are what detect a swapped workspace.
   */
  private passed?: { against: Protected[]; paths: Set<string> };

  /**
   * Before each tool call and hook: the workspace the run recorded must still be its own real path
   * (no part of it replaced by a symlink since) and still be admitted.
   */
  async verify(recorded: string): Promise<string> {
    const lexical = path.resolve(recorded);
    if (lexical.includes('\0'))
      throw this.refuse('not a path', JSON.stringify(lexical), 'a workspace is a directory path');
    let real: string;
    try {
      real = realpathSync.native(lexical);
    } catch {
      throw this.refuse('missing', lexical, 'it does not exist');
    }
    if (real !== lexical) {
      throw this.refuse(
        'moved',
        recorded,
        `it now resolves to ${real}: a symlink replaced part of it since the run started`,
      );
    }
    // Resolved once: the rules run on this real path (the same checks as at run start).
    const admitted = this.check(lexical, lexical, real);
    pinWorkspace(admitted);
    return admitted;
  }
}
