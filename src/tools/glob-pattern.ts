/**
 * Glob patterns compiled to regular expressions, matched against `/`-separated relative paths.
 *
 * Supported: `*` (any characters except `/`), `?` (one character except `/`), `**` as a whole path
 * segment (any number of directories, including none), `{a,b}` alternatives (nestable, each may hold
 * wildcards), `[abc]` / `[a-z]` / `[!abc]` / `[^abc]` classes, and `\` to escape the next character.
 * Dotfiles are matched like any other name. An unclosed `[` or `{` is taken literally.
 */

const REGEX_SPECIAL = new Set([...'\\^$.|?*+()[]{}/-']);

function escapeChar(c: string): string {
  return REGEX_SPECIAL.has(c) ? `\\${c}` : c;
}

/** Characters that make a glob segment a pattern rather than a literal name. */
export function hasMagic(segment: string): boolean {
  return /[*?[{\\]/.test(segment);
}

interface Parsed {
  source: string;
  end: number;
}

/** Parse a `[...]` class starting at `start` (the `[`). Returns undefined when it is not closed. */
function parseClass(glob: string, start: number): Parsed | undefined {
  let i = start + 1;
  let negate = false;
  if (glob[i] === '!' || glob[i] === '^') {
    negate = true;
    i++;
  }
  let body = '';
  // A `]` right after the opening (or after the negation) is a literal member, as in POSIX.
  let first = true;
  for (; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === ']' && !first) {
      // A class never matches the separator, whatever it lists.
      return { source: negate ? `[^/${body}]` : `(?!/)[${body}]`, end: i + 1 };
    }
    first = false;
    if (c === '\\' && i + 1 < glob.length) {
      body += `\\${glob[++i] as string}`;
    } else if (c === '-' && body !== '' && glob[i + 1] !== ']') {
      body += '-';
    } else {
      body += c === '^' || c === '\\' || c === ']' || c === '[' || c === '-' ? `\\${c}` : c;
    }
  }
  return undefined;
}

/**
 * Translate from `start` until the end of the glob, or — inside braces — until the `,` or `}` that
 * ends the current alternative.
 */
function translate(glob: string, start: number, inBraces: boolean): Parsed {
  let out = '';
  let i = start;
  while (i < glob.length) {
    const c = glob[i] as string;
    if (inBraces && (c === ',' || c === '}')) return { source: out, end: i };
    if (c === '\\') {
      out += i + 1 < glob.length ? escapeChar(glob[i + 1] as string) : '\\\\';
      i += 2;
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
          out += '.*'; // trailing `**`: everything below
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
        out += '\\[';
        i++;
      }
    } else if (c === '{') {
      const alternatives: string[] = [];
      let j = i + 1;
      let closed = false;
      while (j <= glob.length) {
        const alt = translate(glob, j, true);
        alternatives.push(alt.source);
        if (alt.end >= glob.length) break;
        if (glob[alt.end] === '}') {
          closed = true;
          j = alt.end + 1;
          break;
        }
        j = alt.end + 1; // past the comma
      }
      if (closed) {
        out += `(?:${alternatives.join('|')})`;
        i = j;
      } else {
        out += '\\{';
        i++;
      }
    } else {
      out += escapeChar(c);
      i++;
    }
  }
  return { source: out, end: i };
}

/** Compile a glob to an anchored RegExp over `/`-separated relative paths. */
export function globToRegExp(glob: string): RegExp {
  return new RegExp(`^${translate(glob, 0, false).source}$`);
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
