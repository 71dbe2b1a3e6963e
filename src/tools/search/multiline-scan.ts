import { fstatSync, readSync } from 'node:fs';
import type RE2 from 're2';
import type { GrepCollector } from './grep-scan';
import type { GrepFileHits, GrepLine, GrepQuery } from './protocol';
import { compileRe2 } from './regex';

/**
 * grep's `multiline` mode (ripgrep's `-U --multiline-dotall`): the pattern is searched over the
 * whole file, so a match may span lines and `.` matches a newline; `^`/`$` still match at line
 * boundaries. A match is reported at the line where it starts (content mode shows that line, with
 * context as usual; count mode counts such lines). Matches do not overlap, as in ripgrep.
 *
 * A match can be as long as the file, so the file is held whole: files larger than
 * MULTILINE_MAX_FILE_BYTES are skipped with a note. Patterns that cannot match a newline go to
 * the streaming line engine instead (see `canSpanLines`), which gives the same answer for them
 * without that cap; property tests hold the two engines to identical results.
 */

const NEWLINE = 0x0a;

/** Compile a pattern for the whole-file engine: multi-line anchors, dot matches newline. */
export function compileMultiline(pattern: string, caseInsensitive: boolean): RE2 {
  return compileRe2(pattern, caseInsensitive ? 'gmsi' : 'gms', 'pattern');
}

/**
 * False only for patterns that provably cannot match a newline and mean the same in a line as in
 * a file (no `.`, negated classes, `\s`/`\W`/`\D`/`\S`, `\n`, `\x…`, `\p{…}`, `\A`/`\z`, control
 * characters or flag groups). Conservative: anything it does not know is taken to span lines.
 */
export function canSpanLines(pattern: string): boolean {
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c.charCodeAt(0) < 0x20 || c === '.') return true;
    if (c === '\\') {
      if (!safeEscape(pattern[++i])) return true;
    } else if (c === '(' && pattern[i + 1] === '?') {
      const rest = pattern.slice(i + 2, i + 4);
      if (!(rest.startsWith(':') || rest.startsWith('<') || rest === 'P<')) return true;
    } else if (c === '[') {
      if (pattern[i + 1] === '^') return true;
      // A `]` first in the class is a member; the class ends at the next unescaped `]`.
      let j = pattern[i + 1] === ']' ? i + 2 : i + 1;
      for (; j < pattern.length && pattern[j] !== ']'; j++) {
        const d = pattern[j] as string;
        if (d.charCodeAt(0) < 0x20 || d === '[') return true;
        if (d === '\\' && !safeEscape(pattern[++j])) return true;
      }
      i = j;
    }
  }
  return false;
}

/** `\w`, `\d`, `\b`, `\B` and escaped ASCII punctuation: none matches a newline. */
function safeEscape(c: string | undefined): boolean {
  return c !== undefined && (/^[wdbB]$/.test(c) || /^[!-/:-@[-`{-~]$/.test(c));
}

/** The whole file in memory, at most `maxBytes`; 'too_big' past that (checked as it is read, too). */
function readWhole(fd: number, maxBytes: number): Buffer | 'too_big' {
  const size = fstatSync(fd).size;
  if (size > maxBytes) return 'too_big';
  // One byte more than the file: a file that grew since the stat is read on, up to the cap.
  let buffer = Buffer.allocUnsafe(Math.min(maxBytes + 1, size + 1));
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      if (length > maxBytes) return 'too_big';
      const bigger = Buffer.allocUnsafe(Math.min(maxBytes + 1, Math.max(64 * 1024, length * 2)));
      buffer.copy(bigger, 0, 0, length);
      buffer = bigger;
    }
    const n = readSync(fd, buffer, length, buffer.length - length, null);
    if (n === 0) return buffer.subarray(0, length);
    length += n;
  }
}

/** Bytes of the UTF-8 character starting at `at` (1 for a stray byte), to step past an empty match. */
function charLength(bytes: Buffer, at: number): number {
  const b = bytes[at] ?? 0;
  return b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
}

/**
 * Search the open file `fd` as a whole. Returns its hits, undefined when it has none, 'binary'
 * (a NUL byte anywhere), or 'too_big' (over `maxBytes`: not searched).
 */
export function scanWholeFile(
  fd: number,
  path: string,
  regex: RE2,
  query: GrepQuery,
  collector: GrepCollector,
  maxBytes: number,
): GrepFileHits | 'binary' | 'too_big' | undefined {
  const text = readWhole(fd, maxBytes);
  if (text === 'too_big') return 'too_big';
  if (text.includes(0)) return 'binary';
  const hits: GrepFileHits = { path, matchCount: 0, lines: [] };
  const content = query.mode === 'content';
  const before = content ? query.before : 0;
  const after = content ? query.after : 0;
  // A match that starts after the final newline (or in an empty file) starts on no line.
  const endsOnNoLine = text.length === 0 || text[text.length - 1] === NEWLINE;

  let cursorLine = 1; // the line that starts at `cursorStart`
  let cursorStart = 0;
  let afterLeft = 0;
  let lastShown = 0;
  const ring: GrepLine[] = [];
  const lineEnd = (start: number) => {
    const end = text.indexOf(NEWLINE, start);
    return end === -1 ? text.length : end;
  };
  /** Moves past the cursor's line, which holds no match start: after- or before-context. */
  const passLine = () => {
    const end = lineEnd(cursorStart);
    if (afterLeft > 0) {
      hits.lines.push(collector.keep(collector.makeLine(cursorLine, text.subarray(cursorStart, end), false)));
      lastShown = cursorLine;
      afterLeft--;
    } else if (before > 0) {
      ring.push(collector.makeLine(cursorLine, text.subarray(cursorStart, end), false));
      if (ring.length > before) ring.shift();
    }
    cursorLine++;
    cursorStart = end + 1;
  };

  regex.lastIndex = 0;
  for (let m = regex.exec(text); m; m = regex.exec(text)) {
    const at = m.index;
    if (m[0].length === 0) {
      if (at >= text.length) regex.lastIndex = text.length + 1;
      else regex.lastIndex = at + charLength(text, at);
    }
    if (at >= text.length && endsOnNoLine) break;
    if (at < cursorStart) continue; // starts on a line already reported
    while (cursorStart < text.length && lineEnd(cursorStart) < at) passLine();
    hits.matchCount++;
    if (query.mode === 'files_with_matches') break;
    const end = lineEnd(cursorStart);
    if (content) {
      for (const prior of ring) {
        if (prior.lineNumber > lastShown && prior.lineNumber >= cursorLine - before) {
          hits.lines.push(collector.keep(prior));
        }
      }
      ring.length = 0;
      hits.lines.push(collector.keep(collector.makeLine(cursorLine, text.subarray(cursorStart, end), true)));
      lastShown = cursorLine;
      afterLeft = after;
    }
    cursorLine++;
    cursorStart = end + 1;
    if (regex.lastIndex > text.length) break;
  }
  while (afterLeft > 0 && cursorStart < text.length) passLine();
  return hits.matchCount > 0 ? hits : undefined;
}
