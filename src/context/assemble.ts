import * as os from 'node:os';
import * as path from 'node:path';
import type { AssembleContextInput, AssembledContext, ContextSkill, ContextSourceKind } from '../shared/context-io';
import type { ToolSpec } from '../shared/messages';
import type { ToolRegistry } from '../tools/registry';
import { realWorkspace } from '../safe-fs/workspace';
import { errorMessage } from '../tools/registry';
import {
  environmentSection,
  identitySection,
  memorySection,
  skillLine,
  skillsSection,
  toolsSection,
  type Environment,
  type SandboxMode,
} from './default-prompt';
import { contextOwners, readInstructions } from './instructions';
import {
  MAX_CONTEXT_BYTES,
  MAX_MEMORY_BYTES,
  MAX_SKILLS_SECTION_BYTES,
  MAX_TOOLS_SECTION_BYTES,
  MAX_WARNING_CHARS,
  MAX_WARNINGS,
} from './limits';
import { readLayerFile, type LayerFile } from './layer-files';
import { findSkills } from './skills';
import { bytesText, fitBytes, markCut, utf8Length } from './text';
import { listTop, readCapped } from './workspace-files';
import { cutChars } from '../shared/bounds';

/**
 * The system prompt of a run, assembled once at its start in this order (docs/context.md):
 *   1. Identity (the built-in default: what the agent is, what counts as an instruction)
 *   2. The workspace's SOUL.md, then its project instructions (AGENTS.md / CLAUDE.md, nearest first)
 *   3. Environment (workspace, platform, model, start date)
 *   4. Long-term memory (MEMORY.md)
 *   5. Skills (name, description, SKILL.md path)
 *   6. Tools (one line per tool offered, and the rules for them), then the workspace's TOOLS.md
 *   7. User instructions (`--system`), unless `systemReplace` makes that text the whole prompt.
 * Each part has a cap (limits.ts) and the whole stays within MAX_CONTEXT_BYTES.
 */

export interface AssembleDeps {
  tools: ToolRegistry;
  /** Workspace of runs that name none (the worker's working directory by default). */
  defaultWorkspace?: string;
  /** How bash runs commands on this worker (sandbox/mode.ts). */
  sandbox: SandboxMode;
}

interface Section {
  kind: ContextSourceKind;
  title: string;
  path?: string;
  text: string;
  truncated?: boolean;
  /** 2: a sub-part of the part before it (`## …`), as TOOLS.md is of the tools part. */
  level?: 2;
}

const SEPARATOR = '\n\n';

function render(section: Section): string {
  return `${section.level === 2 ? '##' : '#'} ${section.title}\n\n${section.text}`;
}

function totalBytes(sections: readonly Section[]): number {
  return sections.reduce((sum, s, i) => sum + utf8Length(render(s)) + (i ? SEPARATOR.length : 0), 0);
}

/** Cut first (least needed first): skills, memory, instructions farthest first, tools, environment, identity; user last. */
function cutOrder(sections: readonly Section[]): Section[] {
  const rank: Record<ContextSourceKind, number> = { skills: 0, memory: 1, instructions: 2, default: 3, user: 4 };
  return sections
    .map((section, index) => ({ section, index }))
    .sort((a, b) => rank[a.section.kind] - rank[b.section.kind] || b.index - a.index)
    .map((entry) => entry.section);
}

/** Shrink sections, least needed first, until the prompt fits MAX_CONTEXT_BYTES. */
function fitTotal(sections: Section[], warn: (text: string) => void): Section[] {
  let kept = sections;
  for (const victim of cutOrder(sections)) {
    const excess = totalBytes(kept) - MAX_CONTEXT_BYTES;
    if (excess <= 0) break;
    const size = utf8Length(victim.text);
    const label = victim.path ?? victim.title;
    if (size - excess < 256) {
      kept = kept.filter((s) => s !== victim);
      warn(`${label} left out: the system prompt is capped at ${bytesText(MAX_CONTEXT_BYTES)}`);
      continue;
    }
    const cut = fitBytes(
      victim.text,
      size - excess,
      `cut here: the system prompt is capped at ${bytesText(MAX_CONTEXT_BYTES)}`,
    );
    victim.text = cut.text;
    victim.truncated = true;
    warn(`${label} cut to fit the system prompt's ${bytesText(MAX_CONTEXT_BYTES)}`);
  }
  return kept;
}

/** A layer file as a part of the prompt: cut like an instruction file when the whole is over its cap. */
function layerSection(file: LayerFile): Section {
  return {
    kind: 'instructions',
    title: file.title,
    path: file.path,
    text: file.text,
    ...(file.truncated ? { truncated: true } : {}),
  };
}

/** The tool specs a run is offered; names the worker does not know are left out with a warning. */
function offeredSpecs(tools: ToolRegistry, input: AssembleContextInput, warn: (t: string) => void): ToolSpec[] {
  const names = [...(input.toolNames ?? tools.specs().map((spec) => spec.name)), ...(input.extraToolNames ?? [])];
  const unknown = names.filter((name) => !tools.has(name));
  if (unknown.length) warn(`tools not on this worker are not described: ${unknown.slice(0, 20).join(', ')}`);
  return tools.specs([...new Set(names.filter((name) => tools.has(name)))]);
}

/** The skills section within its byte cap; the skills that made it in. */
function listSkills(
  skills: readonly ContextSkill[],
  warn: (t: string) => void,
): { text: string; listed: ContextSkill[] } {
  const listed: ContextSkill[] = [];
  let text = skillsSection([]);
  for (const skill of skills) {
    const next = `${text}\n${skillLine(skill)}`;
    if (utf8Length(next) > MAX_SKILLS_SECTION_BYTES) {
      warn(
        `${skills.length - listed.length} skills not listed: the skills section is capped at ${bytesText(MAX_SKILLS_SECTION_BYTES)}`,
      );
      break;
    }
    text = next;
    listed.push(skill);
  }
  return { text, listed };
}

export async function assembleContext(input: AssembleContextInput, deps: AssembleDeps): Promise<AssembledContext> {
  const warnings: string[] = [];
  let unshown = 0;
  const warn = (text: string) => {
    if (warnings.length < MAX_WARNINGS - 1) warnings.push(cutChars(text, MAX_WARNING_CHARS));
    else unshown += 1;
  };
  const allWarnings = () => (unshown ? [...warnings, `${unshown} more warnings not shown`] : warnings);

  if (input.systemReplace) {
    if (input.systemPrompt !== undefined) {
      const user = fitBytes(input.systemPrompt, MAX_CONTEXT_BYTES, 'cut: the system prompt is capped');
      if (user.truncated) warn(`the given system prompt was cut to ${bytesText(MAX_CONTEXT_BYTES)}`);
      const sources = user.text
        ? [
            {
              kind: 'user' as const,
              title: 'System prompt',
              bytes: utf8Length(user.text),
              ...(user.truncated ? { truncated: true } : {}),
            },
          ]
        : [];
      return { system: user.text, sources, skills: [], warnings: allWarnings() };
    }
    warn('systemReplace was asked without a systemPrompt: the assembled prompt is used');
  }

  const configured = path.resolve(input.workspace ?? deps.defaultWorkspace ?? process.cwd());
  let workspace: string | undefined;
  try {
    workspace = await realWorkspace(configured);
  } catch (error) {
    warn(`workspace not read: ${errorMessage(error)}`);
  }

  const specs = offeredSpecs(deps.tools, input, warn);
  const offered = new Set(specs.map((spec) => spec.name));
  const env: Environment = {
    workspace: workspace ? configured : undefined,
    os: `${os.type()} ${os.release()}`,
    arch: process.arch,
    model: input.model,
    startedAt: input.startedAt,
    network: input.network === true,
    shell: offered.has('bash'),
    sandbox: deps.sandbox,
  };
  if (Number.isNaN(new Date(input.startedAt).getTime()))
    warn(`startedAt '${cutChars(String(input.startedAt), 40)}' is not a date`);

  const sections: Section[] = [{ kind: 'default', title: 'Identity', text: identitySection() }];
  let skills: ContextSkill[] = [];
  const owners = workspace ? await contextOwners(workspace) : {};
  // Listed once: the files below that are not there cost no walk.
  const top = workspace ? listTop(workspace) : undefined;
  if (workspace) {
    // The system layer: SOUL.md, then the instruction files.
    const soul = await readLayerFile(workspace, 'soul', owners.inside, warn, top);
    if (soul) sections.push(layerSection(soul));
    for (const file of await readInstructions(workspace, warn, top)) {
      sections.push({
        kind: 'instructions',
        title: `Project instructions (${file.path})`,
        path: file.path,
        text: file.text,
        ...(file.truncated ? { truncated: true } : {}),
      });
    }
  }
  sections.push({ kind: 'default', title: 'Environment', text: environmentSection(env) });
  if (workspace) {
    const memory = await readCapped(workspace, 'MEMORY.md', MAX_MEMORY_BYTES, owners.inside, top);
    if (memory.kind === 'refused') warn(`MEMORY.md not read: ${memory.reason}`);
    if (memory.kind === 'ok' && memory.truncated)
      warn(`MEMORY.md cut to its first ${bytesText(MAX_MEMORY_BYTES)} of ${bytesText(memory.fileBytes)}`);
    const text =
      memory.kind !== 'ok'
        ? undefined
        : memory.truncated
          ? markCut(memory.text, `MEMORY.md is ${bytesText(memory.fileBytes)}; only the start is shown: shorten it`)
          : memory.text;
    sections.push({
      kind: 'memory',
      title: 'Long-term memory',
      ...(memory.kind === 'ok' ? { path: 'MEMORY.md' } : {}),
      // A MEMORY.md that is there but refused is not "no MEMORY.md": the model must not overwrite it unseen.
      text: memorySection(text, offered, memory.kind === 'refused' ? memory.reason : undefined),
      ...(memory.kind === 'ok' && memory.truncated ? { truncated: true } : {}),
    });
    const found = await findSkills(workspace, warn, owners.inside, top);
    if (found.length && !offered.has('read_file')) {
      warn(`${found.length} skills not listed: the run does not offer read_file to read them`);
    } else if (found.length) {
      const { text, listed } = listSkills(found, warn);
      skills = listed;
      sections.push({ kind: 'skills', title: 'Skills', text });
    }
  }
  const tools = fitBytes(
    toolsSection(specs, env, input.toolProtocol ?? 'native'),
    MAX_TOOLS_SECTION_BYTES,
    'more tools not described',
  );
  sections.push({ kind: 'default', title: 'Tools', text: tools.text, ...(tools.truncated ? { truncated: true } : {}) });
  const notes = workspace ? await readLayerFile(workspace, 'tools', owners.inside, warn, top) : undefined;
  if (notes && specs.length === 0) warn('TOOLS.md not shown: the run offers no tools');
  else if (notes) sections.push({ ...layerSection(notes), level: 2 });
  if (input.systemPrompt) sections.push({ kind: 'user', title: 'User instructions', text: input.systemPrompt });

  const kept = fitTotal(sections, warn);
  const system = kept.map(render).join(SEPARATOR);
  return {
    system,
    sources: kept.map((s) => ({
      kind: s.kind,
      title: s.title,
      ...(s.path !== undefined ? { path: s.path } : {}),
      bytes: utf8Length(render(s)),
      ...(s.truncated ? { truncated: true } : {}),
    })),
    // A skills section cut to fit lists fewer skills than were found.
    skills: skills.filter((skill) => system.includes(skillLine(skill))),
    warnings: allWarnings(),
  };
}
