import { createReadStream } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';

/**
 * Reading helpers for read_file, on a descriptor opened and verified by safe-fs: lines are streamed
 * so a multi-gigabyte log costs bounded memory, and binary files are recognised the way git and
 * ripgrep do it: a NUL byte near the start.
 */

/** How many leading bytes are inspected for a NUL byte. */
const BINARY_SNIFF_BYTES = 8192;

/** True when the open file's first few kilobytes contain a NUL byte. */
export async function looksBinary(handle: FileHandle): Promise<boolean> {
  const buffer = Buffer.alloc(BINARY_SNIFF_BYTES);
  const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
  return buffer.subarray(0, bytesRead).includes(0);
}

/** One line of a file, possibly cut: `text` holds at most `keepChars` characters of it. */
export interface FileLine {
  text: string;
  /** Full length of the line in characters (without its line terminator). */
  length: number;
}

/**
 * How much of a file a reader may go through, checked at every chunk (not at every line: one line
 * may be a terabyte of a sparse file). The reader may raise or lower `maxChars` while it iterates.
 */
export interface ScanBudget {
  /** Reading stops with an error once this fires (the call was cancelled or timed out). */
  signal?: AbortSignal;
  /** Characters that may be read in all; past it the iteration ends with `stopped` set. */
  maxChars: number;
  /** Characters read so far. */
  charsRead: number;
  /** True when the iteration ended at `maxChars` rather than at the end of the file. */
  stopped: boolean;
}

/**
 * Stream the lines of a UTF-8 file, splitting on `\n` only (a `\r` before it is dropped; a lone
 * `\r` is not a line break, as in `cat -n`). Each line keeps at most `keepChars` characters, so one
 * enormous line does not have to fit in memory. The handle is read from its start and left open.
 * With a `budget`, reading ends once it is spent: the line being read then is yielded as far as it
 * was read.
 */
export async function* readLines(handle: FileHandle, keepChars: number, budget?: ScanBudget): AsyncGenerator<FileLine> {
  const stream = createReadStream('', {
    encoding: 'utf8',
    highWaterMark: 64 * 1024,
    fd: handle,
    autoClose: false,
    start: 0,
  });
  let text = '';
  let length = 0;
  let pendingCr = false;
  const append = (piece: string) => {
    if (!piece) return;
    // A `\r` held back from the previous piece turns out not to end the line: it is content.
    if (pendingCr) {
      if (text.length < keepChars) text += '\r';
      length += 1;
      pendingCr = false;
    }
    if (piece.endsWith('\r')) {
      pendingCr = true;
      piece = piece.slice(0, -1);
    }
    if (text.length < keepChars) text += piece.slice(0, keepChars - text.length);
    length += piece.length;
  };
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      if (budget) {
        budget.signal?.throwIfAborted();
        if (budget.charsRead + chunk.length > budget.maxChars) {
          budget.stopped = true;
          break;
        }
        budget.charsRead += chunk.length;
      }
      let start = 0;
      for (let nl = chunk.indexOf('\n'); nl !== -1; nl = chunk.indexOf('\n', start)) {
        append(chunk.slice(start, nl));
        pendingCr = false;
        yield { text, length };
        text = '';
        length = 0;
        start = nl + 1;
      }
      append(chunk.slice(start));
    }
    if (pendingCr) {
      text += text.length < keepChars ? '\r' : '';
      length += 1;
    }
    if (length > 0) yield { text, length };
  } finally {
    stream.destroy();
  }
}
