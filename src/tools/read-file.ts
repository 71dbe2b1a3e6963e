import type { FileHandle } from 'node:fs/promises';
import { z } from 'zod';
import { MAX_TOOL_OUTPUT_CHARS } from '../shared/constants';
import { defineTool } from './define-tool';
import type { ToolOutput } from './types';
import { looksBinary, readLines } from './files';
import { openRegularFile, withLocated } from './safe-fs';
import { numberedLine, plural, truncateLine } from './text';

/** Lines returned when the model does not pass `limit`. */
export const READ_FILE_DEFAULT_LIMIT = 2000;
/** Longer lines are cut, so one minified line cannot fill the whole answer. */
export const READ_FILE_MAX_LINE_CHARS = 2000;
/** Room kept free under the registry cap for the closing "more lines" note. */
const NOTE_RESERVE_CHARS = 200;

const readFileInput = z.strictObject({
  path: z.string().min(1).describe('Path of the file to read, relative to the workspace (or absolute inside it).'),
  offset: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('1-based line number to start reading from (default 1). Use it with limit to page through large files.'),
  limit: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(`Maximum number of lines to return (default ${READ_FILE_DEFAULT_LIMIT}).`),
});

/** Read a text file from the workspace, numbered like `cat -n`. */
export function createReadFileTool() {
  return defineTool({
    name: 'read_file',
    description:
      'Read a text file in the workspace. Returns the lines in `cat -n` format: the line number, a tab, then ' +
      `the line. Reads up to ${READ_FILE_DEFAULT_LIMIT} lines from the start by default; pass offset (1-based) and ` +
      `limit to read other parts. Lines longer than ${READ_FILE_MAX_LINE_CHARS} characters are cut. When lines ` +
      'remain, the output ends with a note giving the offset to continue from. Binary files are refused. ' +
      'The line numbers and tab are not part of the file: leave them out of edit_file strings.',
    inputSchema: readFileInput,
    sideEffect: 'read_only',
    runsLocally: true,
    async execute(input, ctx) {
      // Symlinks inside the workspace are followed; the file is read through the descriptor whose
      // real path was checked, so a path swapped meanwhile cannot bring in an outside file.
      return withLocated(ctx.workspace, input.path, { followLinks: true }, async (located) => {
        const { handle, stat } = await openRegularFile(located);
        try {
          return await readNumbered(handle, located.shown, stat.size, input.offset ?? 1, input.limit);
        } finally {
          await handle.close();
        }
      });
    },
  });
}

/** The numbered lines of an open file from `offset`, within `limit` lines and the output budget. */
async function readNumbered(
  handle: FileHandle,
  shown: string,
  size: number,
  offset: number,
  limitInput: number | undefined,
): Promise<ToolOutput> {
  if (size === 0) return `File '${shown}' is empty.`;
  if (await looksBinary(handle)) {
    throw new Error(`'${shown}' is a binary file (it contains NUL bytes); read_file only reads text files.`);
  }

  const limit = limitInput ?? READ_FILE_DEFAULT_LIMIT;
  const budget = MAX_TOOL_OUTPUT_CHARS - NOTE_RESERVE_CHARS;
  const out: string[] = [];
  let used = 0;
  let lineNumber = 0;
  // First line not shown, whether because of `limit` or because the output budget ran out.
  let nextLine: number | undefined;
  for await (const line of readLines(handle, READ_FILE_MAX_LINE_CHARS)) {
    lineNumber += 1;
    if (lineNumber < offset || nextLine !== undefined) continue;
    const rendered = numberedLine(lineNumber, truncateLine(line.text, READ_FILE_MAX_LINE_CHARS, line.length));
    if (out.length >= limit || used + rendered.length + 1 > budget) {
      nextLine = lineNumber;
      continue;
    }
    out.push(rendered);
    used += rendered.length + 1;
  }

  const total = lineNumber;
  if (offset > total) {
    return {
      content: `Error: offset ${offset} is past the end of '${shown}', which has ${plural(total, 'line')}.`,
      isError: true,
    };
  }
  if (nextLine !== undefined) {
    const remaining = total - nextLine + 1;
    out.push(`… ${plural(remaining, 'more line')}; use offset=${nextLine} to continue.`);
  }
  return out.join('\n');
}
