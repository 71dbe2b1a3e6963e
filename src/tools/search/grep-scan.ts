import { readSync } from 'node:fs';
import { cutChars } from '../../shared/bounds';
import {
  GREP_MAX_COLLECTED_LINES,
  GREP_MAX_LINE_BYTES,
  GREP_MAX_LINE_CHARS,
  GREP_MAX_NOTES,
  GREP_MAX_STORED_TEXT_LINES,
} from './limits';
import type { GrepFileHits, GrepLine, GrepQuery } from './protocol';
import { PatternRefused, type GrepRegexes } from './regex';

/**
 * grep's scan of one file, streamed: the file is read in chunks into one reused buffer, so memory
 * stays at a chunk plus one line (capped at GREP_MAX_LINE_BYTES) whatever the file's size. The
 * rules, the same as ripgrep's defaults:
 * - lines split on `\n`; a `\r` before it is part of the line for matching (so `x$` does not match
 *   `x\r`) but is not shown;
 * - a file containing a NUL byte anywhere is binary and skipped;
 * - each block of whole lines is first searched at once (multi-line mode) to find candidate lines;
 *   a candidate counts only if the pattern matches the line on its own, so a match can never span
 *   lines and the block search only saves time.
 */

const NEWLINE = 0x0a;
const CR = 0x0d;
/** Bytes decoded to show a long line: enough for GREP_MAX_LINE_CHARS characters of any width. */
const DISPLAY_BYTES = GREP_MAX_LINE_CHARS * 4;

/** Length in UTF-16 code units of UTF-8 `bytes`, without decoding them (for huge lines). */
function utf16Length(bytes: Buffer): number {
  let n = 0;
  for (const b of bytes) {
    if ((b & 0xc0) !== 0x80) n++; // a character starts here
    if (b >= 0xf0) n++; // four-byte sequences are surrogate pairs
  }
  return n;
}

/** Limits shared by every file of one search: lines collected, lines whose text is kept, notes. */
export class GrepCollector {
  collected = 0;
  private storedText = 0;
  readonly notes: string[] = [];
  private hugeLines = 0;

  /** A line as the model will see it (the start of it when long), counted against the limits. */
  makeLine(lineNumber: number, bytes: Buffer, isMatch: boolean): GrepLine {
    let shown = bytes[bytes.length - 1] === CR ? bytes.subarray(0, -1) : bytes;
    if (shown.length > DISPLAY_BYTES) {
      const length = utf16Length(shown);
      shown = shown.subarray(0, DISPLAY_BYTES);
      return { lineNumber, text: cutChars(shown.toString('utf8'), GREP_MAX_LINE_CHARS, ''), length, isMatch };
    }
    const text = shown.toString('utf8');
    if (text.length <= GREP_MAX_LINE_CHARS) return { lineNumber, text, isMatch };
    return { lineNumber, text: cutChars(text, GREP_MAX_LINE_CHARS, ''), length: text.length, isMatch };
  }

  /** Record that `line` goes into the answer; drops its text once enough lines hold text. */
  keep(line: GrepLine): GrepLine {
    if (++this.collected > GREP_MAX_COLLECTED_LINES) {
      throw new PatternRefused(
        `The search matched more than ${GREP_MAX_COLLECTED_LINES} lines. Narrow it with a more specific pattern, ` +
          'path or glob, or use output_mode "files_with_matches" or "count".',
      );
    }
    if (++this.storedText > GREP_MAX_STORED_TEXT_LINES) return { ...line, text: '', length: 0 };
    return line;
  }

  private largeFiles = 0;

  /** A file too large for multiline mode was skipped: the first few are named, the rest counted. */
  noteLargeFile(path: string, size: string): void {
    this.largeFiles++;
    if (this.largeFiles <= GREP_MAX_NOTES) {
      this.notes.push(`${path} is larger than ${size} and was not searched in multiline mode.`);
    } else if (this.largeFiles === GREP_MAX_NOTES + 1) {
      this.notes.push('More files were too large for multiline mode.');
    }
  }

  noteHugeLine(path: string, lineNumber: number): void {
    this.hugeLines++;
    if (this.notes.length < GREP_MAX_NOTES) {
      this.notes.push(
        `Line ${lineNumber} of ${path} is longer than ${GREP_MAX_LINE_BYTES / (1024 * 1024)} MiB: only its first ` +
          `${GREP_MAX_LINE_BYTES / (1024 * 1024)} MiB were searched.`,
      );
    } else if (this.notes.length === GREP_MAX_NOTES) {
      this.notes.push('More lines were too long to search whole.');
    }
  }
}

/**
 * Search the open file `fd` (a regular file inside the workspace) and return its hits, undefined
 * when it has none, or 'binary'. `buffer` is the thread's reusable chunk buffer.
 */
export function scanFile(
  fd: number,
  path: string,
  regexes: GrepRegexes,
  query: GrepQuery,
  collector: GrepCollector,
  buffer: Buffer,
): GrepFileHits | 'binary' | undefined {
  const hits: GrepFileHits = { path, matchCount: 0, lines: [] };
  const content = query.mode === 'content';
  const before = content ? query.before : 0;
  const after = content ? query.after : 0;
  let done = false; // files_with_matches: found one; only the binary check goes on
  let lineNumber = 1; // of the next line to start
  let afterLeft = 0;
  let lastShown = 0;
  const ring: GrepLine[] = []; // the last `before` lines not shown, for before-context

  const remember = (line: GrepLine) => {
    ring.push(line);
    if (ring.length > before) ring.shift();
  };

  const onLine = (bytes: Buffer, n: number) => {
    if (regexes.line.test(bytes)) {
      hits.matchCount++;
      if (query.mode === 'files_with_matches') {
        done = true;
        return;
      }
      if (!content) return;
      for (const prior of ring)
        if (prior.lineNumber > lastShown && prior.lineNumber >= n - before) hits.lines.push(collector.keep(prior));
      ring.length = 0;
      hits.lines.push(collector.keep(collector.makeLine(n, bytes, true)));
      lastShown = n;
      afterLeft = after;
    } else if (afterLeft > 0) {
      hits.lines.push(collector.keep(collector.makeLine(n, bytes, false)));
      lastShown = n;
      afterLeft--;
    } else if (before > 0) {
      remember(collector.makeLine(n, bytes, false));
    }
  };

  /** Lines in block[from, to) (whole lines) are passed over: count them, keep the last for context. */
  const skipLines = (block: Buffer, from: number, to: number) => {
    const first = lineNumber;
    for (let i = block.indexOf(NEWLINE, from); i !== -1 && i < to; i = block.indexOf(NEWLINE, i + 1)) lineNumber++;
    if (before === 0) return;
    const tail: GrepLine[] = [];
    let end = to - 1; // the `\n` ending the last skipped line
    for (let n = lineNumber - 1; n >= first && tail.length < before; n--) {
      const start = Math.max(from, end === 0 ? 0 : block.lastIndexOf(NEWLINE, end - 1) + 1);
      tail.push(collector.makeLine(n, block.subarray(start, end), false));
      end = start - 1;
    }
    for (let k = tail.length - 1; k >= 0; k--) remember(tail[k] as GrepLine);
  };

  /** A block of whole lines, each ended by `\n`. */
  const processBlock = (block: Buffer) => {
    let pos = 0;
    while (pos < block.length && !done) {
      if (afterLeft === 0 && regexes.block) {
        // `search` gives only the offset (cheaper than `exec`, which copies the match out).
        const found = regexes.block.search(block.subarray(pos));
        const at = pos + found;
        const target =
          found === -1 ? block.length : Math.max(pos, at === 0 ? 0 : block.lastIndexOf(NEWLINE, at - 1) + 1);
        if (target > pos) skipLines(block, pos, target);
        pos = target;
        if (found === -1 || pos >= block.length) break;
      }
      const end = block.indexOf(NEWLINE, pos);
      onLine(block.subarray(pos, end), lineNumber++);
      pos = end + 1;
    }
  };

  // The line that continues into the next chunk, copied out of the reused buffer.
  let carry: Buffer[] = [];
  let carryBytes = 0;
  let carryCut = false;
  const addCarry = (part: Buffer) => {
    const room = GREP_MAX_LINE_BYTES - carryBytes;
    if (part.length > room) carryCut = true;
    const kept = part.length > room ? part.subarray(0, room) : part;
    if (kept.length > 0) {
      carry.push(Buffer.from(kept));
      carryBytes += kept.length;
    }
  };
  const finishCarry = () => {
    if (carryCut) collector.noteHugeLine(path, lineNumber);
    onLine(Buffer.concat(carry, carryBytes), lineNumber++);
    carry = [];
    carryBytes = 0;
    carryCut = false;
  };

  for (;;) {
    const n = readSync(fd, buffer, 0, buffer.length, null);
    if (n === 0) break;
    const chunk = buffer.subarray(0, n);
    if (chunk.includes(0)) return 'binary';
    if (done) continue;
    let start = 0;
    if (carryBytes > 0 || carryCut) {
      const nl = chunk.indexOf(NEWLINE);
      if (nl === -1) {
        addCarry(chunk);
        continue;
      }
      addCarry(chunk.subarray(0, nl));
      finishCarry();
      start = nl + 1;
    }
    const lastNl = chunk.lastIndexOf(NEWLINE);
    if (lastNl >= start && !done) {
      processBlock(chunk.subarray(start, lastNl + 1));
      start = lastNl + 1;
    }
    if (start < n && !done) addCarry(chunk.subarray(start));
  }
  if ((carryBytes > 0 || carryCut) && !done) finishCarry();
  return hits.matchCount > 0 ? hits : undefined;
}
