import type { FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { cutPrefix } from '../shared/well-formed';

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
 * How much of a file a reader may go through, and for how long, checked at every chunk (not at
 * every line: one line may be a terabyte of a sparse file). The reader may raise or lower
 * `maxBytes` while it iterates.
 */
export interface ScanBudget {
  /** Reading stops with an error once this fires (the call was cancelled or timed out). */
  signal?: AbortSignal;
  /** Bytes that may be read in all; past it reading ends with `stopped` set. */
  maxBytes: number;
  /** Bytes read so far. */
  bytesRead: number;
  /** When (`Date.now()`) reading must end, with `stopped` and `timedOut` set. */
  deadline?: number;
  /** True when reading ended at `maxBytes` or the deadline rather than at the end of the file. */
  stopped: boolean;
  /** True when it was the deadline. */
  timedOut?: boolean;
}

/** Bytes read from the file at a time: between two reads the worker's thread is free. */
const CHUNK_BYTES = 256 * 1024;
const NEWLINE = 0x0a;

/**
 * Reads the file in chunks from `start`, within the budget, handing each chunk to `take` (which
 * returns false to stop early). Resolves with the position after the last chunk taken.
 */
async function scanChunks(
  handle: FileHandle,
  start: number,
  budget: ScanBudget,
  take: (chunk: Buffer, at: number) => boolean,
): Promise<number> {
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  let position = start;
  for (;;) {
    budget.signal?.throwIfAborted();
    if (budget.deadline !== undefined && Date.now() >= budget.deadline) {
      budget.stopped = budget.timedOut = true;
      return position;
    }
    const room = budget.maxBytes - budget.bytesRead;
    if (room <= 0) {
      budget.stopped = true;
      return position;
    }
    const { bytesRead } = await handle.read(buffer, 0, Math.min(CHUNK_BYTES, room), position);
    if (bytesRead === 0) return position;
    budget.bytesRead += bytesRead;
    const chunk = buffer.subarray(0, bytesRead);
    position += bytesRead;
    if (!take(chunk, position - bytesRead)) return position;
  }
}

/**
 * Skips `lines` lines from the start of the file, counting newline bytes without decoding them.
 * Returns where the next line starts (after the last newline skipped), how many were skipped (fewer
 * at the end of the file or when the budget ran out) and where reading ended.
 */
export async function skipLines(
  handle: FileHandle,
  lines: number,
  budget: ScanBudget,
): Promise<{ position: number; skipped: number; end: number }> {
  let skipped = 0;
  let position = 0;
  if (lines <= 0) return { position, skipped, end: 0 };
  const end = await scanChunks(handle, 0, budget, (chunk, at) => {
    for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, nl + 1)) {
      skipped += 1;
      position = at + nl + 1;
      if (skipped === lines) return false;
    }
    return true;
  });
  return { position, skipped, end };
}

/**
 * Counts the lines from `start` to the end of the file (a last line without a newline counts),
 * within the budget, without decoding them.
 */
export async function countLines(handle: FileHandle, start: number, budget: ScanBudget): Promise<number> {
  let lines = 0;
  let trailing = false;
  await scanChunks(handle, start, budget, (chunk) => {
    for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, nl + 1)) lines += 1;
    trailing = chunk[chunk.length - 1] !== NEWLINE;
    return true;
  });
  return lines + (trailing ? 1 : 0);
}

/** One line of a file as {@link readLines} yields it, with where the next line starts. */
export interface PositionedLine extends FileLine {
  /** Byte position just after this line's newline (or the end of what was read). */
  next: number;
}

/**
 * Stream the lines of a UTF-8 file from byte `start` (the start of a line), splitting on `\n` only
 * (a `\r` before it is dropped; a lone `\r` is not a line break, as in `cat -n`). Each line keeps at
 * most `keepChars` characters, so one enormous line does not have to fit in memory. With a
 * `budget`, reading ends once it is spent: the line being read then is yielded as far as it was read.
 */
export async function* readLines(
  handle: FileHandle,
  keepChars: number,
  budget: ScanBudget = { maxBytes: Number.MAX_SAFE_INTEGER, bytesRead: 0, stopped: false },
  start = 0,
): AsyncGenerator<PositionedLine> {
  const decoder = new StringDecoder('utf8');
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
    if (text.length < keepChars) text += cutPrefix(piece, keepChars - text.length);
    length += piece.length;
  };
  let position = start;
  for (;;) {
    const ready: PositionedLine[] = [];
    let more = false;
    position = await scanChunks(handle, position, budget, (chunk, at) => {
      let from = 0;
      for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, from)) {
        append(decoder.write(chunk.subarray(from, nl)));
        append(decoder.end()); // and the decoder starts afresh
        pendingCr = false;
        ready.push({ text, length, next: at + nl + 1 });
        text = '';
        length = 0;
        from = nl + 1;
      }
      append(decoder.write(chunk.subarray(from)));
      more = true;
      // Hand the lines of this chunk over before reading the next.
      return false;
    });
    yield* ready;
    if (!more) break;
  }
  append(decoder.end());
  if (pendingCr) {
    text += text.length < keepChars ? '\r' : '';
    length += 1;
  }
  if (length > 0) yield { text, length, next: position };
}
