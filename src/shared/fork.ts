import { z } from 'zod';
import { jsonBytes } from './bounds';
import { TEMPORAL_PAYLOAD_LIMIT_BYTES } from './constants';

/**
 * A fork: a new run that starts from another run's turn N (docs/checkpoints.md). Its input carries
 * the conversation up to the end of that turn (`conversation`), the checkpoint its workspace is
 * restored from (`restoreFrom`) and where it came from (`forkedFrom`, also its memo and a search
 * attribute). Any client may start a run with these fields: they are checked here as strictly as the
 * rest of the input, and the worker restores only into an empty or missing workspace.
 */

/** Memo key of a fork's origin: `{ workflowId, runId, turn }` (docs/checkpoints.md). */
export const FORKED_FROM_MEMO = 'forkedFrom';

/**
 * The most a fork's inherited conversation may weigh, as JSON. The run's start input (at most
 * MAX_RUN_INPUT_BYTES besides it) must fit Temporal's 2 MiB payload limit with room for the
 * encoding; a longer conversation cannot be forked there (an earlier turn, or after a compaction, can).
 */
export const MAX_FORK_CONVERSATION_BYTES = Math.floor(TEMPORAL_PAYLOAD_LIMIT_BYTES * 0.75);

export interface ForkOrigin {
  workflowId: string;
  runId: string;
  turn: number;
}

export function buildForkFields() {
  const block = z.looseObject({ type: z.string().min(1) }).superRefine((b, ctx) => {
    const need = (key: string) => {
      if (typeof (b as Record<string, unknown>)[key] !== 'string') {
        ctx.addIssue({ code: 'custom', path: [key], message: `a ${b.type} block needs a string ${key}` });
      }
    };
    if (b.type === 'text') need('text');
    const required: Record<string, string[]> = { tool_use: ['id', 'name'], tool_result: ['tool_use_id'] };
    for (const key of required[b.type] ?? []) need(key);
  });
  const message = z.strictObject({
    role: z.enum(['user', 'assistant']),
    content: z.union([z.string(), z.array(block).min(1)]),
  });
  return {
    /**
     * The messages the run starts from instead of its prompt alone (a fork's first N turns, with the
     * next user message already in place): it starts and ends with a user message. `prompt` then names
     * the run (its summary, `run_started`) and is not added again.
     */
    conversation: z
      .array(message)
      .min(1, 'conversation holds at least one message')
      .superRefine((messages, ctx) => {
        if (messages[0]?.role !== 'user')
          ctx.addIssue({ code: 'custom', message: 'conversation starts with a user message' });
        if (messages[messages.length - 1]?.role !== 'user') {
          ctx.addIssue({
            code: 'custom',
            message: 'conversation ends with a user message (the model answers it next)',
          });
        }
        const bytes = jsonBytes(messages);
        if (bytes > MAX_FORK_CONVERSATION_BYTES) {
          ctx.addIssue({
            code: 'custom',
            message: `conversation is ${bytes} bytes; the limit is ${MAX_FORK_CONVERSATION_BYTES} bytes (a run's start must fit Temporal's 2 MiB payload limit)`,
          });
        }
      })
      .optional(),
  };
}
