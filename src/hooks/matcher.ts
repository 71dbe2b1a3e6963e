import RE2 from 're2';

/**
 * Tool-name matchers, as Claude Code reads them: empty, missing or `*` matches every tool; a string of
 * letters, digits, `_` and `|` is an exact name or a list of names (`bash|write_file`); anything else
 * is a regular expression tested anywhere in the name (`^mcp__.*`, `.*_file`), case-sensitive. The
 * expression is compiled with RE2, so no matcher can make matching take more than linear time.
 */
export type ToolMatcher = (toolName: string) => boolean;

const NAME_LIST = /^[A-Za-z0-9_|]+$/;
export const MAX_MATCHER_CHARS = 1024;

/** Compiles a matcher; throws an Error naming the matcher when it is not a valid RE2 expression. */
export function compileMatcher(matcher: string | undefined): ToolMatcher {
  const source = matcher?.trim() ?? '';
  if (source === '' || source === '*') return () => true;
  if (source.length > MAX_MATCHER_CHARS) throw new Error(`matcher is longer than ${MAX_MATCHER_CHARS} characters`);
  if (NAME_LIST.test(source)) {
    const names = new Set(source.split('|').filter(Boolean));
    return (toolName) => names.has(toolName);
  }
  let re: RE2;
  try {
    re = new RE2(source, 'u');
  } catch (error) {
    throw new Error(`matcher '${source}' is not a valid regular expression (RE2 syntax): ${(error as Error).message}`);
  }
  return (toolName) => re.test(toolName);
}

/** True when the matcher is a plain list of names; they are what the settings check against the tools. */
export function matcherNames(matcher: string | undefined): string[] | undefined {
  const source = matcher?.trim() ?? '';
  return source !== '' && source !== '*' && NAME_LIST.test(source) ? source.split('|').filter(Boolean) : undefined;
}
