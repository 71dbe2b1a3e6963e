/**
 * A bash command line split into simple commands, for the command policy: each command's words
 * (quotes removed, ANSI-C `$'…'` decoded) and redirection targets, including the commands inside
 * `$(…)`, backticks, `<(…)`, subshells and unquoted here-documents. One pass, linear in the input
 * (no regular expression touches it), bounded nesting.
 *
 * It is not bash: where it cannot tell, it errs toward finding more commands, never fewer (every
 * word after a separator is taken as a command name). What it cannot see is a name built while the
 * command runs (`$cmd`, `$(echo sudo)`, globs): such words are marked `dynamic`.
 */

export interface Word {
  /** The word with quotes removed and escapes applied; expansions contribute nothing. */
  text: string;
  /** Contains an expansion, command substitution or unquoted glob/brace character. */
  dynamic: boolean;
  /** Neither quoted nor escaped nor expanded: only such a word can be a reserved word (`if`, `do`). */
  plain: boolean;
  /** The word as written (quotes, escapes and expansions kept), for a policy that reads dynamic names. */
  raw?: string;
}

export interface SimpleCommand {
  words: Word[];
  /** Redirection operators with their targets (`>` `/dev/sda`). */
  redirects: { op: string; target: Word }[];
}

export class ShellParseError extends Error {
  override readonly name = 'ShellParseError';
}

/** Deeper nesting than this ($( $( … ) ), subshells) is refused rather than guessed at. */
export const MAX_NESTING = 32;

const SEPARATORS = new Set([';', '&', '|', '\n', '(', ')']);
const WORD_END = new Set([' ', '\t', '\n', ';', '&', '|', '<', '>', '(', ')']);
const GLOB_CHARS = new Set(['*', '?', '[']);
const SPECIAL = new Set(['\\', "'", '"', '$', '`', '*', '?', '[', '{', ',', '.']);

/** A character that stands for itself in an unquoted word. */
function isOrdinary(c: string): boolean {
  return !WORD_END.has(c) && !SPECIAL.has(c);
}

function isNameChar(c: string): boolean {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c === '_';
}

function isDigits(text: string): boolean {
  if (text === '') return false;
  for (const c of text) if (c < '0' || c > '9') return false;
  return true;
}

const SIMPLE_ESCAPES: Record<string, string> = {
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
};

/** Splits `source` into simple commands; throws {@link ShellParseError} on unterminated quoting. */
export function parseShell(source: string, depth = 0): SimpleCommand[] {
  return new Scanner(source, depth).run();
}

class Scanner {
  private i = 0;
  private readonly commands: SimpleCommand[] = [];
  private readonly heredocs: { delimiter: string; stripTabs: boolean; expand: boolean }[] = [];

  constructor(
    private readonly s: string,
    private readonly depth: number,
    start = 0,
  ) {
    this.i = start;
  }

  run(): SimpleCommand[] {
    this.sequence(undefined, this.depth);
    return this.commands;
  }

  /** Commands up to the closing `end`; returns them and the index just past it. */
  runUntil(end: ')' | '`'): { commands: SimpleCommand[]; next: number } {
    this.sequence(end, this.depth);
    return { commands: this.commands, next: this.i };
  }

  /** Commands until `end` (`)` or a backtick) at this level, or the end of input. */
  private sequence(end: ')' | '`' | undefined, depth: number): void {
    if (depth > MAX_NESTING) throw new ShellParseError(`nested more than ${MAX_NESTING} levels deep`);
    const s = this.s;
    let current: SimpleCommand = { words: [], redirects: [] };
    let redirect: string | undefined;
    const finish = () => {
      if (redirect) throw new ShellParseError(`a redirection '${redirect}' without a target`);
      if (current.words.length || current.redirects.length) this.commands.push(current);
      current = { words: [], redirects: [] };
    };
    while (this.i < s.length) {
      const c = s[this.i] as string;
      if (c === end) {
        this.i++;
        finish();
        return;
      }
      if (c === ' ' || c === '\t') {
        this.i++;
      } else if (c === '\\' && s[this.i + 1] === '\n') {
        this.i += 2;
      } else if (c === '#') {
        while (this.i < s.length && s[this.i] !== '\n') this.i++;
      } else if (c === '&' && s[this.i + 1] === '>') {
        redirect = this.takeOperator();
      } else if ((c === '<' || c === '>') && s[this.i + 1] === '(') {
        // Process substitution: a command whose output (or input) stands for a file name.
        this.i += 2;
        this.sequence(')', depth + 1);
        this.push(current, redirect, { text: '', dynamic: true, plain: false });
        redirect = undefined;
      } else if (c === '<' || c === '>') {
        if (redirect) throw new ShellParseError(`a redirection '${redirect}' without a target`);
        redirect = this.takeOperator();
        // `>&-` and `<&-` close a descriptor: complete without a target (`2>&-` was refused).
        if (redirect === '>&-' || redirect === '<&-') {
          current.redirects.push({ op: redirect, target: { text: '-', dynamic: false, plain: true } });
          redirect = undefined;
        }
      } else if (c === '(') {
        this.i++;
        finish();
        this.sequence(')', depth + 1);
      } else if (SEPARATORS.has(c)) {
        this.i++;
        finish();
        if (c === '\n') this.readHeredocs(depth);
      } else {
        const word = this.word(depth, end);
        // `2>file`: the digits name a file descriptor, not a word.
        if (!(isDigits(word.text) && !word.dynamic && (s[this.i] === '<' || s[this.i] === '>'))) {
          if (redirect === '<<' || redirect === '<<-') {
            this.heredocs.push({ delimiter: word.text, stripTabs: redirect === '<<-', expand: word.plain });
          }
          this.push(current, redirect, word);
          redirect = undefined;
        }
      }
    }
    if (end) throw new ShellParseError(end === ')' ? "an unclosed '(' or '$('" : 'an unclosed backtick');
    finish();
  }

  private push(command: SimpleCommand, redirect: string | undefined, word: Word): void {
    if (redirect) command.redirects.push({ op: redirect, target: word });
    else command.words.push(word);
  }

  private takeOperator(): string {
    const start = this.i;
    while (this.i < this.s.length && '<>&|-'.includes(this.s[this.i] as string) && this.i - start < 3) this.i++;
    return this.s.slice(start, this.i);
  }

  /** One word, up to unquoted whitespace or an operator. */
  private word(depth: number, end: ')' | '`' | undefined): Word {
    const s = this.s;
    const wordStart = this.i;
    let text = '';
    let dynamic = false;
    let plain = true;
    let braces = false;
    while (this.i < s.length) {
      const c = s[this.i] as string;
      if (WORD_END.has(c) || (c === '`' && end === '`')) break;
      if (c === '\\') {
        plain = false;
        const next = s[this.i + 1];
        if (next !== '\n' && next !== undefined) text += next;
        this.i += 2;
      } else if (c === "'") {
        plain = false;
        const close = s.indexOf("'", this.i + 1);
        if (close < 0) throw new ShellParseError('an unclosed single quote');
        text += s.slice(this.i + 1, close);
        this.i = close + 1;
      } else if (c === '"') {
        plain = false;
        this.i++;
        const inner = this.doubleQuoted(depth);
        text += inner.text;
        dynamic ||= inner.dynamic;
      } else if (c === '$' && s[this.i + 1] === "'") {
        plain = false;
        this.i += 2;
        text += this.ansiC();
      } else if (c === '$' || c === '`') {
        plain = false;
        dynamic = true;
        this.expansion(depth);
      } else {
        if (GLOB_CHARS.has(c)) dynamic = true;
        // `{a,b}` and `{1..3}` expand into several words; a lone `{` or `}` is a reserved word.
        if (c === '{') braces = true;
        else if (braces && (c === ',' || c === '.')) dynamic = true;
        // Copy a run of ordinary characters at once (a long word is common: a here-string, a path list).
        const start = this.i++;
        while (this.i < s.length && isOrdinary(s[this.i] as string)) this.i++;
        text += s.slice(start, this.i);
      }
    }
    return { text, dynamic, plain, ...(dynamic ? { raw: s.slice(wordStart, this.i) } : {}) };
  }

  /** The inside of "…" (the opening quote consumed), through the closing quote. */
  private doubleQuoted(depth: number): { text: string; dynamic: boolean } {
    const s = this.s;
    let text = '';
    let dynamic = false;
    while (this.i < s.length) {
      const c = s[this.i] as string;
      if (c === '"') {
        this.i++;
        return { text, dynamic };
      }
      if (c === '\\') {
        const next = s[this.i + 1];
        if (next !== undefined && '$`"\\'.includes(next)) text += next;
        else if (next !== '\n') text += c + (next ?? '');
        this.i += 2;
      } else if (c === '$' || c === '`') {
        dynamic = true;
        this.expansion(depth);
      } else {
        text += c;
        this.i++;
      }
    }
    throw new ShellParseError('an unclosed double quote');
  }

  /** `$name`, `${…}`, `$((…))`, `$(…)` or a backtick substitution, at `this.i`. */
  private expansion(depth: number): void {
    const s = this.s;
    if (s[this.i] === '`') {
      this.i++;
      this.sequence('`', depth + 1);
      return;
    }
    const next = s[this.i + 1];
    if (next === '(' && s[this.i + 2] === '(') {
      this.i += 3;
      this.skipBalanced('(', ')', 2);
    } else if (next === '(') {
      this.i += 2;
      this.sequence(')', depth + 1);
    } else if (next === '{') {
      this.i += 2;
      this.skipBalanced('{', '}', 1);
    } else {
      this.i++;
      if (this.i < s.length && !isNameChar(s[this.i] as string))
        this.i++; // $? $$ $@ $1 …
      else while (this.i < s.length && isNameChar(s[this.i] as string)) this.i++;
    }
  }

  /** Skips to where `depth` levels of open…close are closed. */
  private skipBalanced(open: string, close: string, depth: number): void {
    const s = this.s;
    while (this.i < s.length && depth > 0) {
      const c = s[this.i];
      if (c === '\\') this.i++;
      else if (c === open) depth++;
      else if (c === close) depth--;
      this.i++;
    }
    if (depth > 0) throw new ShellParseError(`an unclosed '${open}'`);
  }

  /** The inside of $'…' (opening consumed), decoded, through the closing quote. */
  private ansiC(): string {
    const s = this.s;
    let text = '';
    while (this.i < s.length) {
      const c = s[this.i] as string;
      if (c === "'") {
        this.i++;
        return text;
      }
      if (c !== '\\') {
        text += c;
        this.i++;
        continue;
      }
      const e = s[this.i + 1] ?? '';
      this.i += 2;
      const radix = e === 'x' ? 16 : e === 'u' || e === 'U' ? 16 : e >= '0' && e <= '7' ? 8 : 0;
      if (radix) {
        const max = e === 'x' ? 2 : e === 'u' ? 4 : e === 'U' ? 8 : 3;
        let digits = radix === 8 ? e : '';
        while (digits.length < max && this.i < s.length && isRadixDigit(s[this.i] as string, radix)) {
          digits += s[this.i];
          this.i++;
        }
        const code = parseInt(digits || '0', radix);
        text += code <= 0x10ffff ? String.fromCodePoint(code) : '';
      } else {
        text += SIMPLE_ESCAPES[e] ?? `\\${e}`;
      }
    }
    throw new ShellParseError("an unclosed $'");
  }

  /** After a newline: the bodies of pending here-documents; unquoted ones may hold $(…). */
  private readHeredocs(depth: number): void {
    const s = this.s;
    while (this.heredocs.length) {
      const doc = this.heredocs.shift()!;
      const bodyStart = this.i;
      let bodyEnd = s.length;
      while (this.i < s.length) {
        let lineEnd = s.indexOf('\n', this.i);
        if (lineEnd < 0) lineEnd = s.length;
        const lineStart = this.i;
        let from = lineStart;
        if (doc.stripTabs) while (from < lineEnd && s[from] === '\t') from++;
        const line = s.slice(from, lineEnd);
        this.i = Math.min(lineEnd + 1, s.length);
        if (line === doc.delimiter) {
          bodyEnd = lineStart;
          break;
        }
      }
      if (doc.expand) this.commands.push(...substitutionsIn(s.slice(bodyStart, bodyEnd), depth + 1));
    }
  }
}

function isRadixDigit(c: string, radix: number): boolean {
  if (radix === 8) return c >= '0' && c <= '7';
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/** The commands of the `$(…)` and backtick substitutions in an unquoted here-document's body. */
function substitutionsIn(body: string, depth: number): SimpleCommand[] {
  // The body behaves like the inside of double quotes without the quotes: parse it as such.
  const commands: SimpleCommand[] = [];
  let i = 0;
  while (i < body.length) {
    const c = body[i];
    if (c === '\\') {
      i += 2;
    } else if ((c === '$' && body[i + 1] === '(' && body[i + 2] !== '(') || c === '`') {
      const inner = new Scanner(body, depth, i + (c === '`' ? 1 : 2));
      const { commands: found, next } = inner.runUntil(c === '`' ? '`' : ')');
      commands.push(...found);
      i = next;
    } else {
      i++;
    }
  }
  return commands;
}
