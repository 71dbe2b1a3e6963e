import { Context } from '@temporalio/activity';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { PrepareRunInput, PrepareRunOutput } from '../shared/activity-io';
import { createContextActivities } from './context';
import type { HookActivities } from './hooks';
import type { ActivityEnv } from './environment';

/**
 * Run start: the workspace, admitted by the worker's rules and resolved to the real path every
 * later call uses (docs/file-safety.md); the system prompt (docs/context.md); which hook events
 * have hooks (docs/hooks.md); and the run's MCP servers (docs/mcp.md).
 */
export function createRunStart(env: ActivityEnv, hooks: Pick<HookActivities, 'hookEvents'>) {
  const { deps, defaultWorkspace, workspaces, mcp, checkpoints } = env;
  const contextActivities = createContextActivities({ tools: deps.tools, defaultWorkspace, workspaces });

  async function prepareRun(input: PrepareRunInput): Promise<PrepareRunOutput> {
    // A fork names a new directory for its files (docs/checkpoints.md#fork): made here, on the worker that
    // restores into it (its parent must exist); the workspace rules are checked on it next, as for any run.
    const requested = input.context.workspace;
    if (input.restoreFrom && checkpoints.enabled && requested && path.isAbsolute(requested)) {
      await fs.mkdir(requested, { mode: 0o700 }).catch(() => undefined);
    }
    const workspace = await contextActivities.admitWorkspace(input.context.workspace);
    // A fork's files first (the instruction files come from them), then turn 0: the workspace as the run found it.
    const checkpoint = await checkpoints.atRunStart(input, workspace);
    const context = await contextActivities.assembleContext({ ...input.context, workspace });
    const hookEvents = await hooks.hookEvents({ workspace });
    const servers = input.mcp
      ? await mcp.listForRun({ ...input, context: { ...input.context, workspace } })
      : undefined;
    const local = Context.current().info.isLocal && deps.workerQueue;
    return {
      context,
      hooks: hookEvents,
      workspace,
      ...(local ? { workerQueue: deps.workerQueue } : {}),
      ...(servers ? { mcp: servers } : {}),
      ...(checkpoint ? { checkpoint } : {}),
    };
  }

  return { prepareRun };
}
