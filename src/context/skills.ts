import type { ContextSkill } from '../shared/context-io';
import {
  MAX_SKILL_DESCRIPTION_CHARS,
  MAX_SKILL_DIR_ENTRIES,
  MAX_SKILL_HEADER_BYTES,
  MAX_SKILL_NAME_CHARS,
  MAX_SKILLS,
} from './limits';
import { oneLine, splitFrontmatter } from './frontmatter';
import { listFolders, readCapped, type TopNames } from './workspace-files';

/**
 * Skills, as in Anthropic's Agent Skills (agentskills.io): a folder holding a `SKILL.md` that starts
 * with YAML frontmatter giving `name` and `description`. Only the list goes into the prompt; the
 * model reads a skill's body with read_file when the task calls for it.
 */

/** Where skills are looked for, in this order; a name found twice keeps its first folder. */
export const SKILL_ROOTS = ['skills', '.durable-agent/skills', '.claude/skills'] as const;

/** agentskills.io: lowercase letters and digits in words joined by single hyphens. */
const SKILL_NAME = /^[\p{Ll}\p{Lo}\p{Nd}]+(?:-[\p{Ll}\p{Lo}\p{Nd}]+)*$/u;

export type Frontmatter = { ok: true; name: string; description: string } | { ok: false; problem: string };

/** The frontmatter between a first line `---` and the next `---` (or `...`), parsed and checked. */
export function parseSkillFrontmatter(text: string): Frontmatter {
  const split = splitFrontmatter(text, { unterminated: `within ${MAX_SKILL_HEADER_BYTES} bytes` });
  if (!split.ok) return split;
  const { name, description } = split.data;
  if (typeof name !== 'string' || name.length === 0) return { ok: false, problem: 'its frontmatter has no name' };
  if (name.length > MAX_SKILL_NAME_CHARS || !SKILL_NAME.test(name)) {
    return {
      ok: false,
      problem:
        `its name '${name.slice(0, MAX_SKILL_NAME_CHARS)}' is not 1-${MAX_SKILL_NAME_CHARS} lowercase letters, ` +
        'digits and single hyphens',
    };
  }
  if (typeof description !== 'string' || description.trim() === '') {
    return { ok: false, problem: 'its frontmatter has no description' };
  }
  // One skill, one line in the prompt.
  const line = oneLine(description);
  if (line.length > MAX_SKILL_DESCRIPTION_CHARS) {
    return { ok: false, problem: `its description is longer than ${MAX_SKILL_DESCRIPTION_CHARS} characters` };
  }
  return { ok: true, name, description: line };
}

/**
 * Folder names a skill may live in: letters, digits, `.`, `_`, `-` and inner spaces. Its path goes
 * into the prompt, so a name with a line break, `#` or a backquote could forge a heading there.
 */
const SKILL_FOLDER = /^[\p{L}\p{N}._-](?:[\p{L}\p{N}._ -]{0,126}[\p{L}\p{N}._-])?$/u;

/**
 * The workspace's skills, in root order then by folder name, at most MAX_SKILLS; `warn` hears what
 * was skipped. `owners`: who may own a SKILL.md (see readCapped); `top`: the workspace's top names, when listed.
 */
export async function findSkills(
  realWorkspace: string,
  warn: (text: string) => void,
  owners?: readonly number[],
  top?: TopNames,
): Promise<ContextSkill[]> {
  const skills: ContextSkill[] = [];
  const seen = new Map<string, string>();
  for (const root of SKILL_ROOTS) {
    const listed = await listFolders(realWorkspace, root, MAX_SKILL_DIR_ENTRIES, top);
    if (listed.kind === 'missing') continue;
    if (listed.kind === 'refused') {
      warn(`${root}/ not searched for skills: ${listed.reason}`);
      continue;
    }
    if (listed.more) warn(`${root}/ has more than ${MAX_SKILL_DIR_ENTRIES} folders; only the first are searched`);
    for (const folder of listed.names) {
      if (!SKILL_FOLDER.test(folder)) {
        // Quoted as JSON: the name itself may hold the line breaks it is refused for.
        warn(
          `skill folder ${root}/${JSON.stringify(folder)} skipped: a skill folder's name is letters, digits, '.', '_', '-' and spaces`,
        );
        continue;
      }
      const file = `${root}/${folder}/SKILL.md`;
      const read = await readCapped(realWorkspace, file, MAX_SKILL_HEADER_BYTES, owners);
      if (read.kind === 'missing') continue;
      if (read.kind === 'refused') {
        warn(`skill ${file} skipped: ${read.reason}`);
        continue;
      }
      const parsed = parseSkillFrontmatter(read.text);
      if (!parsed.ok) {
        warn(`skill ${file} skipped: ${parsed.problem}`);
        continue;
      }
      const earlier = seen.get(parsed.name);
      if (earlier !== undefined) {
        warn(`skill ${file} skipped: the name '${parsed.name}' is already taken by ${earlier}`);
        continue;
      }
      if (parsed.name !== folder) warn(`skill ${file}: its name '${parsed.name}' differs from its folder '${folder}'`);
      if (skills.length >= MAX_SKILLS) {
        warn(`more than ${MAX_SKILLS} skills: ${file} and any after it are not listed`);
        return skills;
      }
      seen.set(parsed.name, file);
      skills.push({ name: parsed.name, description: parsed.description, path: file });
    }
  }
  return skills;
}
