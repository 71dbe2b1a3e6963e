import { z } from 'zod';
import { DONE_TOOL_NAME } from '../shared/run/tool-policy';
import { defineTool } from './define-tool';

/**
 * The tool a run started with `requireDoneTool` must call to finish. The workflow ends the run when
 * the model calls it (its summary becomes the final answer), so `execute` only runs if a worker is
 * asked directly. Opt-in: never offered to runs that did not ask for it.
 */
export function createDoneTool() {
  return defineTool({
    name: DONE_TOOL_NAME,
    description:
      'Call this when the task is completely finished (and only then), with a summary of what you did and the ' +
      'answer the user asked for. The run ends when you call it.',
    inputSchema: z.strictObject({
      summary: z.string().min(1, 'summary must say what was done').describe('What you did, and the final answer.'),
    }),
    sideEffect: 'read_only',
    optIn: true,
    async execute({ summary }) {
      return `Done: ${summary}`;
    },
  });
}
