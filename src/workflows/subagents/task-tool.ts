import { MAX_PROMPT_BYTES } from '../../shared/constants';
import { cutChars, utf8Length } from '../../shared/bounds';
import type { ToolSpec } from '../../shared/messages';
import { TASK_TOOL_NAME, type AgentDefinition } from '../../shared/subagents';

/** The agent list in the tool's description stays within this many characters. */
const MAX_LISTING_CHARS = 8_000;
const MAX_DESCRIPTION_CHARS = 200;
const ACCEPTED = '{"prompt": string, "description"?: string, "agent"?: string}';

export interface TaskCall {
  prompt: string;
  description?: string;
  agent?: string;
}

/** The `task` tool as the model sees it: what it does, and the agents it may name. */
export function taskToolSpec(agents: readonly AgentDefinition[]): ToolSpec {
  let listing = '';
  for (const a of agents) {
    const line = `\n- ${a.name}: ${cutChars(a.description.replace(/\s+/g, ' '), 300)}`;
    if (listing.length + line.length > MAX_LISTING_CHARS) {
      listing += '\n- … (more agents not listed)';
      break;
    }
    listing += line;
  }
  return {
    name: TASK_TOOL_NAME,
    description:
      'Runs a subagent: a separate agent with a fresh conversation that works on one self-contained task and ' +
      "returns its final answer as this tool's result. It sees only the prompt you write (not this " +
      'conversation), so say everything it needs; it uses the same workspace and at most your tools. Several ' +
      "task calls in one turn run in parallel. Its spending counts against this run's budget." +
      (agents.length
        ? `\nAvailable agents (pass one as \`agent\`; omit it for a general-purpose subagent):${listing}`
        : '\nNo named agents are defined: omit `agent`.'),
    input_schema: {
      type: 'object',
      properties: {
        prompt: { type: 'string', description: 'The complete task for the subagent.' },
        description: { type: 'string', description: 'A short (3-5 words) label for the task, shown to operators.' },
        agent: {
          type: 'string',
          description: 'The named agent to run the task as.',
          ...(agents.length ? { enum: agents.map((a) => a.name) } : {}),
        },
      },
      required: ['prompt'],
      additionalProperties: false,
    },
  };
}

/** The call's input, or an error text naming what is accepted. */
export function parseTaskCall(raw: unknown): TaskCall | string {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return `Error: task expects ${ACCEPTED}.`;
  const input = raw as Record<string, unknown>;
  const unknown = Object.keys(input).filter((k) => !['prompt', 'description', 'agent'].includes(k));
  if (unknown.length)
    return `Error: task got unknown field(s) ${unknown.slice(0, 5).join(', ')}; accepted: ${ACCEPTED}.`;
  if (typeof input.prompt !== 'string' || !input.prompt.trim()) {
    return `Error: task needs a non-empty "prompt" string; accepted: ${ACCEPTED}.`;
  }
  if (utf8Length(input.prompt) > MAX_PROMPT_BYTES) {
    return `Error: the task's prompt is over ${MAX_PROMPT_BYTES} bytes; put large material in a file and name it.`;
  }
  if (input.description !== undefined && typeof input.description !== 'string') {
    return `Error: task's "description" must be a string; accepted: ${ACCEPTED}.`;
  }
  if (input.agent !== undefined && (typeof input.agent !== 'string' || !input.agent)) {
    return `Error: task's "agent" must be an agent's name; accepted: ${ACCEPTED}.`;
  }
  const description = typeof input.description === 'string' ? input.description.trim() : '';
  return {
    prompt: input.prompt.trim(),
    ...(description ? { description: cutChars(description.replace(/\s+/g, ' '), MAX_DESCRIPTION_CHARS) } : {}),
    ...(typeof input.agent === 'string' ? { agent: cutChars(input.agent, 100) } : {}),
  };
}
