import type { FileHandle } from 'node:fs/promises';
import { z } from 'zod';
import { MAX_TOOL_OUTPUT_CHARS } from '../shared/constants';
import { defineTool } from './define-tool';
import type { ToolOutput } from './types';
import { countLines, looksBinary, readLines, skipLines, type ScanBudget } from './files';
import { openRegularFile, withLocated } from '../safe-fs';
import { numberedLine, plural, truncateLine } from './text';

/** Lines returned when the model does not pass `limit`. */
export const READ_FILE_DEFAULT_LIMIT = 2000;
/** Longer lines are cut, so one minified line cannot fill the whole answer. */
export const READ_FILE_MAX_LINE_CHARS = 2000;
/** Room kept free under the registry cap for the closing "more lines" note. */
const NOTE_RESERVE_CHARS = 400;
/**
 * The most one call reads of a file, in bytes, to reach `offset` and show what follows. Without it
 * a sparse file (`truncate -s 1T`) kept the worker's main thread decoding for hours, and went on
 * after the call was cancelled.
 */
export const READ_FILE_MAX_SCAN_BYTES = 1024 * 1024 * 1024;
/** Once the answer is full, the rest of the file is read this much further to count its lines. */
export const READ_FILE_MAX_COUNT_BYTES = 64 * 1024 * 1024;
/**
 * How long one call may spend reading, well inside the tool's local-activity timeout (2 minutes):
 * a gigabyte of newlines with a large offset ran past that timeout three times, the model got
 * "Activity timed out", and the worker's thread was busy for minutes.
 */
export const READ_FILE_DEADLINE_MS = 30_000;

/** Bounds of one read; tests make them small. */
export interface ReadFileToolOptions {
  maxScanBytes?: number;
  maxCountBytes?: number;
  deadlineMs?: number;
}

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
export function createReadFileTool(options: ReadFileToolOptions = {}) {
  const bounds = {
    maxScanBytes: options.maxScanBytes ?? READ_FILE_MAX_SCAN_BYTES,
    maxCountBytes: options.maxCountBytes ?? READ_FILE_MAX_COUNT_BYTES,
    deadlineMs: options.deadlineMs ?? READ_FILE_DEADLINE_MS,
  };
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
          const window = { offset: input.offset ?? 1, limit: input.limit ?? READ_FILE_DEFAULT_LIMIT };
          return await readNumbered(handle, located.shown, stat.size, window, { ...bounds, signal: ctx.signal });
        } finally {
          await handle.close();
        }
      });
    },
  });
}

/** The numbered lines of an open file from `offset`, within `limit` lines, the output budget and the scan bounds. */
async function readNumbered(
  handle: FileHandle,
  shown: string,
  size: number,
  { offset, limit }: { offset: number; limit: number },
  bounds: Required<ReadFileToolOptions> & { signal: AbortSignal },
): Promise<ToolOutput> {
  if (size === 0) return `File '${shown}' is empty.`;
  if (await looksBinary(handle)) {
    throw new Error(`'${shown}' is a binary file (it contains NUL bytes); read_file only reads text files.`);
  }

  const scan: ScanBudget = {
    signal: bounds.signal,
    maxBytes: bounds.maxScanBytes,
    bytesRead: 0,
    deadline: Date.now() + bounds.deadlineMs,
    stopped: false,
  };
  const stoppedBy = () =>
    scan.timedOut
      ? `after ${bounds.deadlineMs} ms, its time limit per call`
      : `after ${bounds.maxScanBytes} bytes, its limit per call`;
  // The lines before `offset` are only counted, a newline byte at a time, never decoded.
  const skip = await skipLines(handle, offset - 1, scan);
  if (skip.skipped < offset - 1) {
    if (scan.stopped) {
      return {
        content:
          `Error: read_file stopped ${stoppedBy()}, before line ${offset} of '${shown}' (${size} bytes): ` +
          `${plural(skip.skipped, 'line')} were read. Use grep to find what you need, or bash (for example ` +
          `sed -n '${offset},${offset + 99}p').`,
        isError: true,
      };
    }
    return pastTheEnd(offset, shown, skip.skipped + (skip.end > skip.position ? 1 : 0));
  }

  const budget = MAX_TOOL_OUTPUT_CHARS - NOTE_RESERVE_CHARS;
  const out: string[] = [];
  let used = 0;
  let lineNumber = offset - 1;
  let lineStart = skip.position;
  // First line not shown, whether because of `limit` or because the output budget ran out.
  let nextLine: number | undefined;
  for await (const line of readLines(handle, READ_FILE_MAX_LINE_CHARS, scan, skip.position)) {
    lineNumber += 1;
    const rendered = numberedLine(lineNumber, truncateLine(line.text, READ_FILE_MAX_LINE_CHARS, line.length));
    if (out.length >= limit || used + rendered.length + 1 > budget) {
      nextLine = lineNumber;
      break;
    }
    out.push(rendered);
    used += rendered.length + 1;
    lineStart = line.next;
  }
  if (!out.length && !scan.stopped) return pastTheEnd(offset, shown, offset - 1);

  if (nextLine !== undefined && !scan.stopped) {
    // The rest is read only to count its lines for the note, and only so far.
    scan.maxBytes = Math.min(scan.maxBytes, scan.bytesRead + bounds.maxCountBytes);
    const remaining = await countLines(handle, lineStart, scan);
    if (!scan.stopped) out.push(`… ${plural(remaining, 'more line')}; use offset=${nextLine} to continue.`);
  }
  if (scan.stopped && nextLine !== undefined) {
    out.push(`… more lines (not all counted: the file has ${size} bytes); use offset=${nextLine} to continue.`);
  } else if (scan.stopped) {
    out.push(
      `… read_file stopped ${stoppedBy()}, reading '${shown}' (${size} bytes): line ${lineNumber} may go on, ` +
        `and more lines may follow; use offset=${lineNumber + 1} for the lines after it, or bash for the rest.`,
    );
  }
  return out.join('\n');
}

function pastTheEnd(offset: number, shown: string, total: number): ToolOutput {
  return {
    content: `Error: offset ${offset} is past the end of '${shown}', which has ${plural(total, 'line')}.`,
    isError: true,
  };
}
