/**
 * Subagents: the `task` tool runs a child `agentWorkflow` (docs/subagents.md). These are the shapes
 * the workflow, the worker (agent definitions) and the CLI (nested progress, transcript) agree on.
 */
import { defineSignal } from '@temporalio/workflow';
import { z } from 'zod';
import { onFirstUse } from './built-once';
import { utf8Length } from './bounds';
import type { Usage } from './messages';
import type { PendingApproval } from './run';

/** The built-in tool that starts a subagent. Input: `{ prompt, description?, agent? }`. */
export const TASK_TOOL_NAME = 'task';

/** How deep a tree may grow: a run at this depth is not offered `task`. The top-level run is depth 0. */
export const DEFAULT_MAX_SUBAGENT_DEPTH = 2;

/** Where an agent definition came from; workspace definitions are model-writable and untrusted. */
export type AgentDefinitionSource = 'input' | 'operator' | 'workspace';

/**
 * A named subagent: Claude Code's agent file format (frontmatter `name`, `description`, `tools`,
 * `model`; the body is the system prompt), or the run input's `agents` entry.
 */
export interface AgentDefinition {
  name: string;
  description: string;
  /** The subagent's system prompt. */
  prompt: string;
  /** Tool names it may use; absent: its parent's tools. Never more than its parent's. */
  tools?: string[];
  /** Model id; absent or `inherit`: its parent's model. */
  model?: string;
  source: AgentDefinitionSource;
  /** File it was read from (operator and workspace definitions). */
  path?: string;
}

/** Activity `loadAgentDefinitions` input: the run's workspace (real path) and the input's own definitions. */
export interface LoadAgentDefinitionsInput {
  workspace?: string;
}

export interface LoadAgentDefinitionsResult {
  agents: AgentDefinition[];
  /** Files skipped and why (bad frontmatter, too large, refused path), said once to the operator. */
  warnings: string[];
}

/** A subagent as the parent's `state` query lists it while it runs. */
export interface SubagentSummary {
  workflowId: string;
  toolUseId: string;
  agent?: string;
  description?: string;
}

/** A pending approval that belongs to a descendant run: `approve <parent> <toolUseId>` decides it. */
export interface SubagentApprovalOrigin {
  workflowId: string;
  agent?: string;
}

/** The largest `maxSubagentDepth` a run may ask for: each level is a workflow (and an id suffix) more. */
export const MAX_SUBAGENT_DEPTH_LIMIT = 5;
/** Named agents a run's input may define, and the bounds of each (the whole input stays within its 256 KiB). */
export const MAX_INPUT_AGENTS = 32;
export const MAX_AGENT_NAME_CHARS = 64;
export const MAX_AGENT_DESCRIPTION_CHARS = 1_024;
export const MAX_AGENT_PROMPT_BYTES = 32 * 1024;
/** A subagent's answer as its parent's tool result: longer answers are cut (the child's own result keeps it whole). */
export const MAX_TASK_RESULT_BYTES = 30_000;
/** Pending approvals one subagent report may carry up to its parent. */
export const MAX_REPORTED_APPROVALS = 32;

/**
 * What agent names look like: the file name of an agent definition, without `.md`. Frozen in a
 * workflow bundle (src/worker/workflow-bundle.ts): use it with `test`, and give zod a copy, since
 * zod resets a pattern's `lastIndex` before each check.
 */
export const AGENT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

function buildSubagentSchemas() {
  const agentNameSchema = z
    .string()
    .min(1)
    .max(MAX_AGENT_NAME_CHARS, `an agent name is at most ${MAX_AGENT_NAME_CHARS} characters`)
    .regex(
      new RegExp(AGENT_NAME_PATTERN),
      'an agent name is letters, digits, ".", "_" and "-", starting with a letter or digit',
    );

  /** Run input `agents`: name → definition, as Claude Code's agent files define them. */
  const agentsInputSchema = z
    .record(
      agentNameSchema,
      z.strictObject({
        description: z.string().trim().min(1, 'an agent needs a description').max(MAX_AGENT_DESCRIPTION_CHARS),
        prompt: z
          .string()
          .trim()
          .min(1, 'an agent needs a prompt (its system prompt)')
          .refine((p) => utf8Length(p) <= MAX_AGENT_PROMPT_BYTES, {
            message: `an agent's prompt is at most ${MAX_AGENT_PROMPT_BYTES} bytes`,
          }),
        tools: z.array(z.string().min(1).max(128)).max(64).optional(),
        model: z.string().min(1).max(200).optional(),
      }),
    )
    .refine((agents) => Object.keys(agents).length <= MAX_INPUT_AGENTS, {
      message: `at most ${MAX_INPUT_AGENTS} agents`,
    });

  /** Internal input of a subagent run, written by its parent: how deep it is and which agent it runs as. */
  const subagentInputSchema = z.strictObject({
    depth: z.number().int().min(1).max(MAX_SUBAGENT_DEPTH_LIMIT),
    agent: agentNameSchema.optional(),
    /** The parent's `task` call this run answers (its trace span's `gen_ai.tool.call.id`). */
    toolUseId: z.string().min(1).max(256).optional(),
  });
  return { agentsInputSchema, subagentInputSchema };
}

const subagentSchemas = onFirstUse('subagents', buildSubagentSchemas);
/** The run input's `agents` (built on first use: src/shared/built-once.ts). */
export const agentsInputSchema = () => subagentSchemas().agentsInputSchema;
/** The run input's internal `subagent` (built on first use). */
export const subagentInputSchema = () => subagentSchemas().subagentInputSchema;
export type AgentsInput = z.input<ReturnType<typeof agentsInputSchema>>;
export type SubagentInput = z.input<ReturnType<typeof subagentInputSchema>>;

/**
 * A subagent tells its parent what its tree has spent so far (cumulative) and which approvals wait in
 * it, whenever either changes. Signals are recorded in both histories; one per change, never per tick.
 */
export interface SubagentReport {
  workflowId: string;
  /**
   * The subagent's first execution's run id: its parent accepts a report only from the child it
   * started (workflow id and run id), so a client that signals the parent cannot pose as one.
   */
  runId?: string;
  usage: Usage;
  costUsd: number | null;
  pendingApprovals: PendingApproval[];
  /** Approvals decided (or timed out) in the subagent's tree since its last report: the parent records each. */
  resolved?: ResolvedApproval[];
  /** Budget reservations (ids the parent granted) whose calls have ended since the last report: their spending is in `costUsd`. */
  released?: string[];
}

/**
 * A subagent asks its parent to reserve a model call's expected cost against the tree's budget
 * before the call (docs/subagents.md); the parent answers with `subagentGrantSignal`.
 */
export interface SubagentReserve {
  workflowId: string;
  /** The subagent's first execution's run id, as on its reports. */
  runId: string;
  /** The reservation's id, unique within the subagent's run. */
  id: string;
  usd: number;
}
export const subagentReserveSignal = defineSignal<[SubagentReserve]>('durableAgent.subagentReserve');

/** The parent's answer to a reservation: `granted` false when the tree's budget has no room left. */
export interface SubagentGrant {
  id: string;
  granted: boolean;
}
export const subagentGrantSignal = defineSignal<[SubagentGrant]>('durableAgent.subagentGrant');

/** Reservation ids one report may release; a run has at most a few calls in flight. */
export const MAX_REPORTED_RELEASES = 256;

/** A decision on an approval that waited in a subagent (or below it), as its parent records it. */
export interface ResolvedApproval {
  toolUseId: string;
  name: string;
  approved: boolean;
  reason?: string;
  /** The run the call waited in. */
  subagent: SubagentApprovalOrigin;
}

/** Decisions one report may carry; more in one report's time are rare (each needs an operator). */
export const MAX_REPORTED_RESOLUTIONS = 32;
export const subagentReportSignal = defineSignal<[SubagentReport]>('durableAgent.subagentReport');

/** A decision on a pending approval, passed down from the run an operator decided it at. */
export interface SubagentDecision {
  toolUseId: string;
  approved: boolean;
  reason?: string;
}
export const subagentDecisionSignal = defineSignal<[SubagentDecision]>('durableAgent.subagentDecision');

/** What a run input says about subagents: whether a top-level run with it is offered `task`. */
export interface TaskRequest {
  tools?: readonly string[];
  agents?: unknown;
  maxSubagentDepth?: number;
  toolProtocol?: string;
  subagent?: { depth: number };
}

/**
 * A run offers `task` when it asks for it (`tools` names it, or, without a tool list, it gives
 * `agents` or `maxSubagentDepth`), uses native tool calls, and is above the depth limit.
 */
export function offersTaskTool(input: TaskRequest): boolean {
  const depth = input.subagent?.depth ?? 0;
  const maxDepth = input.maxSubagentDepth ?? DEFAULT_MAX_SUBAGENT_DEPTH;
  const asked = input.tools
    ? input.tools.includes(TASK_TOOL_NAME)
    : input.agents !== undefined || input.maxSubagentDepth !== undefined;
  return asked && depth < maxDepth && (input.toolProtocol ?? 'native') === 'native';
}

/**
 * The run's tools as its details show them: its list (with `task` when the run offers it), or, without
 * one, the built-in tools and the worker's own (custom and MCP tools are the worker's to say).
 */
export function describeRunTools(input: TaskRequest, builtins: readonly string[]): string {
  const task = offersTaskTool(input) && !input.tools?.includes(TASK_TOOL_NAME) ? [TASK_TOOL_NAME] : [];
  if (input.tools) return [...input.tools, ...task].join(', ') || '(none)';
  return `${[...builtins, ...task].join(', ')}, and the worker's custom and MCP tools`;
}
