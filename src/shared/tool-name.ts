/**
 * What a tool may be called. The providers refuse a request whose tool names break their rule (a
 * 400 that fails the run), so a bad name is refused where a tool is made (`defineTool`) and where a
 * worker's tools are put together (`ToolRegistry`), with a message that says what is accepted.
 * Pure code: used by the worker and the workflow.
 */
import { MCP_TOOL_PREFIX } from './mcp';
import { TASK_TOOL_NAME } from './subagents';
import { cutPrefix } from './well-formed';

/** The rule of both providers' APIs (Anthropic, OpenAI): 1 to 64 ASCII letters, digits, `_` or `-`. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/** Names the worker's own registry never holds but a run may offer: the subagent tool. */
export const RESERVED_TOOL_NAMES: readonly string[] = [TASK_TOOL_NAME];

/** Why `name` cannot be a tool's name (a sentence), or undefined when it can. */
export function toolNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string') return `a tool's name must be a string (got ${typeof name})`;
  const shown = JSON.stringify(name.length > 80 ? `${cutPrefix(name, 80)}…` : name);
  if (!TOOL_NAME_PATTERN.test(name)) {
    return (
      `tool name ${shown} is not accepted: the model providers take 1 to 64 ASCII letters, digits, ` +
      "'_' or '-' (no spaces, dots or other characters), e.g. 'lookup_price'"
    );
  }
  if (RESERVED_TOOL_NAMES.includes(name)) {
    return `tool name ${shown} is reserved: '${TASK_TOOL_NAME}' is the built-in subagent tool; choose another name`;
  }
  if (name.startsWith(MCP_TOOL_PREFIX)) {
    return `tool name ${shown} is not accepted: names starting with '${MCP_TOOL_PREFIX}' are MCP servers' tools`;
  }
  return undefined;
}
