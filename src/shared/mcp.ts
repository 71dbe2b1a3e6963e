import { z } from 'zod';
import { onFirstUse } from './built-once';
import { jsonBytes, utf8Length } from './bounds';
import { cutPrefix } from './well-formed';

/**
 * MCP servers as Claude Code configures them (`mcpServers`), and what a run records about them:
 * the servers it uses and where each came from, their tools as the model sees them
 * (`mcp__<server>__<tool>`), and the side-effect class each tool's annotations give it. Shared by
 * the client (run input), the workflow (deterministic; no I/O here) and the worker.
 */

export const MCP_TOOL_PREFIX = 'mcp__';
/** Servers one configuration may name. */
export const MAX_MCP_SERVERS = 20;
/** Tools one server may offer a run; more are left out (and the run is told). */
export const MAX_MCP_TOOLS_PER_SERVER = 100;
/** A tool's description as the model sees it (characters). */
export const MAX_MCP_DESCRIPTION_CHARS = 2000;
/** A tool's input schema as JSON (bytes); a larger one leaves the tool out. */
export const MAX_MCP_SCHEMA_BYTES = 16 * 1024;
/** All of a run's MCP tool definitions as JSON (bytes): they are recorded and sent to the model. */
export const MAX_MCP_TOOLS_BYTES = 128 * 1024;
/** One configuration as JSON (bytes). */
export const MAX_MCP_CONFIG_BYTES = 32 * 1024;
/** API tool names: letters, digits, `_` and `-`, at most 64 characters. */
export const MAX_TOOL_NAME_CHARS_API = 64;

const SERVER_NAME = /^[A-Za-z0-9_-]{1,40}$/;
const text = (what: string, max = 4096) =>
  z.string().min(1, `${what} must be a non-empty string`).max(max, `${what} must be at most ${max} characters`);
const stringMap = (what: string) =>
  z
    .record(z.string().min(1).max(200), z.string().max(4096))
    .refine((m) => Object.keys(m).length <= 100, { message: `${what} holds at most 100 entries` });

function buildMcpSchemas() {
  const mcpStdioServerSchema = z.strictObject({
    type: z.literal('stdio').optional(),
    command: text('command'),
    args: z.array(z.string().max(4096)).max(100, 'args holds at most 100 entries').optional(),
    env: stringMap('env').optional(),
  });
  const mcpHttpServerSchema = z.strictObject({
    type: z.literal('http'),
    url: text('url'),
    headers: stringMap('headers').optional(),
  });

  const serverSchema = z.unknown().superRefine((value, ctx) => {
    const type = (value as { type?: unknown } | null)?.type;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      ctx.addIssue({
        code: 'custom',
        message: 'a server is an object: {command, args, env} or {type: "http", url, headers}',
      });
      return;
    }
    if (type !== undefined && type !== 'stdio' && type !== 'http') {
      ctx.addIssue({
        code: 'custom',
        path: ['type'],
        message: `transport '${String(type)}' is not supported; use stdio ({command, args, env}) or "http" (Streamable HTTP)`,
      });
      return;
    }
    const checked = (type === 'http' ? mcpHttpServerSchema : mcpStdioServerSchema).safeParse(value);
    if (!checked.success) {
      for (const issue of checked.error.issues)
        ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
    }
  });

  /** The `mcpServers` object: server name → stdio or Streamable HTTP server. */
  const mcpServersSchema = z
    .record(z.string(), serverSchema)
    .superRefine((servers, ctx) => {
      const names = Object.keys(servers);
      if (names.length > MAX_MCP_SERVERS) {
        ctx.addIssue({ code: 'custom', message: `at most ${MAX_MCP_SERVERS} servers, got ${names.length}` });
      }
      for (const name of names) {
        if (!SERVER_NAME.test(name) || name.includes('__') || name.endsWith('_')) {
          ctx.addIssue({
            code: 'custom',
            path: [name],
            message:
              'a server name is 1-40 letters, digits, _ or - (no "__", not ending in "_": the model sees ' +
              'mcp__<server>__<tool>, and the server must be known from it)',
          });
        }
      }
      const bytes = jsonBytes(servers);
      if (bytes > MAX_MCP_CONFIG_BYTES) {
        ctx.addIssue({
          code: 'custom',
          message: `the configuration is ${bytes} bytes; the limit is ${MAX_MCP_CONFIG_BYTES}`,
        });
      }
    })
    .transform(
      (servers) =>
        servers as Record<string, z.infer<typeof mcpStdioServerSchema> | z.infer<typeof mcpHttpServerSchema>>,
    );
  return { mcpStdioServerSchema, mcpHttpServerSchema, mcpServersSchema };
}

const mcpSchemas = onFirstUse('mcp', buildMcpSchemas);
/** The run input's `mcpServers` (built on first use: src/shared/built-once.ts). */
export const mcpServersSchema = () => mcpSchemas().mcpServersSchema;

export type McpStdioServer = z.infer<ReturnType<typeof mcpSchemas>['mcpStdioServerSchema']>;
export type McpHttpServer = z.infer<ReturnType<typeof mcpSchemas>['mcpHttpServerSchema']>;
export type McpServerConfig = McpStdioServer | McpHttpServer;

/** Where a server's configuration came from: the run (input or `--mcp-config`), the worker's file, the workspace. */
export type McpSource = 'run' | 'worker' | 'workspace';
export type McpSideEffect = 'read_only' | 'idempotent' | 'mutating';

/** A tool as the run records it and the model sees it. */
export interface McpToolEntry {
  /** `mcp__<server>__<tool>` */
  name: string;
  /** The tool's own name on its server. */
  tool: string;
  description: string;
  inputSchema: Record<string, unknown>;
  sideEffect: McpSideEffect;
}

/** One server of a run: where it came from, and its tools (or why it has none). */
export interface McpServerListing {
  name: string;
  source: McpSource;
  transport: 'stdio' | 'http';
  /** Workspace stdio servers: run in the bash sandbox. */
  sandboxed?: boolean;
  /** Run and workspace servers: the configuration, unexpanded, so every call uses what run start read. */
  config?: McpServerConfig;
  tools: McpToolEntry[];
  /** Hash of the server's tool list as this worker makes it offerable (names, descriptions, schemas, classes). */
  toolsHash: string;
  /** Why the server offers no tools: it failed to start, timed out, or spoke bad JSON-RPC. */
  error?: string;
  /** Things the run is told: tools left out, cut descriptions. */
  warnings?: string[];
}

/** What a call to an MCP tool carries to the worker (in `runTool`'s input). */
export interface McpCallRef {
  server: string;
  tool: string;
  source: McpSource;
  config?: McpServerConfig;
  sideEffect: McpSideEffect;
  /** The list the run offers: a call on a server whose list differs says so in its result. */
  toolsHash: string;
}

/** Input of the `listMcpTools` activity: servers to list again (a change was reported). */
export interface ListMcpToolsInput {
  servers: { name: string; source: McpSource; config?: McpServerConfig }[];
  workspace?: string;
  network?: boolean;
}
export interface ListMcpToolsOutput {
  servers: McpServerListing[];
}

export function mcpToolName(server: string, tool: string): string {
  return `${MCP_TOOL_PREFIX}${server}__${tool}`;
}

export function isMcpToolName(name: string): boolean {
  return name.startsWith(MCP_TOOL_PREFIX);
}

/**
 * `mcp__github__create_issue` → `mcp__github`: the permission key for all of a server's tools.
 * Exact because a server name has no `__` and does not end in `_` (the configuration's schema):
 * the first `__` after the prefix is the one that follows the server's name, whatever the tool's.
 */
export function mcpServerKey(name: string): string | undefined {
  if (!isMcpToolName(name)) return undefined;
  const end = name.indexOf('__', MCP_TOOL_PREFIX.length);
  return end < 0 ? undefined : name.slice(0, end);
}

/**
 * The side-effect class MCP annotations give: readOnlyHint, idempotentHint, else mutating. Only an
 * operator's server is taken at its word: a workspace server's annotations are claims by code the
 * model can write, which may never make a call looser (run without approval, re-run after a lost
 * worker), so its tools are all `mutating` (`trusted` false).
 */
export function sideEffectOf(annotations: unknown, trusted = true): McpSideEffect {
  if (!trusted) return 'mutating';
  const a = (typeof annotations === 'object' && annotations !== null ? annotations : {}) as Record<string, unknown>;
  if (a.readOnlyHint === true) return 'read_only';
  if (a.idempotentHint === true) return 'idempotent';
  return 'mutating';
}

/** One line per server for the run's start: `github (run, http): 12 tools`. */
export function describeMcpServer(s: McpServerListing): string {
  const where = `${s.source}, ${s.transport}${s.sandboxed ? ', sandboxed' : ''}`;
  if (s.error) return `${s.name} (${where}): unavailable: ${s.error}`;
  return `${s.name} (${where}): ${s.tools.length} tool${s.tools.length === 1 ? '' : 's'}`;
}

/** A bounded, printable description (a server's text is not trusted to be short). */
export function boundedDescription(description: unknown): string {
  const d = typeof description === 'string' ? description : '';
  return utf8Length(d) <= MAX_MCP_DESCRIPTION_CHARS * 4 && d.length <= MAX_MCP_DESCRIPTION_CHARS
    ? d
    : `${cutPrefix(d, MAX_MCP_DESCRIPTION_CHARS - 1)}…`;
}
