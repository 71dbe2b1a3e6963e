import { ActivityFailure, ApplicationFailure, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { PrepareRunInput, PrepareRunOutput } from '../../shared/activity-io';
import { cutChars } from '../../shared/bounds';
import { ErrorTypes } from '../../shared/constants';
import { DONE_TOOL_NAME } from '../../shared/run/tool-policy';
import type { Run } from '../run/run';
import { workerToolNames } from '../run/settings';
import type { RunContext } from '../run/run-state';
import { agentActivities } from './activity-proxy';

/** What run start learnt besides the context (which it keeps in the run's state). */
export interface Prepared {
  /**
   * The queue of the worker running the workflow, when run start was the `prepareRun` local activity:
   * the first model call goes there. Unset when it went with the first model call (`firstModelCall`,
   * steps/start.ts): that call's answer names its worker's queue instead.
   */
  workerQueue?: string;
  /** The worker refused the run's workspace (its rules, its roots): the run fails at start with this message. */
  refused?: string;
}

/** The worker's refusal of the workspace, when that is why run start failed. */
function workspaceRefusal(error: unknown): string | undefined {
  // A local activity's failure may arrive wrapped in an ActivityFailure or as the failure itself.
  const cause = error instanceof ActivityFailure ? error.cause : error;
  return cause instanceof ApplicationFailure && cause.type === ErrorTypes.WorkspaceRefused ? cause.message : undefined;
}

/**
 * What a run prepares once, at its start: the system prompt assembled from
 * the default prompt and the workspace (instruction files, memory, skills; docs/context.md), and
 * which hook events have hooks. One activity, recorded in history, so replay and every later
 * execution use exactly what the first one read; continued executions take it from their input.
 */
export async function prepareRun(run: Run): Promise<Prepared> {
  const { state, mcp } = run;
  if (state.context) {
    // A new execution lists the run's MCP servers again: a changed list is taken here, and reported.
    if (state.context.workspace) mcp.useWorkspace(state.context.workspace);
    await mcp.resume(state.context.sources);
    mcp.carryIn(state.context.sources);
    return {};
  }
  // A local activity: it runs where the workflow runs, which tells the run where to keep its conversation.
  const { prepareRun: prepare } = agentActivities(
    proxyLocalActivities<Activities>({
      startToCloseTimeout: '2 minutes',
      retry: { initialInterval: '1 second', maximumAttempts: 5 },
    }),
  );
  let prepared: PrepareRunOutput;
  try {
    prepared = await prepare.executeWithOptions({ summary: 'assemble context · hooks' }, [prepareInput(run)]);
  } catch (error) {
    const refused = workspaceRefusal(error);
    if (refused === undefined) throw error;
    return { refused: cutChars(refused, 2000) };
  }
  return usePrepared(run, prepared);
}

/** What run start asks the worker for: the `prepareRun` local activity's input, or `firstModelCall`'s `prepare`. */
export function prepareInput(run: Run): PrepareRunInput {
  const { input, settings } = run;
  return {
    context: {
      ...(input.workspace ? { workspace: input.workspace } : {}),
      ...(input.tools ? { toolNames: workerToolNames(input.tools) } : {}),
      ...(settings.requireDone ? { extraToolNames: [DONE_TOOL_NAME] } : {}),
      startedAt: new Date(Date.now()).toISOString(),
      ...(input.systemPrompt !== undefined ? { systemPrompt: input.systemPrompt } : {}),
      ...(input.systemReplace ? { systemReplace: true } : {}),
      model: settings.model,
      toolProtocol: settings.toolProtocol,
      ...(input.network ? { network: true } : {}),
    },
    mcp: true,
    ...(input.mcpServers ? { mcpServers: input.mcpServers } : {}),
    ...(input.restoreFrom ? { restoreFrom: input.restoreFrom } : {}),
    ...(input.checkpointIgnore ? { checkpointIgnore: input.checkpointIgnore } : {}),
  };
}

/** What the worker prepared, kept in the run's state (either way run start was asked for). */
export function usePrepared(run: Run, prepared: PrepareRunOutput): Prepared {
  const { state, mcp, emit } = run;
  const context: RunContext = {
    // The workspace's real path, recorded: the run's tools and hooks use it, and nothing else.
    ...(typeof prepared.workspace === 'string' ? { workspace: prepared.workspace } : {}),
    system: prepared.context.system,
    sources: prepared.context.sources.map((s) => ({ ...s })),
    warnings: prepared.context.warnings.map((w) => cutChars(w, 500)).slice(0, 20),
  };
  for (const warning of context.warnings) emit({ kind: 'notice', message: `context: ${warning}` });
  for (const report of prepared.hooks.reports.slice(0, 20)) emit({ kind: 'notice', message: `hooks: ${report}` });
  mcp.start(prepared.mcp);
  // Carried across continue-as-new with the context, so the next execution lists the same servers.
  mcp.carryIn(context.sources);
  state.context = context;
  state.hookEvents = [...prepared.hooks.events];
  run.checkpoints.offer(prepared.checkpoint);
  run.checkpoints.settle(0);
  return prepared.workerQueue ? { workerQueue: prepared.workerQueue } : {};
}
