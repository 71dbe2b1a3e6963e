import { defineTool } from 'durable-agent';
import { z } from 'zod';

/** A tool of the application's own: the model calls it like a built-in one. */
export const countWords = defineTool({
  name: 'count_words',
  description: 'Count the words of a text.',
  inputSchema: z.strictObject({ text: z.string().max(100_000) }),
  sideEffect: 'read_only',
  execute: async ({ text }) => {
    const words = text.split(/\s+/).filter(Boolean).length;
    return `${words} words`;
  },
});
