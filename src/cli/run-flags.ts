import * as path from 'node:path';
import { readMcpConfigFile } from '../mcp/config';
import { rootsFromEnv } from '../tools/workspace-root-dirs';
import {
  DEFAULT_APPROVAL_TIMEOUT_SECONDS,
  DEFAULT_MAX_ITERATIONS,
  PRIORITY_RANGE,
  TOOL_PROTOCOLS,
  type AgentRunInput,
  type RunToolChoice,
} from '../shared';
import { UsageError, type FlagSpec, type FlagValues } from './flags';
import { readOutputSchemaFile } from './output-schema-file';
import { PromptRefused } from './prompt-source';
import { visibleLine } from './terminal-text';

export type RunInputKey = keyof AgentRunInput & string;

/** A `--session` run's priority when `--priority` is not given: ahead of the default. */
export const SESSION_PRIORITY = 2;
type InputPart = Partial<AgentRunInput>;

/**
 * A `run` flag. One that sets run input names the fields in `sets`; its value goes into that one
 * field as it is (a boolean only when given), unless `toInput` says how. A flag without `sets` is
 * the CLI's own (`--json`, `--detach`…).
 */
export interface RunFlagSpec extends FlagSpec {
  readonly sets?: readonly RunInputKey[];
  /** From the flag's (checked) value to the run input it sets; may read a file. */
  readonly toInput?: (value: never, flags: Readonly<Record<string, unknown>>) => InputPart | Promise<InputPart>;
}

/**
 * `--tool-choice auto|none|any|required|<tool>`: `any` (or `required`) makes the model call some tool, a
 * tool name forces that tool until it is called.
 */
function toolChoiceFlag(value: string): RunToolChoice {
  if (value === 'auto' || value === 'none' || value === 'any' || value === 'required') return value;
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(value)) {
    throw new UsageError(
      `--tool-choice must be auto, none, any, required or a tool name, got '${visibleLine(value.slice(0, 80))}'`,
      'run',
    );
  }
  return { type: 'tool', name: value };
}

/** `--mcp-config FILE`, read here and sent as the run's `mcpServers`, unexpanded: `${VAR}` expands on the worker. */
async function mcpServersFile(file: string, flags: Readonly<Record<string, unknown>> = {}): Promise<InputPart> {
  // Never a file a run could have written (docs/mcp.md, "Where operator servers run").
  const ws = typeof flags.workspace === 'string' ? flags.workspace : process.cwd();
  const { clientConfigFileRefusal } = await import('../mcp/operator-launch');
  const refused = clientConfigFileRefusal(file, ws, rootsFromEnv() ?? [process.cwd()]);
  if (refused) throw new PromptRefused(`--mcp-config: ${refused}`);
  const read = await readMcpConfigFile(path.resolve(file));
  if (read.ok !== true) {
    throw new PromptRefused(`--mcp-config: ${read.ok === 'absent' ? `${file} does not exist` : read.error}`);
  }
  for (const warning of read.warnings ?? []) process.stderr.write(`--mcp-config: ${warning}\n`);
  return { mcpServers: read.servers };
}

/**
 * Every flag of `durable-agent run`, in the order `--help` lists them: parsing, help and the run
 * input all come from here. A new run-input field with a flag is one entry (docs/contributing.md).
 * Numbers are checked by the run input's schema, so its message (naming the field) is the one shown.
 */
export const RUN_FLAGS = [
  {
    name: 'prompt-file',
    type: 'string',
    value: 'F|-',
    help: 'read the prompt from file F (- for standard input) instead of the argument',
  },
  {
    name: 'model',
    type: 'string',
    value: 'M',
    help: 'claude-…, openai:<model> or offline-demo (default: DURABLE_AGENT_MODEL, else Claude with a key)',
    sets: ['model'],
  },
  {
    name: 'max-iterations',
    type: 'integer',
    value: 'N',
    help: `model calls before a closing summary ends the run max_iterations (default ${DEFAULT_MAX_ITERATIONS}; a session: per message)`,
    sets: ['maxIterations'],
  },
  {
    name: 'max-subagent-depth',
    type: 'integer',
    value: 'N',
    help: 'offer the task tool: subagents nest at most N deep (docs/subagents.md; default: no task tool)',
    sets: ['maxSubagentDepth'],
  },
  {
    name: 'max-session-iterations',
    type: 'integer',
    value: 'N',
    help: "a session's bound on model calls across all its messages",
    sets: ['maxSessionIterations'],
  },
  {
    name: 'max-budget-usd',
    type: 'number',
    value: 'X',
    help: 'end the run max_budget once its cost reaches X US dollars',
    sets: ['maxBudgetUsd'],
  },
  { name: 'max-tokens', type: 'integer', value: 'N', help: 'output tokens per model call', sets: ['maxTokens'] },
  {
    name: 'workspace',
    type: 'string',
    value: 'DIR',
    help: "where the tools act (default: here with the inline worker, else the worker's directory)",
    sets: ['workspace'],
    toInput: (dir: string) => ({ workspace: path.resolve(dir) }),
  },
  {
    name: 'system',
    type: 'string',
    value: 'S',
    help: 'text added to the system prompt',
    sets: ['systemPrompt'],
  },
  {
    name: 'system-replace',
    type: 'string',
    value: 'S',
    help: 'a system prompt that replaces the assembled one',
    sets: ['systemPrompt', 'systemReplace'],
    toInput: (text: string) => ({ systemPrompt: text, systemReplace: true }),
  },
  {
    name: 'tool-protocol',
    type: 'string',
    value: TOOL_PROTOCOLS.join('|'),
    choices: TOOL_PROTOCOLS,
    help: 'how the model calls tools: its native tool calling, or <tool_code> blocks in its text',
    sets: ['toolProtocol'],
  },
  {
    name: 'tool-choice',
    type: 'string',
    value: 'auto|none|any|required|TOOL',
    help: 'any/required: the model must call a tool; a tool name: the model must call that tool (until it does)',
    sets: ['toolChoice'],
    toInput: (value: string) => ({ toolChoice: toolChoiceFlag(value) }),
  },
  {
    name: 'session',
    type: 'boolean',
    help: `after an answer, wait for more messages (send, end); priority ${SESSION_PRIORITY} unless --priority says otherwise`,
    // Interactive sessions go before detached batch runs when the rate budget is short (docs/models.md, "Rate limits");
    // --priority, later in this table, overrides it.
    sets: ['session', 'priority'],
    toInput: () => ({ session: true, priority: SESSION_PRIORITY }),
  },
  {
    name: 'priority',
    type: 'integer',
    value: 'N',
    help: `when the provider key's rate budget is short, 1 goes first, 5 last (default ${PRIORITY_RANGE.default}; a --session ${SESSION_PRIORITY}; docs/models.md)`,
    sets: ['priority'],
  },
  {
    name: 'fairness-key',
    type: 'string',
    value: 'K',
    help: "runs of equal priority share the rate budget fairly by this key, e.g. a tenant (default: the run's id)",
    sets: ['fairnessKey'],
  },
  {
    name: 'approve',
    type: 'boolean',
    help: 'mutating tool calls wait for approve/deny',
    sets: ['approveMutating'],
  },
  {
    name: 'approval-timeout',
    type: 'number',
    value: 'SECONDS',
    help: `an approval not given by then is denied (default ${DEFAULT_APPROVAL_TIMEOUT_SECONDS})`,
    sets: ['approvalTimeoutSeconds'],
  },
  {
    name: 'require-done-tool',
    type: 'boolean',
    help: 'the run ends only when the model calls the done tool',
    sets: ['requireDoneTool'],
  },
  { name: 'network', type: 'boolean', help: 'commands (bash) may use the network', sets: ['network'] },
  {
    name: 'mcp-config',
    type: 'string',
    value: 'FILE',
    help: 'MCP servers from a file in Claude Code\'s {"mcpServers": …} shape',
    sets: ['mcpServers'],
    toInput: mcpServersFile,
  },
  {
    name: 'output-schema',
    type: 'string',
    value: 'FILE',
    help: 'the final answer must be JSON valid against this JSON Schema',
    sets: ['outputSchema'],
    toInput: async (file: string) => ({ outputSchema: await readOutputSchemaFile(file) }),
  },
  { name: 'id', type: 'string', value: 'ID', help: 'the workflow id (default: a new one); refused when taken' },
  {
    name: 'new',
    type: 'boolean',
    help: 'with --id: start a new run even though a run under that id has ended',
  },
  {
    name: 'detach',
    type: 'boolean',
    help: 'start the run, print its id and leave (a durable-agent worker must serve the task queue)',
  },
  { name: 'json', type: 'boolean', help: 'print the AgentRunResult as JSON on stdout; progress goes to stderr' },
  {
    name: 'no-inline-worker',
    type: 'boolean',
    help: 'start no worker in this process: dedicated workers serve the run',
  },
  {
    name: 'debug',
    type: 'boolean',
    help: "the inline worker logs each iteration's sizes, timings and decisions (DURABLE_AGENT_DEBUG=1)",
  },
] as const satisfies readonly RunFlagSpec[];

export type RunFlagValues = FlagValues<typeof RUN_FLAGS>;

/**
 * Run-input fields that no `run` flag sets, and where they come from instead. With the flags'
 * `sets`, this covers every field of the input schema (a test keeps it so).
 */
export const RUN_INPUT_WITHOUT_FLAG: Readonly<Partial<Record<RunInputKey, string>>> = {
  prompt: 'the argument or --prompt-file',
  contextWindowTokens: 'DURABLE_AGENT_CONTEXT_WINDOW',
  tools: 'clients (AgentRunInput)',
  sessionIdleTimeoutSeconds: 'clients (AgentRunInput)',
  permissions: 'clients (AgentRunInput)',
  commandPolicy: 'clients (AgentRunInput)',
  timeouts: 'clients (AgentRunInput)',
  compactAtBytes: 'clients (AgentRunInput)',
  continueAsNewAfter: 'clients (AgentRunInput)',
  agents: "clients (AgentRunInput); the worker's and the workspace's agent files",
  subagent: 'the parent run, when a task call starts a subagent',
  resume: 'the workflow itself, across continue-as-new',
  checkpointIgnore: "clients (AgentRunInput); the worker's checkpoints option",
  restoreFrom: 'durable-agent fork (AgentRun.fork), or clients',
  forkedFrom: 'durable-agent fork (AgentRun.fork)',
  conversation: 'durable-agent fork (AgentRun.fork): the origin run up to the fork turn',
};

/** The run input the given flags set (everything but the prompt and the defaults `run` fills in). */
export async function runInputFromFlags(values: RunFlagValues): Promise<InputPart> {
  if (values.system !== undefined && values['system-replace'] !== undefined) {
    throw new UsageError('give --system (added to the system prompt) or --system-replace, not both', 'run');
  }
  let input: InputPart = {};
  for (const spec of RUN_FLAGS as readonly RunFlagSpec[]) {
    const value = (values as Record<string, unknown>)[spec.name];
    if (!spec.sets || value === undefined || value === false) continue;
    const part = spec.toInput
      ? await (spec.toInput as (v: unknown, all: Record<string, unknown>) => InputPart | Promise<InputPart>)(
          value,
          values,
        )
      : { [spec.sets[0]!]: value };
    input = { ...input, ...part };
  }
  return input;
}
