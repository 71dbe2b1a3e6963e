import * as os from 'node:os';
import * as path from 'node:path';
import { temporalConfigFilePath } from '../client/config';
import { isInside, realpathAllowMissingSync } from './workspace';

/**
 * The files a worker reads as its operator's (docs/file-safety.md, "The operator's files"): what they
 * hold runs with the worker's rights (hooks, MCP servers), speaks as the operator (agent prompts) or
 * holds credentials (connection profiles, TLS keys, SSH keys). One rule for all of them: a file the
 * model can write is no operator's file. So a workspace that holds one (or lies inside an operator's
 * folder) is refused at run start and before every call, and a file that resolves into the run's
 * workspace anyway is never read as the operator's.
 */

export const AGENTS_DIR_ENV_VAR = 'DURABLE_AGENT_AGENTS_DIR';
/** The worker-wide MCP configuration file (docs/mcp.md): src/mcp reads it, and it is an operator's file. */
export const MCP_CONFIG_ENV_VAR = 'DURABLE_AGENT_MCP_CONFIG';

/** One of the operator's files or folders. */
export interface OperatorPath {
  /** What it is, in a refusal: "the worker's MCP configuration file". */
  what: string;
  /** Where the operator sets it: the variable (or option) and its default. */
  setting: string;
  /** The path as configured (absolute). */
  path: string;
  /** A folder the worker lists: a workspace inside it could add files to it, and is refused too. */
  folder: boolean;
}

export interface OperatorPathOptions {
  /** The worker-wide hooks settings file (`DURABLE_AGENT_SETTINGS`). */
  settingsFile: string;
  /** The worker's MCP configuration file; default `DURABLE_AGENT_MCP_CONFIG`. */
  mcpConfigFile?: string;
  /** The operator's agents folder; default {@link workerAgentsDir}. */
  agentsDir?: string;
  env?: NodeJS.ProcessEnv;
}

/** The operator's agents folder: `DURABLE_AGENT_AGENTS_DIR`, else `~/.durable-agent/agents` (used when it exists). */
export function workerAgentsDir(env: NodeJS.ProcessEnv = process.env): { dir: string; configured: boolean } {
  const configured = env[AGENTS_DIR_ENV_VAR]?.trim();
  return configured
    ? { dir: path.resolve(configured), configured: true }
    : { dir: path.join(os.homedir(), '.durable-agent', 'agents'), configured: false };
}

const TLS_PATHS = ['TEMPORAL_TLS_CLIENT_CERT_PATH', 'TEMPORAL_TLS_CLIENT_KEY_PATH', 'TEMPORAL_TLS_SERVER_CA_CERT_PATH'];

/** Every file and folder the worker reads as its operator's, as configured. Codec keys are read from the environment only. */
export function operatorPaths(options: OperatorPathOptions): OperatorPath[] {
  const env = options.env ?? process.env;
  const mcp = options.mcpConfigFile ?? env[MCP_CONFIG_ENV_VAR]?.trim();
  const agents = options.agentsDir !== undefined ? path.resolve(options.agentsDir) : workerAgentsDir(env).dir;
  const file = (what: string, setting: string, p: string, folder = false): OperatorPath => ({
    what,
    setting,
    path: path.resolve(p),
    folder,
  });
  return [
    file("the worker's hooks settings file", 'DURABLE_AGENT_SETTINGS', options.settingsFile),
    ...(mcp ? [file("the worker's MCP configuration file", MCP_CONFIG_ENV_VAR, mcp)] : []),
    file("the operator's agents folder", `${AGENTS_DIR_ENV_VAR} or --agents-dir`, agents, true),
    file(
      "the worker's Temporal connection profile (it may hold an API key)",
      'TEMPORAL_CONFIG_FILE',
      temporalConfigFilePath(env),
    ),
    ...TLS_PATHS.flatMap((name) => {
      const p = env[name]?.trim();
      return p ? [file("the worker's TLS certificate or key", name, p)] : [];
    }),
    file("the worker's SSH keys", '~/.ssh', path.join(os.homedir(), '.ssh'), true),
    // The CLI runs the Temporal CLI it built there, and the embedded server keeps its database there.
    file(
      "durable-agent's cache (the Temporal CLI it runs)",
      'XDG_CACHE_HOME',
      path.join(userDir(env, 'XDG_CACHE_HOME', '.cache'), 'durable-agent'),
      true,
    ),
    file(
      "durable-agent's data (the embedded server's database)",
      'XDG_DATA_HOME',
      path.join(userDir(env, 'XDG_DATA_HOME', path.join('.local', 'share')), 'durable-agent'),
      true,
    ),
    ...HOME_TOOL_FOLDERS.map((name) =>
      file(
        `the worker's ~/${name} (programs, packages or settings that npx, node, python or other tools load from)`,
        'HOME',
        path.join(homeDir(env), name),
        true,
      ),
    ),
  ];
}

/**
 * The worker's home folders that tools load code or settings from: npm's cache (npx runs packages
 * from it), the XDG folders (Python's user site `~/.local/lib/python3.*`, uv's cache, pip's
 * settings), node's global folders, version managers and their shims. A workspace there could plant
 * what an operator's MCP server (or a hook, which runs with the worker's HOME) runs next.
 */
export const HOME_TOOL_FOLDERS = [
  '.npm',
  '.cache',
  '.local',
  '.config',
  '.node_modules',
  '.node_libraries',
  '.nvm',
  '.volta',
  '.yarn',
  '.bun',
  '.deno',
  '.pyenv',
  '.pip',
  '.ipython',
  '.cargo',
  '.rustup',
] as const;

/** The worker's home: `HOME` as set, else the system's. */
function homeDir(env: NodeJS.ProcessEnv): string {
  const home = env.HOME?.trim();
  return home && path.isAbsolute(home) ? home : os.homedir();
}

/** An XDG base directory as the CLI finds it (src/server): the variable, else its default in the home. */
function userDir(env: NodeJS.ProcessEnv, variable: string, inHome: string): string {
  return env[variable]?.trim() || path.join(os.homedir(), inHome);
}

/**
 * durable-agent's cache folder, protected above (`$XDG_CACHE_HOME/durable-agent`, else
 * `~/.cache/durable-agent`; a relative `XDG_CACHE_HOME` is ignored, as the XDG specification says).
 */
export function durableAgentCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const set = env.XDG_CACHE_HOME?.trim();
  return path.join(set && path.isAbsolute(set) ? set : path.join(homeDir(env), '.cache'), 'durable-agent');
}

/** The path as configured and as it resolves now (through links, dangling ones included). */
export function spellings(p: string): string[] {
  try {
    return [...new Set([p, realpathAllowMissingSync(p)])];
  } catch {
    return [p];
  }
}

/**
 * Where an operator's path lies in the workspace `real` (a real path), as configured or as it
 * resolves: the spelling found inside, or undefined. A folder also counts when the workspace lies in it.
 */
export function operatorPathInWorkspace(p: Pick<OperatorPath, 'path' | 'folder'>, real: string): string | undefined {
  return spellings(p.path).find((one) => isInside(real, one) || (p.folder && isInside(one, real)));
}

/** The refusal's words for an operator's file in a workspace: names it, its setting and the rule. */
export function operatorFileRefusal(p: OperatorPath, found: string): string {
  const where = found === p.path ? p.path : `${p.path}, which resolves to ${found}`;
  return `it holds ${p.what} (${where}; ${p.setting}): a file the model can write is never read as the operator's`;
}

/**
 * The operator's paths a worker's options name (`mcp.configFile`, `agentsDir`), for the workspace
 * rules; what they leave out comes from the environment. A shared MCP runtime keeps its file to
 * itself: `DURABLE_AGENT_MCP_CONFIG` is what is protected then.
 */
export function operatorFileOptions(deps: { mcp?: unknown; agentsDir?: string }): {
  mcpConfigFile?: string;
  agentsDir?: string;
} {
  const mcp = deps.mcp as { configFile?: unknown } | undefined;
  const plain = typeof mcp === 'object' && mcp !== null && Object.getPrototypeOf(mcp) === Object.prototype;
  const configFile = plain && typeof mcp.configFile === 'string' ? mcp.configFile : undefined;
  return {
    ...(configFile !== undefined ? { mcpConfigFile: configFile } : {}),
    ...(deps.agentsDir !== undefined ? { agentsDir: deps.agentsDir } : {}),
  };
}
