import { z } from 'zod';
import { DEFAULT_MAX_ITERATIONS, DEFAULT_MAX_TOKENS } from './constants';
import type { ConversationSnapshot } from './conversation';
import type { StopReason, Usage } from './messages';

/** Names of the built-in tools. The registry on the worker must provide exactly these. */
export const BUILTIN_TOOL_NAMES = ['bash', 'read_file', 'write_file', 'edit_file', 'glob', 'grep'] as const;

/**
 * Run input, validated at the client and again in the workflow. Unknown keys are rejected so a
 * misspelt option (`maxIteration`) is an error rather than silently ignored.
 */
export const agentRunInputSchema = z
  .strictObject({
    prompt: z.string().trim().min(1, 'prompt must be a non-empty string'),
    model: z.string().min(1, 'model must be a non-empty model id such as claude-sonnet-5-5').optional(),
    systemPrompt: z.string().optional(),
    maxIterations: z
      .number()
      .int('maxIterations must be a whole number')
      .min(1, 'maxIterations must be at least 1')
      .max(100_000, 'maxIterations must be at most 100000')
      .optional(),
    maxBudgetUsd: z.number().positive('maxBudgetUsd must be a positive number of US dollars').optional(),
    maxTokens: z
      .number()
      .int('maxTokens must be a whole number')
      .min(1, 'maxTokens must be at least 1')
      .max(128_000, 'maxTokens must be at most 128000')
      .optional(),
    workspace: z.string().min(1, 'workspace must be a directory path').optional(),
    tools: z.array(z.string().min(1)).optional(),
    contextWindowTokens: z
      .number()
      .int('contextWindowTokens must be a whole number')
      .min(1_000, 'contextWindowTokens must be at least 1000')
      .optional(),
    continueAsNewAfter: z
      .strictObject({
        events: z.number().int().min(50, 'continueAsNewAfter.events must be at least 50').optional(),
        bytes: z.number().int().min(10_000, 'continueAsNewAfter.bytes must be at least 10000').optional(),
      })
      .optional(),
    /** Internal: the state a run carries into its next execution after continue-as-new. */
    resume: z
      .custom<RunContinuation>((v) => typeof v === 'object' && v !== null, 'resume must be an object')
      .optional(),
  })
  .superRefine((input, ctx) => {
    for (const [i, name] of (input.tools ?? []).entries()) {
      if (!(BUILTIN_TOOL_NAMES as readonly string[]).includes(name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['tools', i],
          message: `unknown tool '${name}'; available tools: ${BUILTIN_TOOL_NAMES.join(', ')}`,
        });
      }
    }
  });

export type AgentRunInput = z.input<typeof agentRunInputSchema>;

/** Everything a run needs to go on in a fresh execution after continue-as-new. */
export interface RunContinuation {
  conversation: ConversationSnapshot;
  iteration: number;
  usage: Usage;
  costUsd: number | null;
  lastStopReason?: StopReason | null;
  lastAssistantText: string;
  /** The newest progress events, so a follower's cursor goes on across executions. */
  events: RunEvent[];
  eventSeq: number;
  continuations: number;
  compactions: number;
  /** Compaction was due when the previous execution handed over. */
  needsCompaction: boolean;
}

/** One line per problem: `maxIterations: maxIterations must be at least 1`. */
export function formatZodError(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length ? issue.path.join('.') : '(input)'}: ${issue.message}`)
    .join('; ');
}

/** Parse run input or return a readable reason. Shared by the CLI and the workflow. */
export function parseRunInput(
  raw: unknown,
): { ok: true; input: z.output<typeof agentRunInputSchema> } | { ok: false; error: string } {
  const parsed = agentRunInputSchema.safeParse(raw);
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
] as const;
export type ExitReason = (typeof TERMINAL_STATUSES)[number];
export type RunStatus = 'running' | ExitReason;

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
  | { seq: number; kind: 'tool_call_started'; toolUseId: string; name: string; input: unknown }
  | { seq: number; kind: 'tool_call_finished'; toolUseId: string; name: string; isError: boolean; preview: string }
  | { seq: number; kind: 'notice'; message: string }
  | { seq: number; kind: 'run_finished'; exitReason: ExitReason; finalText: string };

type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;
export type RunEventInput = DistributiveOmit<RunEvent, 'seq'>;

export interface EventsQueryInput {
  /** Return events with `seq` greater than this. */
  after: number;
}
export interface EventsPage {
  events: RunEvent[];
  /** The `seq` of the newest event (0 if none): pass it back as `after`. */
  cursor: number;
  /** True when events older than the first returned one were dropped from the bounded log. */
  truncated: boolean;
}

export const DEFAULTS = { maxIterations: DEFAULT_MAX_ITERATIONS, maxTokens: DEFAULT_MAX_TOKENS } as const;
