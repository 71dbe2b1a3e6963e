import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import type { McpServerConfig, McpSource } from '../shared/mcp';
import { sandboxEnv, type SandboxStatus } from '../sandbox';
import type { SandboxLimits } from '../sandbox/limits';
import type { Endpoint } from './connection';
import { expandConfig } from './expand';
import { inUnsafe, operatorCwd, operatorEnv } from './operator-launch';

/** Expands, in an operator server's configuration, to the run's workspace (its real path). */
export const WORKSPACE_VARIABLE = 'DURABLE_AGENT_WORKSPACE';

export interface EndpointContext {
  source: McpSource;
  workspace: string;
  network: boolean;
  /** The worker's environment (operator servers expand `${VAR}` from it). */
  env: Readonly<Record<string, string | undefined>>;
  sandbox: SandboxStatus;
  /** A sandboxed server's limits, as a bash call's (processes, /tmp and /dev/shm). */
  limits: SandboxLimits;
  /** Directories a run can write (the worker's workspace roots and this run's workspace). */
  unsafeDirs: readonly string[];
  /** An operator stdio server's preferred working directory (its configuration file's, else the worker's). */
  operatorDir: string;
  /**
   * A private empty directory (in durable-agent's cache): an operator server's working directory
   * when `operatorDir` is unsafe, and where its caches go when the worker's HOME is.
   */
  privateDir: () => string;
}

/**
 * How a server is reached, by where its configuration came from. Operator servers (the run's, the
 * worker's) run with the worker's rights: variables expand from the worker's environment and a
 * stdio server gets the SDK's default environment plus its own `env`, search paths cleaned, in a
 * working directory no run can write (src/mcp/operator-launch.ts). Workspace servers (the
 * model can write `.mcp.json`) get none of the worker's variables (only `${VAR:-default}`
 * defaults expand), their stdio servers run in the bash sandbox (workspace writable, no network
 * unless the run allows it, clean environment, a bash call's limits), and their HTTP servers need
 * the run's network.
 */
export function resolveEndpoint(
  config: McpServerConfig,
  c: EndpointContext,
): { ok: true; endpoint: Endpoint; sandboxed: boolean } | { ok: false; error: string } {
  const trusted = c.source !== 'workspace';
  // An operator server that needs the run's workspace names it: it never starts there (operator-launch.ts).
  const expanded = expandConfig(config, trusted ? { ...c.env, [WORKSPACE_VARIABLE]: c.workspace } : {});
  if (!expanded.ok) {
    return {
      ok: false,
      error: trusted
        ? `environment variable${expanded.missing.length > 1 ? 's' : ''} ${expanded.missing.join(', ')} not set on the worker`
        : `a workspace server cannot use the worker's environment variables (${expanded.missing.join(', ')}); give defaults (\${VAR:-value})`,
    };
  }
  const cfg = expanded.config;
  if (cfg.type === 'http') {
    let url: URL;
    try {
      url = new URL(cfg.url);
    } catch {
      return { ok: false, error: `'${cfg.url.slice(0, 200)}' is not a URL` };
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      return { ok: false, error: `URL scheme '${url.protocol}' is not http: or https:` };
    }
    if (!trusted && !c.network) {
      return {
        ok: false,
        error: 'a workspace HTTP server needs network access, and this run has none (network: true allows it)',
      };
    }
    return { ok: true, endpoint: { transport: 'http', url: url.href, headers: cfg.headers ?? {} }, sandboxed: false };
  }
  const args = cfg.args ?? [];
  if (trusted) {
    // Never the workspace: an operator server resolves its command, packages and modules from here.
    const where = operatorCwd(c.operatorDir, c.unsafeDirs, c.privateDir);
    if (!where.ok) return where;
    const cwd = where.value;
    if (cfg.command.includes('/') && inUnsafe(path.resolve(cwd, cfg.command), c.unsafeDirs)) {
      return {
        ok: false,
        error:
          `its command ${cfg.command.slice(0, 200)} lies in a directory a run can write (a workspace or the ` +
          "worker's workspace roots): an operator server runs with the worker's rights, so it is not started",
      };
    }
    const cleaned = operatorEnv(
      { ...getDefaultEnvironment(), ...(cfg.env ?? {}) },
      cfg.env,
      c.unsafeDirs,
      c.privateDir,
    );
    if (!cleaned.ok) return cleaned;
    const env = cleaned.value;
    const setpriv = dieWithWorker();
    const [command, commandArgs] = setpriv
      ? [setpriv, ['--pdeathsig', 'KILL', '--', cfg.command, ...args]]
      : [cfg.command, args];
    return {
      ok: true,
      endpoint: { transport: 'stdio', command, args: commandArgs, env, cwd },
      sandboxed: false,
    };
  }
  if (c.sandbox.mode === 'bwrap' && c.sandbox.bwrap) {
    // Started by the connection, which reserves the server's share of the sandbox's resources first.
    return {
      ok: true,
      endpoint: {
        transport: 'stdio',
        command: cfg.command,
        args,
        env: cfg.env ?? {},
        cwd: path.resolve(c.workspace),
        sandbox: { bwrap: c.sandbox.bwrap, network: c.network, limits: c.limits },
      },
      sandboxed: true,
    };
  }
  if (c.sandbox.mode === 'off') {
    // The operator turned the sandbox off for bash: workspace servers run unsandboxed too, with
    // the sandbox's clean environment (the worker's PATH) and none of the worker's variables.
    const env: Record<string, string> = { ...sandboxEnv(), PATH: process.env.PATH ?? sandboxEnv().PATH ?? '' };
    return {
      ok: true,
      endpoint: {
        transport: 'stdio',
        command: cfg.command,
        args,
        env: { ...env, ...(cfg.env ?? {}) },
        cwd: c.workspace,
      },
      sandboxed: false,
    };
  }
  return {
    ok: false,
    error: `a workspace stdio server runs only in the bash sandbox, which is unavailable: ${c.sandbox.detail}`,
  };
}

let setprivPath: string | null | undefined;
/**
 * util-linux's `setpriv`, which starts a server with a parent-death signal: a stdio server is
 * killed when its worker dies, even by SIGKILL (many servers do not exit on their stdin's end
 * while a call runs). Without it (not Linux), a server ends when it notices its stdin closed.
 * Sandboxed servers get the same from bwrap's --die-with-parent.
 */
function dieWithWorker(): string | undefined {
  if (setprivPath === undefined) {
    setprivPath =
      process.platform === 'linux' ? (['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p)) ?? null) : null;
  }
  return setprivPath ?? undefined;
}
