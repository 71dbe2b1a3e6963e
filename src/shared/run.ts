import { z } from 'zod';
import { onFirstUse } from './built-once';
import { utf8Length, jsonBytes } from './bounds';
import {
  DEFAULT_ANTHROPIC_MODEL,
  DEFAULT_MAX_ITERATIONS,
  DEFAULT_MAX_TOKENS,
  MAX_PROMPT_BYTES,
  MAX_RUN_INPUT_BYTES,
  MAX_SYSTEM_PROMPT_BYTES,
} from './constants';
import { runTimeoutsSchema } from './run-timeouts';
import { mcpServersSchema } from './mcp';
import { ACCEPTED_ENCODING_HINT, describeUndecodable, isUndecodable } from './undecodable';
import { outputSchemaSchema } from './output-schema';
import { toolChoiceProblem, toolChoiceSchema } from './tool-choice';
import type { ConversationSnapshot } from './conversation';
import type { StopReason, Usage } from './messages';
import {
  MAX_SUBAGENT_DEPTH_LIMIT,
  TASK_TOOL_NAME,
  agentsInputSchema,
  subagentInputSchema,
  type SubagentApprovalOrigin,
  type SubagentSummary,
} from './subagents';

/** Names of the built-in tools. The registry on the worker must provide exactly these. */
export const BUILTIN_TOOL_NAMES = ['bash', 'read_file', 'write_file', 'edit_file', 'glob', 'grep'] as const;

/** Side-effect class of each built-in tool, known to the workflow for approval policies. Others count as mutating. */
export const BUILTIN_SIDE_EFFECTS: Readonly<Record<string, 'read_only' | 'mutating'>> = {
  bash: 'mutating',
  read_file: 'read_only',
  write_file: 'mutating',
  edit_file: 'mutating',
  glob: 'read_only',
  grep: 'read_only',
};

/** The tool a run with `requireDoneTool` must call to finish; opt-in, never offered otherwise. */
export const DONE_TOOL_NAME = 'done';

export const PERMISSIONS = ['allow', 'deny', 'ask'] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const TOOL_PROTOCOLS = ['native', 'xml'] as const;
export type ToolProtocol = (typeof TOOL_PROTOCOLS)[number];

export const DEFAULT_APPROVAL_TIMEOUT_SECONDS = 900;
export const DEFAULT_SESSION_IDLE_TIMEOUT_SECONDS = 24 * 60 * 60;

function buildContinuationSchema() {
  const count = z.number().int().min(0);
  const REQUIRED_BLOCK_FIELDS = new Map([
    ['text', ['text']],
    ['tool_use', ['id', 'name']],
    ['tool_result', ['tool_use_id', 'content']],
  ]);
  const blockSchema = z.looseObject({ type: z.string() }).superRefine((block, ctx) => {
    const b = block as Record<string, unknown>;
    const need = (key: string) => {
      if (typeof b[key] !== 'string') ctx.addIssue({ code: 'custom', path: [key], message: `${key} must be a string` });
    };
    if (block.type === 'text') need('text');
    for (const key of REQUIRED_BLOCK_FIELDS.get(block.type) ?? []) need(key);
  });
  const messageSchema = z.strictObject({
    role: z.enum(['user', 'assistant']),
    content: z.union([z.string(), z.array(blockSchema)]),
  });
  const usageSchema = z.strictObject({
    inputTokens: count,
    outputTokens: count,
    cacheReadInputTokens: count,
    cacheCreationInputTokens: count,
  });
  /** The continuation state, as strictly as the rest of the input: nothing in it can fail a workflow task. */
  const runContinuationSchema = z.strictObject({
    conversation: z.strictObject({
      id: z.string().min(1),
      messages: z.array(messageSchema).min(1),
      syncedLength: count,
      cachedToolResults: z.array(z.string()),
    }),
    iteration: count,
    usage: usageSchema,
    costUsd: z.number().min(0).nullable(),
    lastStopReason: z.string().nullable().optional(),
    lastAssistantText: z.string(),
    events: z.array(z.looseObject({ seq: count, kind: z.string() })),
    eventSeq: count,
    continuations: count,
    compactions: count,
    needsCompaction: z.boolean(),
    pendingMessages: z.array(z.string()),
    awaitingInput: z.boolean(),
    lastCompactionIteration: count.optional(),
    /** A session handed over while waiting for input: when its idle timeout ends (epoch ms). */
    idleDeadline: z.number().optional(),
    workerQueue: z.string().optional(),
    /** The run's calls go to `workerQueue` (a call missed the conversation cache on the shared queue). */
    callsPinned: z.boolean().optional(),
    /** Text of answers cut at max_tokens that the next answer continues. */
    textPrefix: z.string().optional(),
    /** Model calls since the session's current message began (a session's `maxIterations` bounds each message). */
    turnIterations: count.optional(),
    /** The system prompt assembled at run start (it is assembled once per run, not per execution). */
    context: z
      .strictObject({
        /** The workspace's real path, admitted by the worker at run start. */
        workspace: z.string().optional(),
        system: z.string(),
        sources: z.array(z.looseObject({ kind: z.string() })),
        warnings: z.array(z.string()),
      })
      .optional(),
    /** Hook events the worker reported at run start (docs/hooks.md): only these schedule hook activities. */
    hookEvents: z.array(z.string()).optional(),
    /** Stop hooks that kept the run going in a row (bounded by MAX_STOP_BLOCKS across executions). */
    stopBlocks: count.optional(),
    /** `task` calls made so far: the next subagent's id is `<workflowId>.task-<taskCount + 1>`. */
    taskCount: count.optional(),
  });

  return runContinuationSchema;
}

/** The continuation state's schema (built on first use: src/shared/built-once.ts). */
export const runContinuationSchema = onFirstUse('run-continuation', buildContinuationSchema);

/** Everything a run needs to go on in a fresh execution after continue-as-new. */
export type RunContinuation = Omit<
  z.output<ReturnType<typeof runContinuationSchema>>,
  'conversation' | 'events' | 'lastStopReason'
> & {
  conversation: ConversationSnapshot;
  /** The newest progress events, so a follower's cursor goes on across executions. */
  events: RunEvent[];
  lastStopReason?: StopReason | null;
};

/** An optional positive number of seconds, at most `days` days. */
const secondsUpTo = (field: string, days: number) =>
  z
    .number()
    .positive(`${field} must be a positive number of seconds`)
    .max(days * 24 * 3600, `${field} must be at most ${days} days`)
    .optional();

/** Longest tool name a run's `tools` may hold (providers allow 64; MCP names get some room). */
export const MAX_TOOL_NAME_CHARS = 128;
/** What a name in a run's `tools` looks like; any tool of the worker (built-in, custom, MCP) may be named. */
const TOOL_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;

function buildRunInputSchema() {
  /**
   * Run input, validated at the client and again in the workflow. Unknown keys are rejected so a
   * misspelt option (`maxIteration`) is an error rather than silently ignored.
   */
  const agentRunInputSchema = z
    .strictObject({
      prompt: z
        .string()
        .trim()
        .min(1, 'prompt must be a non-empty string')
        .superRefine((p, ctx) => {
          const bytes = utf8Length(p);
          if (bytes <= MAX_PROMPT_BYTES) return;
          ctx.addIssue({
            code: 'custom',
            message:
              `prompt is ${bytes} bytes; the limit is ${MAX_PROMPT_BYTES} bytes (${MAX_PROMPT_BYTES / 1024} KiB). ` +
              'Put large material in a file in the workspace and ask the agent to read it.',
          });
        }),
      model: z
        .string()
        .min(1, 'model must be a non-empty model id such as claude-sonnet-5-5')
        .max(200, 'model must be at most 200 characters')
        .refine((m) => !/^openai:\s*$/.test(m), { message: "model 'openai:' needs a model name: openai:<model>" })
        .optional(),
      systemPrompt: z
        .string()
        .refine((p) => utf8Length(p) <= MAX_SYSTEM_PROMPT_BYTES, {
          message: `systemPrompt must be at most ${MAX_SYSTEM_PROMPT_BYTES} bytes (${MAX_SYSTEM_PROMPT_BYTES / 1024} KiB)`,
        })
        .optional(),
      maxIterations: z
        .number()
        .int('maxIterations must be a whole number')
        .min(1, 'maxIterations must be at least 1')
        .max(100_000, 'maxIterations must be at most 100000')
        .optional(),
      /** A session's bound on model calls across all its messages (`maxIterations` bounds each message's turn). */
      maxSessionIterations: z
        .number()
        .int('maxSessionIterations must be a whole number')
        .min(1, 'maxSessionIterations must be at least 1')
        .max(1_000_000, 'maxSessionIterations must be at most 1000000')
        .optional(),
      maxBudgetUsd: z.number().positive('maxBudgetUsd must be a positive number of US dollars').optional(),
      maxTokens: z
        .number()
        .int('maxTokens must be a whole number')
        .min(1, 'maxTokens must be at least 1')
        .max(128_000, 'maxTokens must be at most 128000')
        .optional(),
      workspace: z.string().min(1, 'workspace must be a directory path').optional(),
      /** `systemPrompt` replaces the assembled system prompt instead of adding to it. */
      systemReplace: z.boolean().optional(),
      /** How the model calls tools: its native tool calling, or the text protocol (`<tool_code>` blocks) for models without it. */
      toolProtocol: z
        .enum(TOOL_PROTOCOLS, { error: () => `toolProtocol must be one of: ${TOOL_PROTOCOLS.join(', ')}` })
        .optional(),
      tools: z.array(z.string().min(1)).optional(),
      /** `auto` (default), `none`, or a tool the first model call must call (docs/configuration.md). */
      toolChoice: toolChoiceSchema().optional(),
      contextWindowTokens: z
        .number()
        .int('contextWindowTokens must be a whole number')
        .min(1_000, 'contextWindowTokens must be at least 1000')
        .optional(),
      session: z.boolean().optional(),
      sessionIdleTimeoutSeconds: secondsUpTo('sessionIdleTimeoutSeconds', 30),
      permissions: z
        .record(
          z.string().min(1),
          z.enum(PERMISSIONS, { error: () => `a permission must be one of: ${PERMISSIONS.join(', ')}` }),
        )
        .optional(),
      approveMutating: z.boolean().optional(),
      approvalTimeoutSeconds: secondsUpTo('approvalTimeoutSeconds', 7),
      requireDoneTool: z.boolean().optional(),
      /** Commands (bash) may use the network; the sandbox gives them none otherwise. */
      network: z.boolean().optional(),
      /** Commands this run denies on top of the worker's policy (a run cannot allow what the worker denies). */
      commandPolicy: z
        .strictObject({
          deny: z
            .array(z.string().trim().min(1, 'a denied command must be non-empty').max(200))
            .max(100, 'commandPolicy.deny holds at most 100 entries'),
        })
        .optional(),
      /** MCP servers for this run, in Claude Code's `mcpServers` shape (`run --mcp-config FILE` sets it); docs/mcp.md. */
      mcpServers: mcpServersSchema().optional(),
      /** The final answer must be JSON valid against this JSON Schema (docs/output.md). */
      outputSchema: outputSchemaSchema().optional(),
      /** Per-run liveness timeouts and retry bounds of model and tool calls; defaults in constants.ts. */
      timeouts: runTimeoutsSchema().optional(),
      compactAtBytes: z
        .number()
        .int('compactAtBytes must be a whole number')
        .min(10_000, 'compactAtBytes must be at least 10000')
        .max(1_500_000, 'compactAtBytes must be at most 1500000 (payloads are capped at 2 MiB)')
        .optional(),
      continueAsNewAfter: z
        .strictObject({
          events: z.number().int().min(50, 'continueAsNewAfter.events must be at least 50').optional(),
          bytes: z.number().int().min(10_000, 'continueAsNewAfter.bytes must be at least 10000').optional(),
        })
        .optional(),
      /** Named subagents the `task` tool may run (docs/subagents.md), on top of the worker's agent files. */
      agents: agentsInputSchema().optional(),
      /** How deep subagents may nest (default DEFAULT_MAX_SUBAGENT_DEPTH, 2); a run at this depth is not offered `task`. */
      maxSubagentDepth: z
        .number()
        .int('maxSubagentDepth must be a whole number')
        .min(0, 'maxSubagentDepth must be at least 0')
        .max(MAX_SUBAGENT_DEPTH_LIMIT, `maxSubagentDepth must be at most ${MAX_SUBAGENT_DEPTH_LIMIT}`)
        .optional(),
      /** Internal: set by a parent run on the subagents it starts (their depth and agent). */
      subagent: subagentInputSchema().optional(),
      /**
       * Internal: the state a run carries into its next execution after continue-as-new. The workflow
       * accepts it only in an execution that was continued as new, and checks its shape as strictly.
       */
      resume: z
        .custom<RunContinuation>()
        .superRefine((value, ctx) => {
          const checked = runContinuationSchema().safeParse(value);
          if (checked.success) return;
          for (const issue of checked.error.issues)
            ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
        })
        .optional(),
    })
    .superRefine((input, ctx) => {
      const { resume: _resume, ...own } = input;
      const bytes = jsonBytes(own);
      if (bytes > MAX_RUN_INPUT_BYTES) {
        ctx.addIssue({
          code: 'custom',
          path: [],
          message: `the run input is ${bytes} bytes; the limit is ${MAX_RUN_INPUT_BYTES} bytes (${MAX_RUN_INPUT_BYTES / 1024} KiB)`,
        });
      }
      if (input.toolChoice !== undefined) {
        const problem = toolChoiceProblem(input.toolChoice, input.model ?? DEFAULT_ANTHROPIC_MODEL, input.toolProtocol);
        if (problem) ctx.addIssue({ code: 'custom', path: ['toolChoice'], message: problem });
        const forced = typeof input.toolChoice === 'object' ? input.toolChoice.name : undefined;
        if (forced !== undefined && input.tools && !input.tools.includes(forced)) {
          ctx.addIssue({
            code: 'custom',
            path: ['toolChoice', 'name'],
            message: `toolChoice names '${forced}', which is not among the run's tools (${input.tools.join(', ')})`,
          });
        }
      }
      const seen = new Set<string>();
      for (const [i, name] of (input.tools ?? []).entries()) {
        if (seen.has(name)) {
          ctx.addIssue({ code: 'custom', path: ['tools', i], message: `tool '${name}' is listed twice` });
        }
        seen.add(name);
        // Any tool the worker has may be named: built-in, custom (`defineTool`) or MCP (`mcp__server__tool`).
        // Which ones a worker has is known only there: a name it lacks is said at run start, as a notice.
        if (!TOOL_NAME_PATTERN.test(name)) {
          ctx.addIssue({
            code: 'custom',
            path: ['tools', i],
            message:
              `tool name '${name.slice(0, 80)}' is not a tool name: 1-${MAX_TOOL_NAME_CHARS} letters, digits, '_', '-' ` +
              `or '.' (a built-in tool such as ${BUILTIN_TOOL_NAMES.slice(0, 3).join(', ')}, ${TASK_TOOL_NAME}, ` +
              'a custom tool of the worker, or an MCP tool mcp__<server>__<tool>)',
          });
        }
      }
    });
  return agentRunInputSchema;
}

/** The run input's schema (built on first use: src/shared/built-once.ts). */
export const agentRunInputSchema = onFirstUse('run-input', buildRunInputSchema);

export type AgentRunInput = z.input<ReturnType<typeof agentRunInputSchema>>;

/** One line per problem: `maxIterations: maxIterations must be at least 1`. */
export function formatZodError(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length ? issue.path.join('.') : '(input)'}: ${issue.message}`)
    .join('; ');
}

/** Parse run input or return a readable reason. Shared by the CLI and the workflow. */
export function parseRunInput(
  raw: unknown,
): { ok: true; input: z.output<ReturnType<typeof agentRunInputSchema>> } | { ok: false; error: string } {
  if (isUndecodable(raw)) {
    return {
      ok: false,
      error: `Invalid run input: the input is ${describeUndecodable(raw)}; ${ACCEPTED_ENCODING_HINT}`,
    };
  }
  const parsed = agentRunInputSchema().safeParse(raw);
  if (parsed.success) return { ok: true, input: parsed.data };
  return { ok: false, error: `Invalid run input: ${formatZodError(parsed.error)}` };
}

export const TERMINAL_STATUSES = [
  'completed',
  'interrupted',
  'max_iterations',
  'max_budget',
  'refused',
  'failed',
  'cancelled',
] as const;
export type ExitReason = (typeof TERMINAL_STATUSES)[number];
/** `awaiting_approval`: a tool call waits for an operator; `awaiting_input`: a session waits for a message. */
export type RunStatus = 'running' | 'awaiting_approval' | 'awaiting_input' | ExitReason;

export interface PendingApproval {
  toolUseId: string;
  name: string;
  input: unknown;
  /** Epoch ms after which the call is denied automatically. */
  deadline: number;
  /** Set when the call waits in a subagent: `approveTool`/`denyTool` on this run decide it all the same. */
  subagent?: SubagentApprovalOrigin;
}

export interface AgentRunState {
  status: RunStatus;
  iteration: number;
  maxIterations: number;
  usage: Usage;
  /** `null` when the model's price is unknown: never reported as 0. */
  costUsd: number | null;
  maxBudgetUsd?: number;
  lastStopReason?: StopReason | null;
  activeTools: string[];
  model: string;
  pendingApprovals: PendingApproval[];
  /** User messages accepted by `send` and not yet given to the model. */
  pendingMessages: number;
  session: boolean;
  /** Subagents running now (`task` calls); `usage` and `costUsd` count them and everything below them. */
  subagents?: SubagentSummary[];
}

export interface AgentRunResult {
  exitReason: ExitReason;
  finalText: string;
  iterations: number;
  usage: Usage;
  costUsd: number | null;
  model: string;
  /** Present when `exitReason` is `failed` or `interrupted`: why. */
  error?: { type: string; message: string };
  /** Runs with `outputSchema`: the final answer parsed, present when `finalText` is JSON valid against the schema. */
  output?: unknown;
}

/** Progress events kept by the workflow and served with a cursor by the `events` query. */
export type RunEvent =
  | { seq: number; kind: 'run_started'; model: string; maxIterations: number; prompt: string }
  | { seq: number; kind: 'model_call_started'; iteration: number }
  | {
      seq: number;
      kind: 'model_call_finished';
      iteration: number;
      stopReason: StopReason | null;
      usage: Usage;
      costUsd: number | null;
      text: string;
    }
  | { seq: number; kind: 'model_call_failed'; iteration: number; error: string }
  /** The model's thinking in one answer, then its text (in turn order: reasoning, text, then the tool calls). Cut to EVENT_TEXT_CHARS. */
  | { seq: number; kind: 'reasoning'; iteration: number; text: string; truncated?: boolean }
  | { seq: number; kind: 'text'; iteration: number; text: string; truncated?: boolean }
  | { seq: number; kind: 'tool_call_started'; toolUseId: string; name: string; input: unknown }
  /** `preview`: the tool's output, cut to EVENT_TOOL_OUTPUT_CHARS (`truncated` then); the transcript has it whole. */
  | {
      seq: number;
      kind: 'tool_call_finished';
      toolUseId: string;
      name: string;
      isError: boolean;
      preview: string;
      truncated?: boolean;
    }
  | { seq: number; kind: 'notice'; message: string }
  | { seq: number; kind: 'user_message'; message: string }
  | { seq: number; kind: 'approval_requested'; toolUseId: string; name: string; input: unknown; deadline: number }
  /** `subagent`: the call waited in that subagent (decided here, there, or timed out there). */
  | {
      seq: number;
      kind: 'approval_resolved';
      toolUseId: string;
      name: string;
      approved: boolean;
      reason?: string;
      subagent?: SubagentApprovalOrigin;
    }
  /** `truncated`: the text was cut to EVENT_ANSWER_CHARS; the whole answer is in the result. */
  | { seq: number; kind: 'answer'; text: string; truncated?: boolean }
  | { seq: number; kind: 'awaiting_input' }
  | {
      seq: number;
      kind: 'subagent_started';
      toolUseId: string;
      workflowId: string;
      agent?: string;
      description?: string;
      depth: number;
    }
  | {
      seq: number;
      kind: 'subagent_finished';
      toolUseId: string;
      workflowId: string;
      exitReason: ExitReason;
      usage: Usage;
      costUsd: number | null;
    }
  | { seq: number; kind: 'run_finished'; exitReason: ExitReason; finalText: string; truncated?: boolean };

type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;
export type RunEventInput = DistributiveOmit<RunEvent, 'seq'>;

export interface EventsQueryInput {
  /** Return events with `seq` greater than this (default 0: from the beginning). */
  after?: number;
}
export interface EventsPage {
  events: RunEvent[];
  /** The `seq` of the newest event returned (of the newest event if none): pass it back as `after`. */
  cursor: number;
  /** True when events older than the first returned one were dropped from the bounded log. */
  truncated: boolean;
}

export const DEFAULTS = { maxIterations: DEFAULT_MAX_ITERATIONS, maxTokens: DEFAULT_MAX_TOKENS } as const;
