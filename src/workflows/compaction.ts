import type { Message, TextBlock, ToolResultBlock } from '../shared';

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
export function compactedConversation(prompt: string, summary: string, messages: readonly Message[]): Message[] {
  const blocks: TextBlock[] = [
    { type: 'text', text: prompt },
    {
      type: 'text',
      text:
        'Earlier work on this task was compacted to save context. Summary of the work so far:\n\n' +
        `<summary>\n${summary.trim()}\n</summary>`,
    },
  ];
  const last = messages[messages.length - 1];
  if (last?.role === 'user' && typeof last.content !== 'string') {
    const results = last.content.filter((b): b is ToolResultBlock => b.type === 'tool_result');
    if (results.length > 0) {
      blocks.push({
        type: 'text',
        text:
          'Results of your most recent tool calls:\n\n' +
          results
            .map(
              (r) =>
                `<tool_result id="${r.tool_use_id}"${r.is_error ? ' error="true"' : ''}>\n${r.content}\n</tool_result>`,
            )
            .join('\n'),
      });
    }
  }
  blocks.push({ type: 'text', text: 'Continue the task from where you left off.' });
  return [{ role: 'user', content: blocks }];
}
