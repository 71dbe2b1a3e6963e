import { hashString } from '../shared/conversation';
import { jsonBytes } from '../shared/bounds';
import {
  MAX_MCP_TOOLS_BYTES,
  MAX_MCP_SCHEMA_BYTES,
  MAX_MCP_TOOLS_PER_SERVER,
  MAX_TOOL_NAME_CHARS_API,
  boundedDescription,
  mcpToolName,
  sideEffectOf,
  type McpServerListing,
  type McpToolEntry,
} from '../shared/mcp';

/** A tool as a server lists it (`tools/list`); every field is the server's word, checked here. */
export interface RawTool {
  name?: unknown;
  title?: unknown;
  description?: unknown;
  inputSchema?: unknown;
  annotations?: unknown;
}

/**
 * The tools a run offers from one server, as the model sees them: names made API-safe
 * (`mcp__<server>__<tool>`, letters, digits, `_`, `-`), descriptions and schemas bounded, classes
 * from the annotations of an operator's server only (`sideEffectOf`). A tool
 * that cannot be offered is left out with a warning saying why; nothing a server lists throws.
 */
export function toolEntries(
  server: string,
  raw: readonly RawTool[],
  /** An operator's server: its annotations give its tools' classes. A workspace server's are all `mutating`. */
  trusted = true,
): { tools: McpToolEntry[]; warnings: string[] } {
  const tools: McpToolEntry[] = [];
  const warnings: string[] = [];
  const seen = new Set<string>();
  for (const t of raw) {
    if (tools.length >= MAX_MCP_TOOLS_PER_SERVER) {
      warnings.push(`${server}: only the first ${MAX_MCP_TOOLS_PER_SERVER} of ${raw.length} tools are offered`);
      break;
    }
    if (typeof t?.name !== 'string' || t.name.length === 0) {
      warnings.push(`${server}: a tool without a name is left out`);
      continue;
    }
    const name = mcpToolName(server, t.name.replace(/[^A-Za-z0-9_-]/g, '_'));
    const shown = t.name.slice(0, 60);
    if (name.length > MAX_TOOL_NAME_CHARS_API) {
      warnings.push(`${server}: tool '${shown}' is left out: '${name}' is longer than ${MAX_TOOL_NAME_CHARS_API}`);
      continue;
    }
    if (seen.has(name)) {
      warnings.push(`${server}: tool '${shown}' is left out: another tool is also offered as '${name}'`);
      continue;
    }
    const schema = inputSchemaOf(t.inputSchema);
    if (!schema) {
      warnings.push(`${server}: tool '${shown}' is left out: its input schema is not a JSON object schema`);
      continue;
    }
    const bytes = jsonBytes(schema);
    if (bytes > MAX_MCP_SCHEMA_BYTES) {
      warnings.push(
        `${server}: tool '${shown}' is left out: its input schema is ${bytes} bytes (limit ${MAX_MCP_SCHEMA_BYTES})`,
      );
      continue;
    }
    seen.add(name);
    const description = boundedDescription(t.description ?? t.title ?? '');
    tools.push({
      name,
      tool: t.name,
      description,
      inputSchema: schema,
      sideEffect: sideEffectOf(t.annotations, trusted),
    });
  }
  return { tools, warnings };
}

function inputSchemaOf(schema: unknown): Record<string, unknown> | undefined {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return undefined;
  const s = schema as Record<string, unknown>;
  if (s.type !== 'object') return undefined;
  const { $schema: _dialect, ...rest } = s;
  try {
    // A copy: plain JSON, so what is hashed is what is recorded.
    return JSON.parse(JSON.stringify(rest)) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** The hash of a server's offered tools: a call learns from it whether the run still offers the same list. */
export function toolsHash(tools: readonly McpToolEntry[]): string {
  return hashString(JSON.stringify(tools));
}

/**
 * Keeps a run's tool definitions within MAX_MCP_TOOLS_BYTES (they are recorded in history and sent
 * to the model): servers in order, tools in order, until the budget is spent; the rest are left
 * out with a warning on their server.
 */
export function withinBudget(servers: McpServerListing[], budget = MAX_MCP_TOOLS_BYTES): McpServerListing[] {
  let left = budget;
  return servers.map((s) => {
    const kept: McpToolEntry[] = [];
    for (const tool of s.tools) {
      const bytes = jsonBytes(tool);
      if (bytes > left) break;
      left -= bytes;
      kept.push(tool);
    }
    if (kept.length === s.tools.length) return s;
    const warning = `${s.name}: ${s.tools.length - kept.length} of ${s.tools.length} tools are left out: a run's MCP tool definitions are limited to ${budget / 1024} KiB`;
    // The hash stays the server's: calls compare it with what their connection lists now.
    return { ...s, tools: kept, warnings: [...(s.warnings ?? []), warning] };
  });
}
