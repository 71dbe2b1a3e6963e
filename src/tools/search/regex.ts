import RE2 from 're2';

/**
 * grep's patterns, compiled with RE2: matching takes time linear in the text whatever the pattern,
 * so no pattern can freeze a search (a JavaScript RegExp backtracks: `(a+)+\1$` on 40 `a`s never
 * ends). RE2 has no back-references and no look-around; such patterns are refused with a message
 * that names the construct, because the model can rewrite them once it knows.
 */

/** A pattern that cannot be run as asked; the message says why and what to do instead. */
export class PatternRefused extends Error {
  override readonly name = 'PatternRefused';
}

/** What RE2 syntax is, in one sentence the model can act on. */
export const RE2_SYNTAX_NOTE =
  'grep uses RE2 regular-expression syntax (as ripgrep and Go do), which matches in linear time and has no ' +
  'back-references, look-ahead, look-behind, atomic groups or possessive quantifiers.';

/** RE2's complaint about a construct it does not run, turned into the construct's name. */
function unsupportedConstruct(re2Message: string): string | undefined {
  const escape = /invalid escape sequence: (\\[1-9]\d*|\\k)/.exec(re2Message);
  if (escape) return `back-references (${escape[1] === '\\k' ? '\\k<name>' : escape[1]}) are not supported`;
  const perl = /invalid (?:perl operator|named capture group): (\(\?<?[=!>]?)/.exec(re2Message);
  if (perl) {
    const op = perl[1];
    if (op === '(?=') return 'look-ahead (?=…) is not supported';
    if (op === '(?!') return 'negative look-ahead (?!…) is not supported';
    if (op === '(?<=') return 'look-behind (?<=…) is not supported';
    if (op === '(?<!') return 'negative look-behind (?<!…) is not supported';
    if (op === '(?>') return 'atomic groups (?>…) are not supported';
  }
  const possessive = /bad repetition operator: ([*+?}]\+)/.exec(re2Message);
  if (possessive) return `possessive quantifiers (${possessive[1]}) are not supported`;
  return undefined;
}

/** Compile `source` with RE2, or throw {@link PatternRefused} naming what RE2 could not accept. */
export function compileRe2(source: string, flags: string, what: string): RE2 {
  try {
    return new RE2(source, flags);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const construct = unsupportedConstruct(message);
    if (construct) throw new PatternRefused(`The ${what} '${source}' was refused: ${construct}. ${RE2_SYNTAX_NOTE}`);
    throw new PatternRefused(`Invalid ${what} '${source}': ${message}. ${RE2_SYNTAX_NOTE}`);
  }
}

/**
 * Constructs whose meaning depends on where the searched text starts and ends (`\A`, `\z`, a flag
 * group that can turn multi-line mode off). For them a match inside a line does not imply a match
 * in a block of lines, so the block pre-filter is not used and every line is tested on its own.
 */
const TEXT_BOUNDARY_SENSITIVE = /\\[Az]|\(\?[a-zA-Z]*-/;

/** The two compiled forms grep uses: one line at a time, and a block of whole lines at once. */
export interface GrepRegexes {
  /** Tested against one line (without its `\n`). */
  line: RE2;
  /**
   * Searched over a block of whole lines (multi-line mode) to find candidate lines quickly;
   * every candidate is confirmed with `line`. Undefined when the pattern needs per-line testing.
   */
  block: RE2 | undefined;
}

/** Compile grep's pattern; throws {@link PatternRefused}. */
export function compileGrepRegexes(pattern: string, caseInsensitive: boolean): GrepRegexes {
  const i = caseInsensitive ? 'i' : '';
  const line = compileRe2(pattern, i, 'pattern');
  const block = TEXT_BOUNDARY_SENSITIVE.test(pattern) ? undefined : compileRe2(pattern, `${i}m`, 'pattern');
  return { line, block };
}
