import { assembleContext, type SandboxMode } from '../context';
import type { AssembleContextInput, AssembledContext } from '../shared/context-io';
import type { ToolRegistry } from '../tools/registry';
import { sandboxStatus } from '../tools/sandbox';

export interface ContextActivityDeps {
  /** The worker's tools: the prompt describes those the run is offered. */
  tools: ToolRegistry;
  /** Workspace of runs that name none (the worker's working directory by default). */
  defaultWorkspace?: string;
  /** How bash runs commands; default: this worker's sandbox status (`DURABLE_AGENT_SANDBOX`, the machine). */
  sandboxMode?: () => SandboxMode;
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

  return { assembleContext: assembleContextActivity };
}

export type ContextActivities = ReturnType<typeof createContextActivities>;
