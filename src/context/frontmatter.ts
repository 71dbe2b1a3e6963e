import { parseDocument } from 'yaml';

/**
 * YAML frontmatter as skills (`SKILL.md`) and agent files (`.claude/agents/*.md`) write it: the text
 * between a first line `---` and the next `---` (or `...`), a mapping of fields, and the body after
 * it. Pure and never throws: a file that breaks a rule gives the rule, in words, for the warning that
 * names the file. Parsed with the `yaml` library, duplicate keys refused and aliases bounded (a
 * "billion laughs" header is refused, not expanded).
 */
export type SplitFrontmatter =
  { ok: true; data: Record<string, unknown>; body: string } | { ok: false; problem: string };

/** `unterminated`: what to add to "its frontmatter does not end with ---" (e.g. the byte bound read). */
export function splitFrontmatter(text: string, options: { unterminated?: string } = {}): SplitFrontmatter {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (lines[0]?.trimEnd() !== '---') return { ok: false, problem: 'it does not start with YAML frontmatter (---)' };
  const end = lines.findIndex((line, i) => i > 0 && (line.trimEnd() === '---' || line.trimEnd() === '...'));
  if (end === -1) {
    const more = options.unterminated ? ` ${options.unterminated}` : '';
    return { ok: false, problem: `its frontmatter does not end with ---${more}` };
  }
  const doc = parseDocument(lines.slice(1, end).join('\n'), { uniqueKeys: true });
  const [error] = doc.errors;
  if (error) return { ok: false, problem: `its frontmatter is not valid YAML (${error.message.split('\n')[0]})` };
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 50 });
  } catch (e) {
    return { ok: false, problem: `its frontmatter cannot be read (${e instanceof Error ? e.message : String(e)})` };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return { ok: false, problem: 'its frontmatter is not a mapping of fields' };
  }
  return { ok: true, data: data as Record<string, unknown>, body: lines.slice(end + 1).join('\n') };
}

/**
 * Whitespace runs and control characters (C0, DEL, C1, line and paragraph separators) as one space:
 * a description is one line in the prompt, so folded YAML or a stray escape cannot start another.
 */
export function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\s\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').trim();
}
