import { ApplicationFailure } from '@temporalio/common';
import { assembleContext, type SandboxMode } from '../context';
import { ErrorTypes } from '../shared/constants';
import type { AssembleContextInput, AssembledContext } from '../shared/context-io';
import type { ToolRegistry } from '../tools/registry';
import { sandboxStatus } from '../sandbox';
import { WorkspaceRefusedError, type WorkspacePolicy } from '../tools/workspace-roots';

export interface ContextActivityDeps {
  /** The worker's tools: the prompt describes those the run is offered. */
  tools: ToolRegistry;
  /** Workspace of runs that name none (the worker's working directory by default). */
  defaultWorkspace?: string;
  /** How bash runs commands; default: this worker's sandbox status (`DURABLE_AGENT_SANDBOX`, the machine). */
  sandboxMode?: () => SandboxMode;
  /** The worker's workspace rules (run start admits the workspace by them); without them any directory is taken. */
  workspaces?: WorkspacePolicy;
}

/**
 * The `assembleContext` activity: the workflow calls it once at run start and uses its `system` for
 * every model call of the run. Being an activity, its result is recorded in history, so a replay
 * (or a worker whose files changed since) sees the prompt the run started with.
 */
export function createContextActivities(deps: ContextActivityDeps) {
  const sandboxMode = deps.sandboxMode ?? (() => sandboxStatus().mode);

  async function assembleContextActivity(input: AssembleContextInput): Promise<AssembledContext> {
    return assembleContext(input, {
      tools: deps.tools,
      ...(deps.defaultWorkspace !== undefined ? { defaultWorkspace: deps.defaultWorkspace } : {}),
      sandbox: sandboxMode(),
    });
  }

  /**
   * The run's workspace, admitted once at run start: its real path, which the run records and uses
   * from then on. A refused workspace fails the run at once (non-retryable), naming the rule and the
   * worker's roots: asking again cannot change the operator's decision.
   */
  async function admitWorkspace(requested: string | undefined): Promise<string> {
    const workspace = requested ?? deps.defaultWorkspace ?? process.cwd();
    if (!deps.workspaces) return workspace;
    try {
      return await deps.workspaces.admit(workspace);
    } catch (error) {
      if (error instanceof WorkspaceRefusedError) {
        throw ApplicationFailure.nonRetryable(error.message, ErrorTypes.WorkspaceRefused, { rule: error.rule });
      }
      throw error;
    }
  }

  return { assembleContext: assembleContextActivity, admitWorkspace };
}

export type ContextActivities = ReturnType<typeof createContextActivities>;
