import * as path from 'node:path';
import { loadAgents, workerAgentsDir } from '../agents';
import type { LoadAgentDefinitionsInput, LoadAgentDefinitionsResult } from '../shared/subagents';
import { errorMessage } from '../tools/registry';

export interface AgentActivityDeps {
  /** The operator's agents folder (`worker --agents-dir`, `AgentPlugin({ agentsDir })`); default: see workerAgentsDir. */
  agentsDir?: string;
  /** Workspace of runs that name none. */
  defaultWorkspace: string;
  /** The run's recorded workspace checked again (the worker's workspace rules); throws when refused. */
  verifyWorkspace: (workspace: string) => Promise<string>;
}

/**
 * The `loadAgentDefinitions` activity: the named subagents a run may start with `task`, read when
 * the run needs them. Its result is recorded in history, so a replay sees the definitions the run
 * used even when the files changed since.
 */
export function createAgentActivities(deps: AgentActivityDeps) {
  const operatorDir =
    deps.agentsDir !== undefined ? { dir: path.resolve(deps.agentsDir), configured: true } : workerAgentsDir();

  async function loadAgentDefinitions(input: LoadAgentDefinitionsInput): Promise<LoadAgentDefinitionsResult> {
    // Outside clients and old histories may send anything: a workspace that is not a path is none.
    const raw = (input as { workspace?: unknown } | null | undefined)?.workspace;
    const requested = typeof raw === 'string' && raw !== '' ? raw : deps.defaultWorkspace;
    let workspace: string | undefined;
    let refused: string | undefined;
    try {
      workspace = await deps.verifyWorkspace(requested);
    } catch (error) {
      refused = `the workspace's agents were not read: ${errorMessage(error)}`;
    }
    const result = await loadAgents({ ...(workspace !== undefined ? { workspace } : {}), operatorDir });
    return refused ? { ...result, warnings: [refused, ...result.warnings] } : result;
  }

  return { loadAgentDefinitions };
}
