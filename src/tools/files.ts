import { createReadStream, promises as fs, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';

/**
 * File access helpers for the file tools. Reads are streamed so a multi-gigabyte log costs bounded
 * memory, and binary files are recognised the way git and ripgrep do it: a NUL byte near the start.
 */

/** How many leading bytes are inspected for a NUL byte. */
const BINARY_SNIFF_BYTES = 8192;

/**
 * True when the file's first few kilobytes contain a NUL byte. Pass an open handle (from the
 * workspace-confined open) to check what was opened; a path is opened here and closed after.
 */
export async function looksBinary(source: string | FileHandle): Promise<boolean> {
  const handle = typeof source === 'string' ? await fs.open(source, 'r') : source;
  try {
    const buffer = Buffer.alloc(BINARY_SNIFF_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead).includes(0);
  } finally {
    if (typeof source === 'string') await handle.close();
  }
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

/**
 * Stat a path that should be an existing regular file, with errors worded for the model.
 * `shown` is the path as the model should see it (relative to the workspace).
 */
export async function statRegularFile(absolute: string, shown: string): Promise<Stats> {
  let stat: Stats;
  try {
    stat = await fs.stat(absolute);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new Error(`File not found: '${shown}'.`);
    if (code === 'EACCES') throw new Error(`Permission denied reading '${shown}'.`);
    throw error;
  }
  if (stat.isDirectory()) {
    throw new Error(`'${shown}' is a directory, not a file. Use glob to list the files in it.`);
  }
  // A FIFO or device would block or never end; only regular files are read.
  if (!stat.isFile()) throw new Error(`'${shown}' is not a regular file.`);
  return stat;
}

/** One line of a file, possibly cut: `text` holds at most `keepChars` characters of it. */
export interface FileLine {
  text: string;
  /** Full length of the line in characters (without its line terminator). */
  length: number;
}

/**
 * Stream the lines of a UTF-8 file, splitting on `\n` only (a `\r` before it is dropped; a lone
 * `\r` is not a line break, as in `cat -n`). Each line keeps at most `keepChars` characters, so one
 * enormous line does not have to fit in memory. An open handle is read from its start and left open.
 */
export async function* readLines(source: string | FileHandle, keepChars: number): AsyncGenerator<FileLine> {
  const options = { encoding: 'utf8', highWaterMark: 64 * 1024 } as const;
  const stream =
    typeof source === 'string'
      ? createReadStream(source, options)
      : createReadStream('', { ...options, fd: source, autoClose: false, start: 0 });
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
