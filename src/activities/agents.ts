import { realpathSync } from 'node:fs';
import * as path from 'node:path';
import { loadAgents, workerAgentsDir } from '../agents';
import type { LoadAgentDefinitionsInput, LoadAgentDefinitionsResult } from '../shared/subagents';
import { errorMessage } from '../tools/registry';
import { operatorPathInWorkspace } from '../safe-fs/operator-files';

function realOrUndefined(p: string): string | undefined {
  try {
    return realpathSync.native(path.resolve(p));
  } catch {
    return undefined;
  }
}

export interface AgentActivityDeps {
  /** The operator's agents folder (`worker --agents-dir`, `AgentPlugin({ agentsDir })`); default: see workerAgentsDir. */
  agentsDir?: string;
  /** Workspace of runs that name none. */
  defaultWorkspace: string;
  /** The run's recorded workspace checked again (the worker's workspace rules); throws when refused. */
  verifyWorkspace: (workspace: string) => Promise<string>;
  /** The worker's tools, for the warning about an agent's tool that names none of them. */
  toolNames?: readonly string[];
}

/**
 * The `loadAgentDefinitions` activity: the named subagents a run may start with `task`, read when
 * the run needs them. Its result is recorded in history, so a replay sees the definitions the run
 * used even when the files changed since.
 */
export function createAgentActivities(deps: AgentActivityDeps) {
  const operatorDir =
    deps.agentsDir !== undefined ? { dir: path.resolve(deps.agentsDir), configured: true } : workerAgentsDir();

  /** Whether the operator's folder lies in a workspace as requested (as spelt, and as it resolves). */
  const inRequested = (requested: string) =>
    [path.resolve(requested), realOrUndefined(requested)].some(
      (w) => w !== undefined && operatorPathInWorkspace({ path: operatorDir.dir, folder: true }, w) !== undefined,
    );

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
    if (refused !== undefined && inRequested(requested)) {
      // A workspace refused for holding the operator's folder: that folder is the model's to write.
      const why = `the operator's agents folder ${operatorDir.dir} lies in that workspace: no agent was read`;
      return { agents: [], warnings: [refused, why] };
    }
    const result = await loadAgents({
      ...(workspace !== undefined ? { workspace } : {}),
      operatorDir,
      ...(deps.toolNames ? { toolNames: deps.toolNames } : {}),
    });
    return refused ? { ...result, warnings: [refused, ...result.warnings] } : result;
  }

  return { loadAgentDefinitions };
}
