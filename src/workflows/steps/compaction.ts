import { cutBytes } from '../../shared/bounds';
import {
  MAX_COMPACTION_RESULTS_BYTES,
  MAX_COMPACTION_SUMMARY_BYTES,
  MAX_CONVERSATION_BYTES,
} from '../../shared/constants';
import type { Message, TextBlock, ToolResultBlock } from '../../shared/messages';
import { failureMessage, stopping } from '../calls/failures';
import type { Run } from '../run/run';

/** The instruction of the compaction call (sent with the conversation, never kept in it). */
export const COMPACTION_INSTRUCTION =
  'This conversation is nearing the limit of your context window and will be replaced by your summary. ' +
  'Write a dense summary of everything you need to continue the task: the goal and constraints, what you have ' +
  'done, key facts and findings (with exact file paths, names and values), the current state of files you ' +
  'changed, decisions made, what remains, and your next step. Output only the summary.';

/**
 * The conversation after compaction: one user turn with the original task, the summary, and the
 * latest tool results (as text, since the tool_use blocks they answered are summarized away).
 */
export function compactedConversation(
  prompt: string,
  summary: string,
  messages: readonly Message[],
  bounds?: CompactionBounds,
): Message[] {
  const cut = (text: string, bytes: number | undefined) =>
    bytes === undefined ? text : cutBytes(text, bytes, '\n[cut]');
  const blocks: TextBlock[] = [
    { type: 'text', text: prompt },
    {
      type: 'text',
      text:
        'Earlier work on this task was compacted to save context. Summary of the work so far:\n\n' +
        `<summary>\n${cut(summary.trim(), bounds?.summaryBytes)}\n</summary>`,
    },
  ];
  const last = messages[messages.length - 1];
  if (last?.role === 'user' && typeof last.content !== 'string') {
    const results = last.content.filter((b): b is ToolResultBlock => b.type === 'tool_result');
    if (results.length > 0) {
      blocks.push({
        type: 'text',
        text: cut(
          'Results of your most recent tool calls:\n\n' +
            results
              .map(
                (r) =>
                  `<tool_result id="${r.tool_use_id}"${r.is_error ? ' error="true"' : ''}>\n${r.content}\n</tool_result>`,
              )
              .join('\n'),
          bounds?.resultsBytes,
        ),
      });
    }
  }
  blocks.push({ type: 'text', text: 'Continue the task from where you left off.' });
  return [{ role: 'user', content: blocks }];
}

/** Bounds for a compacted conversation, so it is far below the compaction threshold and never compacts again at once. */
export interface CompactionBounds {
  summaryBytes: number;
  resultsBytes: number;
}

/** Whether `keepConversationSmall` has anything to do at this boundary (checked without a promise). */
export function compactionDue(run: Run): boolean {
  const { state } = run;
  return (
    state.needsCompaction || state.conversation.bytes > Math.min(run.settings.softCapBytes, MAX_CONVERSATION_BYTES)
  );
}

/**
 * Keeps the conversation within its bounds at an iteration boundary. Above the hard cap, older
 * turns are dropped without a model call (a summary call would have to send them all); above the
 * soft cap or when the context window fills, a model-written summary replaces them.
 */
export async function keepConversationSmall(run: Run): Promise<'does_not_fit' | undefined> {
  const { state, emit } = run;
  const { conversation } = state;
  const prompt = run.input.prompt;
  /** Compact above this many bytes (the run's `compactAtBytes`, at most the hard cap). */
  const softCapBytes = run.settings.softCapBytes;
  // Compacted at the previous boundary and full again after one call: compacting once more would
  // repeat itself every iteration without progress (seen with a tiny contextWindowTokens).
  if (state.needsCompaction && state.lastCompactionIteration === state.iteration - 1) {
    return 'does_not_fit';
  }
  const bounds = { summaryBytes: MAX_COMPACTION_SUMMARY_BYTES, resultsBytes: MAX_COMPACTION_RESULTS_BYTES };
  if (conversation.bytes > MAX_CONVERSATION_BYTES) {
    const before = conversation.bytes;
    conversation.replace(compactedConversation(prompt, DROPPED_SUMMARY, conversation.all, bounds));
    emit({ kind: 'notice', message: `the conversation reached ${before} bytes; dropped older turns to fit` });
  }
  if (!state.needsCompaction && conversation.bytes <= softCapBytes) return undefined;
  state.needsCompaction = false;
  try {
    const { text, response } = await run.modelCalls.summary(COMPACTION_INSTRUCTION, 'compaction');
    run.account(response);
    const summary = text.trim();
    if (!summary) throw new Error('the compaction summary was empty');
    const before = conversation.length;
    conversation.replace(compactedConversation(prompt, summary, conversation.all, bounds));
    state.compactions += 1;
    state.lastCompactionIteration = state.iteration;
    emit({
      kind: 'notice',
      message: `compacted ${before} messages into a summary (compaction ${state.compactions})`,
    });
  } catch (err) {
    if (stopping(err)) throw err;
    if (conversation.bytes > softCapBytes) {
      // Too big to carry or resend: keep the task and the latest results, drop the older turns.
      conversation.replace(compactedConversation(prompt, DROPPED_SUMMARY, conversation.all, bounds));
      emit({ kind: 'notice', message: `compaction failed (${failureMessage(err)}); dropped older turns to fit` });
    } else {
      emit({ kind: 'notice', message: `compaction failed, continuing without it: ${failureMessage(err)}` });
    }
  }
  return undefined;
}

const DROPPED_SUMMARY = 'Unavailable: earlier turns were dropped to fit.';
