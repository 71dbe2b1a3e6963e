import { lstatSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { formatZodError } from '../shared/run/input';
import { mcpServersSchema, type McpServerConfig, type McpSource } from '../shared/mcp';

/** A configuration file larger than this is refused (it holds a few server entries). */
const MAX_CONFIG_FILE_BYTES = 256 * 1024;
/** The workspace's configuration, Claude Code's project file. */
export const WORKSPACE_MCP_FILE = '.mcp.json';
/** The worker-wide configuration file (the `mcpConfigFile` worker option overrides it); an operator's file. */
export { MCP_CONFIG_ENV_VAR } from '../safe-fs/operator-files';

export type ParsedServers =
  { ok: true; servers: Record<string, McpServerConfig>; warnings?: string[] } | { ok: false; error: string };

/** Transports Claude Code's files may name that this client does not speak: such an entry is skipped. */
const SKIPPED_TRANSPORTS = new Set(['sse', 'ws', 'websocket']);

/**
 * A configuration as Claude Code writes it: `{"mcpServers": {...}}`. The bare server map is taken
 * too (it is what the run input's `mcpServers` holds). A file copied from Claude Code may hold a
 * server of a transport this client does not speak (`"type": "sse"`, the older HTTP+SSE one): that
 * entry is skipped with a warning, the others are used. The run input's `mcpServers` (checked by
 * its schema alone) refuses such an entry.
 */
export function parseMcpConfig(raw: unknown, where: string): ParsedServers {
  const obj = raw as { mcpServers?: unknown } | null;
  let servers = typeof obj === 'object' && obj !== null && 'mcpServers' in obj ? obj.mcpServers : raw;
  const warnings: string[] = [];
  if (typeof servers === 'object' && servers !== null && !Array.isArray(servers)) {
    const kept = Object.entries(servers as Record<string, unknown>).filter(([name, server]) => {
      const type = (server as { type?: unknown } | null)?.type;
      if (typeof type !== 'string' || !SKIPPED_TRANSPORTS.has(type)) return true;
      warnings.push(
        `${where}: server '${name.slice(0, 40)}' is skipped: transport '${type}' is not supported ` +
          '(stdio, or "http" for Streamable HTTP, which most servers that offered SSE also serve)',
      );
      return false;
    });
    servers = Object.fromEntries(kept);
  }
  const parsed = mcpServersSchema().safeParse(servers);
  if (!parsed.success) return { ok: false, error: `${where}: ${formatZodError(parsed.error)}` };
  return { ok: true, servers: parsed.data, ...(warnings.length ? { warnings } : {}) };
}

/** Reads and checks a configuration file; `absent` when there is none (not an error for optional files). */
export async function readMcpConfigFile(file: string): Promise<ParsedServers | { ok: 'absent' }> {
  let text: string;
  try {
    // Synchronous, and no error for a missing file (the usual case): see `ownerOf` (src/context).
    const stat = lstatSync(file, { throwIfNoEntry: false });
    if (stat === undefined) return { ok: 'absent' };
    if (stat.isSymbolicLink()) return { ok: false, error: `${file}: a symbolic link is not followed` };
    if (!stat.isFile()) return { ok: false, error: `${file}: not a regular file` };
    if (stat.size > MAX_CONFIG_FILE_BYTES) {
      return { ok: false, error: `${file}: ${stat.size} bytes; the limit is ${MAX_CONFIG_FILE_BYTES}` };
    }
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { ok: 'absent' };
    return { ok: false, error: `${file}: ${(err as Error).message}` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `${file}: not valid JSON (${(err as Error).message})` };
  }
  return parseMcpConfig(json, file);
}

export interface ServerChoice {
  name: string;
  source: McpSource;
  config: McpServerConfig;
}

/**
 * The servers a run uses. On a name used twice, the operator's wins: the run's own over the
 * worker's, either over the workspace's (which the model can write).
 */
export function chooseServers(
  sources: { source: McpSource; servers: Record<string, McpServerConfig> }[],
  warn: (message: string) => void,
): ServerChoice[] {
  const order: McpSource[] = ['run', 'worker', 'workspace'];
  const chosen = new Map<string, ServerChoice>();
  for (const source of order) {
    for (const entry of sources.filter((s) => s.source === source)) {
      for (const [name, config] of Object.entries(entry.servers)) {
        const taken = chosen.get(name);
        if (taken) {
          if (taken.source !== source)
            warn(`${source} server '${name}' is ignored: the ${taken.source}'s has that name`);
          continue;
        }
        chosen.set(name, { name, source, config });
      }
    }
  }
  return [...chosen.values()];
}

/** The workspace's `.mcp.json`, if it has one. */
export function workspaceConfigFile(workspace: string): string {
  return path.join(workspace, WORKSPACE_MCP_FILE);
}
