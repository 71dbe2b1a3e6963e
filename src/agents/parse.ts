import { oneLine, splitFrontmatter } from '../context/frontmatter';
import type { AgentDefinition, AgentDefinitionSource } from '../shared/subagents';
import {
  MAX_AGENT_DESCRIPTION_CHARS,
  MAX_AGENT_MODEL_CHARS,
  MAX_AGENT_NAME_CHARS,
  MAX_AGENT_TOOL_NAME_CHARS,
  MAX_AGENT_TOOLS,
} from './limits';

/**
 * Claude Code's agent file: Markdown that starts with YAML frontmatter (`name`, `description`,
 * `tools`, `model`) whose body is the agent's system prompt. Parsing is pure and never throws: a file
 * that breaks a rule gives the rule, in words, for the warning that names the file.
 */

export type ParsedAgent = { ok: true; agent: AgentDefinition } | { ok: false; problem: string };

/** Lowercase letters and digits in words joined by single hyphens (Claude Code's agent names). */
const AGENT_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
/** Tool names: the built-in ones, custom tools and `mcp__server__tool`. */
const TOOL_NAME = new RegExp(`^[A-Za-z0-9_.:-]{1,${MAX_AGENT_TOOL_NAME_CHARS}}$`);
/** Model ids as the CLI's `--model` takes them (`claude-…`, `openai:<model>`, `offline-demo`). */
const MODEL_ID = new RegExp(`^[A-Za-z0-9][A-Za-z0-9_.:/@-]{0,${MAX_AGENT_MODEL_CHARS - 1}}$`);

/**
 * Claude Code's names of its built-in tools, for the durable-agent tools that do the same, so that an
 * agent file copied from `.claude/agents/` keeps its tools. Claude Code's other tools (`WebFetch`,
 * `NotebookEdit`, …) have no counterpart: they match no tool, and the loader warns about them.
 */
export const CLAUDE_CODE_TOOL_NAMES: Readonly<Record<string, string>> = Object.freeze(
  Object.assign(Object.create(null) as Record<string, string>, {
    Read: 'read_file',
    Write: 'write_file',
    Edit: 'edit_file',
    Glob: 'glob',
    Grep: 'grep',
    Bash: 'bash',
    Task: 'task',
  }),
);

/** A tool name as durable-agent spells it: Claude Code's names of built-in tools are translated. */
export function toolNameOf(name: string): string {
  return CLAUDE_CODE_TOOL_NAMES[name] ?? name;
}

/** `tools: a, b` or `tools: [a, b]`; undefined when absent (the parent's tools). */
function parseTools(value: unknown): { ok: true; tools?: string[] } | { ok: false; problem: string } {
  if (value === undefined || value === null) return { ok: true };
  const list =
    typeof value === 'string'
      ? value.split(',').map((t) => t.trim())
      : Array.isArray(value) && value.every((t) => typeof t === 'string')
        ? (value as string[]).map((t) => t.trim())
        : undefined;
  if (!list) return { ok: false, problem: 'its tools are not a comma-separated string or a list of names' };
  const written = [...new Set(list.filter((t) => t !== ''))];
  if (written.length > MAX_AGENT_TOOLS) return { ok: false, problem: `it lists more than ${MAX_AGENT_TOOLS} tools` };
  const bad = written.find((t) => !TOOL_NAME.test(t));
  if (bad !== undefined) {
    return {
      ok: false,
      problem: `its tool ${JSON.stringify(bad.slice(0, 40))} is not a tool name (letters, digits, '_', '-', '.', ':')`,
    };
  }
  return { ok: true, tools: [...new Set(written.map(toolNameOf))] };
}

function parseModel(value: unknown): { ok: true; model?: string } | { ok: false; problem: string } {
  if (value === undefined || value === null || value === 'inherit') return { ok: true };
  if (typeof value !== 'string' || !MODEL_ID.test(value)) {
    return {
      ok: false,
      problem: `its model is not 'inherit' or a model id (at most ${MAX_AGENT_MODEL_CHARS} characters)`,
    };
  }
  return { ok: true, model: value };
}

/** An agent file's text → its definition, or the rule it breaks. */
export function parseAgentFile(text: string, source: AgentDefinitionSource, file?: string): ParsedAgent {
  const split = splitFrontmatter(text);
  if (!split.ok) return split;
  const { name, description } = split.data;
  if (typeof name !== 'string' || name.length === 0) return { ok: false, problem: 'its frontmatter has no name' };
  if (name.length > MAX_AGENT_NAME_CHARS || !AGENT_NAME.test(name)) {
    return {
      ok: false,
      problem: `its name ${JSON.stringify(name.slice(0, MAX_AGENT_NAME_CHARS))} is not 1-${MAX_AGENT_NAME_CHARS} lowercase letters, digits and single hyphens`,
    };
  }
  if (typeof description !== 'string' || description.trim() === '') {
    return { ok: false, problem: 'its frontmatter has no description' };
  }
  const line = oneLine(description);
  if (line.length > MAX_AGENT_DESCRIPTION_CHARS) {
    return { ok: false, problem: `its description is longer than ${MAX_AGENT_DESCRIPTION_CHARS} characters` };
  }
  const tools = parseTools(split.data['tools']);
  if (!tools.ok) return tools;
  const model = parseModel(split.data['model']);
  if (!model.ok) return model;
  const prompt = split.body.trim();
  if (prompt === '') return { ok: false, problem: 'its body (the system prompt) is empty' };
  return {
    ok: true,
    agent: {
      name,
      description: line,
      prompt,
      ...(tools.tools !== undefined ? { tools: tools.tools } : {}),
      ...(model.model !== undefined ? { model: model.model } : {}),
      source,
      ...(file !== undefined ? { path: file } : {}),
    },
  };
}
