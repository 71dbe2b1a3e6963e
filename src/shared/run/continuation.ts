import { z } from 'zod';
import { onFirstUse } from '../built-once';
import type { ConversationSnapshot } from '../conversation';
import type { StopReason } from '../messages';
import type { RunEvent } from './events';

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
    /** The run's checkpoints, one per turn that took one (docs/checkpoints.md), newest last. */
    checkpoints: z
      .array(
        z.strictObject({
          turn: count,
          id: z.string().max(64),
          filesChanged: count,
          bytes: count,
          omitted: count.optional(),
          pending: z.literal(true).optional(),
        }),
      )
      .optional(),
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
