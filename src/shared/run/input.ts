import { z } from 'zod';
import { onFirstUse } from '../built-once';
import { utf8Length, jsonBytes } from '../bounds';
import {
  DEFAULT_ANTHROPIC_MODEL,
  DEFAULT_MAX_ITERATIONS,
  DEFAULT_MAX_TOKENS,
  MAX_PROMPT_BYTES,
  MAX_RUN_INPUT_BYTES,
  MAX_SYSTEM_PROMPT_BYTES,
} from '../constants';
import { buildForkFields } from '../fork';
import { runTimeoutsSchema } from '../run-timeouts';
import { mcpServersSchema } from '../mcp';
import { ACCEPTED_ENCODING_HINT, describeUndecodable, isUndecodable } from '../undecodable';
import { outputSchemaSchema } from '../output-schema';
import { toolChoiceProblem, toolChoiceSchema } from '../tool-choice';
import { MAX_SUBAGENT_DEPTH_LIMIT, TASK_TOOL_NAME, agentsInputSchema, subagentInputSchema } from '../subagents';
import { BUILTIN_TOOL_NAMES, PERMISSIONS, TOOL_PROTOCOLS } from './tool-policy';
import { runContinuationSchema, type RunContinuation } from './continuation';

export const DEFAULT_APPROVAL_TIMEOUT_SECONDS = 900;
export const DEFAULT_SESSION_IDLE_TIMEOUT_SECONDS = 24 * 60 * 60;

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
      /** Paths the run's checkpoints leave out, gitignore syntax, on top of the defaults (docs/checkpoints.md). */
      checkpointIgnore: z
        .array(
          z
            .string()
            .trim()
            .min(1, 'a checkpointIgnore pattern must be non-empty')
            .max(1024, 'a checkpointIgnore pattern is at most 1024 characters')
            .refine((p) => !/[\0\n\r]/.test(p), { message: 'a checkpointIgnore pattern is one line' }),
        )
        .max(100, 'checkpointIgnore holds at most 100 patterns')
        .optional(),
      /** Start from this checkpoint: the worker restores it into the run's workspace, which must be empty (fork). */
      restoreFrom: z
        .strictObject({
          checkpointId: z
            .string()
            .regex(/^[0-9a-f]{64}$/, 'restoreFrom.checkpointId is a checkpoint id (64 hex digits)'),
        })
        .optional(),
      /** Where a fork came from (kept in its memo too): the origin run and the turn its files were taken at. */
      forkedFrom: z
        .strictObject({
          workflowId: z.string().min(1).max(1000),
          runId: z.string().min(1).max(200),
          turn: z.number().int().min(0),
        })
        .optional(),
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
      /**
       * Model-call admission (docs/models.md, "Rate limits"): when the provider key's budget is short,
       * priority 1 goes first, 5 last (default 3); equal priorities share by `fairnessKey` (default: the
       * run's own id; a subagent inherits its parent's).
       */
      priority: z
        .number({
          error: `priority must be a whole number from ${PRIORITY_RANGE.min} (first) to ${PRIORITY_RANGE.max}`,
        })
        .int(`priority must be a whole number from ${PRIORITY_RANGE.min} (first) to ${PRIORITY_RANGE.max}`)
        .min(PRIORITY_RANGE.min, `priority must be at least ${PRIORITY_RANGE.min} (1 goes first)`)
        .max(PRIORITY_RANGE.max, `priority must be at most ${PRIORITY_RANGE.max} (5 goes last)`)
        .optional(),
      fairnessKey: z
        .string({ error: 'fairnessKey must be a string (a tenant, a team)' })
        .min(1, 'fairnessKey must not be empty')
        .refine((key) => utf8Length(key) <= MAX_FAIRNESS_KEY_BYTES, {
          message: `fairnessKey must be at most ${MAX_FAIRNESS_KEY_BYTES} bytes (Temporal's limit for fairness keys)`,
        })
        .optional(),
      /** Internal: set by a parent run on the subagents it starts (their depth and agent). */
      subagent: subagentInputSchema().optional(),
      /** A fork's start: its conversation, the checkpoint its workspace starts from, its origin (shared/fork.ts). */
      ...buildForkFields(),
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
      // Bounded apart: the carried state by its own schema, a fork's conversation by MAX_FORK_CONVERSATION_BYTES.
      const { resume: _resume, conversation: _conversation, ...own } = input;
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

/** Priorities a run may have (docs/models.md, "Rate limits"): 1 goes first; Temporal's default range. */
export const PRIORITY_RANGE = { min: 1, max: 5, default: 3 } as const;
/** Temporal limits fairness keys to 64 bytes. */
export const MAX_FAIRNESS_KEY_BYTES = 64;

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

export const DEFAULTS = { maxIterations: DEFAULT_MAX_ITERATIONS, maxTokens: DEFAULT_MAX_TOKENS } as const;
