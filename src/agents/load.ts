import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { contextOwners } from '../context/instructions';
import { cutChars, utf8Length } from '../shared/bounds';
import type { AgentDefinition, AgentDefinitionSource, LoadAgentDefinitionsResult } from '../shared/subagents';
import { AGENTS_DIR_ENV_VAR, operatorPathInWorkspace, workerAgentsDir } from '../safe-fs/operator-files';
import {
  AGENT_FILE,
  listOperatorAgentFiles,
  listWorkspaceAgentFiles,
  readOperatorAgentFile,
  readWorkspaceAgentFile,
} from './files';
import {
  MAX_AGENT_DIR_ENTRIES,
  MAX_AGENT_FILE_BYTES,
  MAX_AGENT_PROMPTS_TOTAL_BYTES,
  MAX_AGENT_WARNING_CHARS,
  MAX_AGENT_WARNINGS,
  MAX_AGENTS,
} from './limits';
import { parseAgentFile } from './parse';
import type { DirList, FileRead } from '../context/workspace-files';

/**
 * Named subagents for a run (docs/subagents.md#defining-agents): the operator's worker-wide folder
 * first, then the workspace's `.durable-agent/agents/` and `.claude/agents/`. A name defined twice
 * keeps its first definition, so the operator's wins over the workspace's (which the model can write).
 */

export { AGENTS_DIR_ENV_VAR, workerAgentsDir };
/** Where a workspace's agents are, in this order. */
export const WORKSPACE_AGENT_DIRS = ['.durable-agent/agents', '.claude/agents'] as const;

export interface LoadAgentsOptions {
  /** The run's workspace, its real path already verified; absent: operator agents only. */
  workspace?: string;
  /** The operator's folder; `configured`: named by the operator, so a missing folder is worth a warning. */
  operatorDir?: { dir: string; configured: boolean };
  /**
   * The worker's tools (`task` is always known): an agent's tool that names none of them is warned
   * about. MCP tools (`mcp__…`) are known only per run and are not. Absent: no such warning.
   */
  toolNames?: readonly string[];
}

/** Tools the workflow itself offers, whatever the worker's registry holds. */
const WORKFLOW_TOOLS = ['task'];

class Collector {
  constructor(private readonly toolNames?: readonly string[]) {}
  readonly agents: AgentDefinition[] = [];
  private readonly warnings: string[] = [];
  private dropped = 0;
  private promptBytes = 0;
  private full = false;

  warn(text: string): void {
    if (this.warnings.length < MAX_AGENT_WARNINGS - 1) this.warnings.push(cutChars(text, MAX_AGENT_WARNING_CHARS));
    else this.dropped++;
  }

  /** Adds a parsed file's agent unless its name is taken or a cap is reached. */
  add(text: string, source: AgentDefinitionSource, file: string, shown: string): void {
    const parsed = parseAgentFile(text, source, file);
    if (!parsed.ok) return this.warn(`agent ${shown} skipped: ${parsed.problem}`);
    const agent = parsed.agent;
    const earlier = this.agents.find((a) => a.name === agent.name);
    if (earlier) {
      const by = earlier.source === source ? '' : ` (the ${earlier.source}'s definition wins)`;
      return this.warn(`agent ${shown} skipped: the name '${agent.name}' is already taken by ${earlier.path}${by}`);
    }
    const stem = path.basename(file, '.md');
    if (stem !== agent.name) this.warn(`agent ${shown}: its name '${agent.name}' differs from its file name`);
    if (this.full || this.agents.length >= MAX_AGENTS) {
      if (!this.full) this.warn(`more than ${MAX_AGENTS} agents: ${shown} and any after it are not loaded`);
      this.full = true;
      return;
    }
    const bytes = utf8Length(agent.prompt);
    if (this.promptBytes + bytes > MAX_AGENT_PROMPTS_TOTAL_BYTES) {
      return this.warn(
        `agent ${shown} skipped: the agents' prompts together would be over ${MAX_AGENT_PROMPTS_TOTAL_BYTES} bytes`,
      );
    }
    this.promptBytes += bytes;
    this.agents.push(agent);
    this.warnUnknownTools(agent, shown);
  }

  /** A tool list naming nothing this worker has (a Claude Code name without a counterpart, a typo) says so. */
  private warnUnknownTools(agent: AgentDefinition, shown: string): void {
    const known = this.toolNames;
    if (!known || !agent.tools) return;
    const unknown = agent.tools.filter(
      (t) => !known.includes(t) && !WORKFLOW_TOOLS.includes(t) && !t.startsWith('mcp__'),
    );
    if (!unknown.length) return;
    const left = agent.tools.length - unknown.length;
    this.warn(
      `agent ${shown}: its tools ${unknown.join(', ')} match no tool of this worker and are left out` +
        `${left === 0 ? ' (it gets no tool at all)' : ''}; tools: ${[...known, ...WORKFLOW_TOOLS].join(', ')}` +
        ` (Claude Code's Read, Write, Edit, Glob, Grep, Bash and Task are taken as theirs)`,
    );
  }

  result(): LoadAgentDefinitionsResult {
    const warnings = [...this.warnings];
    if (this.dropped) warnings.push(`… and ${this.dropped} more warnings about agent files`);
    return { agents: this.agents, warnings };
  }
}

/** A folder listing's problems as warnings; the names to read. */
function listed(list: DirList, shownDir: string, warn: (t: string) => void): string[] {
  if (list.kind === 'missing') return [];
  if (list.kind === 'refused') {
    warn(`${shownDir}/ not searched for agents: ${list.reason}`);
    return [];
  }
  if (list.more) warn(`${shownDir}/ has more than ${MAX_AGENT_DIR_ENTRIES} files; only the first are read`);
  return list.names.filter((name) => {
    if (AGENT_FILE.test(name)) return true;
    // Quoted as JSON: the name itself may hold the line breaks it is refused for.
    warn(`agent file ${shownDir}/${JSON.stringify(name)} skipped: a file name is letters, digits, '.', '_', '-'`);
    return false;
  });
}

/** A file read's problems as warnings; its text when it can be used whole. */
function usable(read: FileRead, shown: string, warn: (t: string) => void): string | undefined {
  if (read.kind === 'missing') return undefined;
  if (read.kind === 'refused') return void warn(`agent ${shown} skipped: ${read.reason}`);
  if (read.truncated) {
    return void warn(
      `agent ${shown} skipped: it is ${read.fileBytes} bytes; an agent file may be at most ${MAX_AGENT_FILE_BYTES}`,
    );
  }
  return read.text;
}

async function realPath(p: string): Promise<string | undefined> {
  return fs.realpath(p).catch(() => undefined);
}

/** Every agent the run may name, and what was skipped and why. Never throws for what a file holds. */
export async function loadAgents(options: LoadAgentsOptions): Promise<LoadAgentDefinitionsResult> {
  const out = new Collector(options.toolNames);
  const warn = (t: string) => out.warn(t);
  const workspace = options.workspace;
  const owners = workspace ? (await contextOwners(workspace)).inside : undefined;
  const operator = options.operatorDir;
  if (operator) {
    const real = await realPath(operator.dir);
    if (real === undefined) {
      if (operator.configured) warn(`the operator's agents folder ${operator.dir} does not exist`);
    } else if (workspace && operatorPathInWorkspace({ path: real, folder: false }, workspace)) {
      // A folder the model can write is no operator's: read as the workspace's, with its rules (the
      // worker refuses such a workspace at run start; this holds for a worker without that rule).
      warn(
        `the operator's agents folder ${operator.dir} lies in the run's workspace, which the model can write: its agents are read as workspace agents`,
      );
      const rel = path.relative(workspace, real) || '.';
      await readWorkspaceDir(workspace, rel, owners, out);
    } else {
      for (const name of listed(await listOperatorAgentFiles(real, MAX_AGENT_DIR_ENTRIES), operator.dir, warn)) {
        const file = path.join(operator.dir, name);
        const text = usable(await readOperatorAgentFile(file, MAX_AGENT_FILE_BYTES + 1), file, warn);
        if (text !== undefined) out.add(text, 'operator', file, file);
      }
    }
  }
  if (workspace) {
    for (const dir of WORKSPACE_AGENT_DIRS) await readWorkspaceDir(workspace, dir, owners, out);
  }
  return out.result();
}

async function readWorkspaceDir(
  workspace: string,
  rel: string,
  owners: readonly number[] | undefined,
  out: Collector,
): Promise<void> {
  const warn = (t: string) => out.warn(t);
  for (const name of listed(await listWorkspaceAgentFiles(workspace, rel, MAX_AGENT_DIR_ENTRIES), rel, warn)) {
    const file = path.posix.join(rel, name);
    const text = usable(await readWorkspaceAgentFile(workspace, file, MAX_AGENT_FILE_BYTES + 1, owners), file, warn);
    if (text !== undefined) out.add(text, 'workspace', file, file);
  }
}
