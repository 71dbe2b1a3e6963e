import { compileRe2, PatternRefused } from './regex';
import { MAX_PATTERN_CHARS } from './limits';

/**
 * Glob patterns compiled to RE2 regular expressions (linear-time: `*a*a*a*a*a*a*a*a*a*a*a*a*b`
 * against a long name takes microseconds, where a backtracking RegExp never ends), matched against
 * `/`-separated relative paths.
 *
 * Supported: `*` (any characters except `/`), `?` (one character except `/`), `**` as a whole path
 * segment (any number of directories, including none), `{a,b}` alternatives (nestable, each may hold
 * wildcards), `[abc]` / `[a-z]` / `[!abc]` / `[^abc]` classes, and `\` to escape the next character.
 * Dotfiles are matched like any other name. An unclosed `[` or `{` is taken literally.
 */

/** Every character is written as a code-point escape: RE2 then has nothing to misread. */
function literal(c: string): string {
  return `\\x{${(c.codePointAt(0) as number).toString(16)}}`;
}

const SLASH = 0x2f;

/** Characters that make a glob segment a pattern rather than a literal name. */
export function hasMagic(segment: string): boolean {
  return /[*?[{\\]/.test(segment);
}

interface Parsed {
  source: string;
  end: number;
}

/** `lo-hi` as an RE2 class item. */
function rangeItem(lo: number, hi: number): string {
  const hex = (n: number) => `\\x{${n.toString(16)}}`;
  return lo === hi ? hex(lo) : `${hex(lo)}-${hex(hi)}`;
}

/** Parse a `[...]` class starting at `start` (the `[`). Returns undefined when it is not closed. */
function parseClass(glob: string, start: number): Parsed | undefined {
  // Only a `]` can close it: never look past the last one (`[[[[…` would cost quadratic time).
  const chars = Array.from(glob.slice(start + 1, glob.lastIndexOf(']') + 1));
  let i = 0;
  let negate = false;
  if (chars[i] === '!' || chars[i] === '^') {
    negate = true;
    i++;
  }
  const ranges: Array<[number, number]> = [];
  // A `]` right after the opening (or after the negation) is a literal member, as in POSIX.
  let first = true;
  let consumed = negate ? 2 : 1; // UTF-16 length of `[` and the negation
  for (; i < chars.length; i++) {
    let c = chars[i] as string;
    consumed += c.length;
    if (c === ']' && !first) {
      // A class never matches the separator, whatever it lists: `/` is cut out of every range.
      const items: string[] = [];
      for (const [lo, hi] of ranges) {
        if (lo <= SLASH && SLASH <= hi) {
          if (lo < SLASH) items.push(rangeItem(lo, SLASH - 1));
          if (hi > SLASH) items.push(rangeItem(SLASH + 1, hi));
        } else {
          items.push(rangeItem(lo, hi));
        }
      }
      const body = items.join('');
      const source = negate ? `[^/${body}]` : body ? `[${body}]` : '[^\\x{0}-\\x{10ffff}]';
      return { source, end: start + consumed };
    }
    first = false;
    if (c === '\\' && i + 1 < chars.length) {
      c = chars[++i] as string;
      consumed += c.length;
    }
    const lo = c.codePointAt(0) as number;
    const next = chars[i + 1];
    const after = chars[i + 2];
    if (next === '-' && after !== undefined && after !== ']') {
      const escaped = after === '\\' && chars[i + 3] !== undefined;
      const hiChar = escaped ? (chars[i + 3] as string) : after;
      const hi = hiChar.codePointAt(0) as number;
      consumed += 1 + after.length + (escaped ? hiChar.length : 0);
      i += escaped ? 3 : 2;
      // A reversed range (`[z-a]`) matches nothing, as in POSIX; it must not make RE2 fail.
      if (lo <= hi) ranges.push([lo, hi]);
      continue;
    }
    ranges.push([lo, lo]);
  }
  return undefined;
}

/**
 * Where each `{` that opens a group is closed, found in one left-to-right pass over the same tokens
 * `translate` reads (escapes and closed `[…]` classes are skipped whole): a `}` closes the innermost
 * open `{`; a `{` still open at the end is literal, and so is every `{` around it. Deciding this by
 * trying each `{` in turn took time exponential in the number of unclosed `{` (`{{{…` of 30
 * characters ran for a minute).
 */
function matchBraces(glob: string): Map<number, number> {
  const closes = new Map<number, number>();
  const open: number[] = [];
  for (let i = 0; i < glob.length;) {
    const c = glob[i];
    if (c === '\\') {
      i += (glob.codePointAt(i + 1) ?? 0) > 0xffff ? 3 : 2;
    } else if (c === '[') {
      i = parseClass(glob, i)?.end ?? i + 1;
    } else {
      if (c === '{') open.push(i);
      else if (c === '}' && open.length > 0) closes.set(open.pop() as number, i);
      i++;
    }
  }
  return closes;
}

/**
 * Translate from `start` until the end of the glob, or — inside braces — until the `,` or `}` that
 * ends the current alternative. `closes` comes from {@link matchBraces}.
 */
function translate(glob: string, start: number, inBraces: boolean, closes: Map<number, number>): Parsed {
  let out = '';
  let i = start;
  while (i < glob.length) {
    const c = glob[i] as string;
    if (inBraces && (c === ',' || c === '}')) return { source: out, end: i };
    if (c === '\\') {
      const next = glob.codePointAt(i + 1);
      out += next === undefined ? literal('\\') : literal(String.fromCodePoint(next));
      i += next === undefined ? 1 : next > 0xffff ? 3 : 2;
    } else if (c === '*') {
      let j = i;
      while (glob[j] === '*') j++;
      const atSegmentStart = i === 0 || glob[i - 1] === '/' || (inBraces && /[{,]/.test(glob[i - 1] ?? ''));
      const next = glob[j];
      const atSegmentEnd = next === undefined || next === '/' || (inBraces && (next === ',' || next === '}'));
      if (j - i >= 2 && atSegmentStart && atSegmentEnd) {
        if (next === '/') {
          out += '(?:[^/]*/)*'; // `**/`: zero or more whole directories
          j++;
        } else {
          out += '.*'; // trailing `**`: everything below (the `s` flag lets `.` match a newline in a name)
        }
      } else {
        out += '[^/]*';
      }
      i = j;
    } else if (c === '?') {
      out += '[^/]';
      i++;
    } else if (c === '[') {
      const cls = parseClass(glob, i);
      if (cls) {
        out += cls.source;
        i = cls.end;
      } else {
        out += literal('[');
        i++;
      }
    } else if (c === '{' && closes.has(i)) {
      // Every `{` inside a closed group is closed too, so each alternative ends at a `,` or at `}`.
      const alternatives: string[] = [];
      let j = i + 1;
      for (;;) {
        const alt = translate(glob, j, true, closes);
        alternatives.push(alt.source);
        j = alt.end + 1; // past the `,` or the `}`
        if (glob[alt.end] !== ',') break;
      }
      out += `(?:${alternatives.join('|')})`;
      i = j;
    } else {
      const point = glob.codePointAt(i) as number;
      out += literal(String.fromCodePoint(point));
      i += point > 0xffff ? 2 : 1;
    }
  }
  return { source: out, end: i };
}

/**
 * Compile a glob to an anchored RE2 expression over `/`-separated relative paths. Throws
 * {@link PatternRefused} for a pattern that is too long or that RE2 cannot compile (too large).
 */
export function globToRegExp(glob: string): RegExp {
  if (glob.length > MAX_PATTERN_CHARS) {
    throw new PatternRefused(
      `The glob pattern is ${glob.length} characters long; at most ${MAX_PATTERN_CHARS} are accepted.`,
    );
  }
  return compileRe2(globToSource(glob), 's', 'glob pattern');
}

/** The anchored RE2 source of a glob, not compiled (for an `RE2.Set` of many globs; use flag `s`). */
export function globToSource(glob: string): string {
  return `^${translate(glob, 0, false, matchBraces(glob)).source}$`;
}

/**
 * A compiled path filter. Patterns containing `/` match the whole relative path; patterns without
 * one match the file's base name at any depth (as in `.gitignore` and ripgrep's `--glob`).
 */
export function compilePathFilter(glob: string): (relativePath: string) => boolean {
  const re = globToRegExp(glob);
  if (glob.includes('/')) return (p) => re.test(p);
  return (p) => re.test(p.slice(p.lastIndexOf('/') + 1));
}
