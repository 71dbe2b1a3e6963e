/**
 * What a command name built while the command runs may expand to, as far as the command line
 * itself says: `$x` after `x=sudo;`, `${X:-sudo}`, `$(echo sudo)`, `s{u,}do`, `su?o`, `"$@"` after
 * `set -- sudo`. The policy checks these candidates like a written name. Best effort (a name read
 * from a file or built by a program still passes; the sandbox confines it), linear in the line.
 */

/** What earlier commands of the same line set: literal variables and positional parameters. */
export interface LineFacts {
  vars: Map<string, string>;
  positional: string[];
}

/** Brace expansion stops at this many words (a bound against `{a,b}{a,b}…`). */
const MAX_BRACE_WORDS = 64;
/** A dynamic name longer than this is checked as written: no command name is, and expanding it would cost. */
const MAX_EXPANDED_CHARS = 1024;
const NAME = '[A-Za-z_][A-Za-z0-9_]*';
/** `$(cmd args)` or `` `cmd args` `` whose output is (or names) its arguments. */
const ECHOING = /^\s*(?:echo|printf|which|command\s+-v|command\s+-V|type\s+-[pP]|realpath|readlink\s+-f)\s+/;

function stripQuotes(text: string): string {
  return text.replace(/\\(.)/g, '$1').replace(/["']/g, '');
}

/** The output `$(inner)` stands for, when the line says (an echo of literals), else nothing. */
function substitution(inner: string): string {
  const match = ECHOING.exec(inner);
  return match ? stripQuotes(inner.slice(match[0].length)).trim() : '';
}

/** A dynamic word's text as far as the line says (unknown expansions as nothing). */
export function expandWord(raw: string, facts: LineFacts): string {
  let text = raw.replace(/\$'([^']*)'/g, '$1');
  text = text.replace(/\$\(([^()]*)\)/g, (_, inner: string) => substitution(inner));
  text = text.replace(/`([^`]*)`/g, (_, inner: string) => substitution(inner));
  text = text.replace(new RegExp(`\\$\\{(${NAME}):?[-=+]([^}]*)\\}`, 'g'), (_, name: string, word: string) =>
    facts.vars.has(name) ? (facts.vars.get(name) as string) : word,
  );
  text = text.replace(new RegExp(`\\$\\{(${NAME})\\}|\\$(${NAME})`, 'g'), (_, a?: string, b?: string) =>
    stripQuotes(facts.vars.get((a ?? b) as string) ?? ''),
  );
  text = text.replace(/\$\{?[@*]\}?/g, facts.positional.join(' '));
  text = text.replace(/\$\{?([1-9])\}?/g, (_, n: string) => facts.positional[Number(n) - 1] ?? '');
  return stripQuotes(text);
}

/** `a{b,c}d` → `abd`, `acd` (nested and sequence forms are taken as written). */
function braceWords(text: string): string[] {
  const out: string[] = [];
  const pending = [text];
  while (pending.length && out.length + pending.length <= MAX_BRACE_WORDS) {
    const word = pending.pop() as string;
    const open = word.indexOf('{');
    const close = open < 0 ? -1 : word.indexOf('}', open);
    const body = close < 0 ? '' : word.slice(open + 1, close);
    if (close < 0 || !body.includes(',') || body.includes('{')) {
      out.push(word);
      continue;
    }
    for (const alt of body.split(',')) pending.push(word.slice(0, open) + alt + word.slice(close + 1));
  }
  return [...out, ...pending];
}

/** The names a dynamic command word may run: each expansion's first word. */
export function candidateNames(raw: string, facts: LineFacts): string[] {
  if (raw.length > MAX_EXPANDED_CHARS) return [stripQuotes(raw)];
  const names = new Set<string>();
  for (const word of braceWords(expandWord(raw, facts))) {
    const first = word.trim().split(/\s+/)[0];
    if (first) names.add(first);
  }
  return [...names];
}

type GlobToken = { star: true } | { star: false; test: (c: string) => boolean };

function globTokens(pattern: string): GlobToken[] {
  const tokens: GlobToken[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '*') {
      if (!tokens.at(-1)?.star) tokens.push({ star: true });
    } else if (c === '?') tokens.push({ star: false, test: () => true });
    else if (c === '[' && pattern.indexOf(']', i + 2) > 0) {
      const close = pattern.indexOf(']', i + 2);
      let set = pattern.slice(i + 1, close);
      const negate = set.startsWith('!') || set.startsWith('^');
      if (negate) set = set.slice(1);
      const inSet = (ch: string) => {
        for (let k = 0; k < set.length; k++) {
          if (set[k + 1] === '-' && k + 2 < set.length) {
            if (ch >= (set[k] as string) && ch <= (set[k + 2] as string)) return true;
            k += 2;
          } else if (set[k] === ch) return true;
        }
        return false;
      };
      tokens.push({ star: false, test: (ch) => inSet(ch) !== negate });
      i = close;
    } else tokens.push({ star: false, test: (ch) => ch === c });
  }
  return tokens;
}

/**
 * Whether a glob (`*`, `?`, `[…]`) matches `name`; a pattern without them never does. Greedy with
 * one backtrack point (the last star): O(pattern × name), whatever the pattern.
 */
export function globMatches(pattern: string, name: string): boolean {
  if (!/[*?[]/.test(pattern)) return false;
  const tokens = globTokens(pattern);
  let t = 0;
  let n = 0;
  let starT = -1;
  let starN = 0;
  while (n < name.length) {
    const token = tokens[t];
    if (token && token.star === false && token.test(name[n] as string)) {
      t++;
      n++;
    } else if (token?.star) {
      starT = t++;
      starN = n;
    } else if (starT >= 0) {
      t = starT + 1;
      n = ++starN;
    } else return false;
  }
  while (tokens[t]?.star) t++;
  return t === tokens.length;
}
