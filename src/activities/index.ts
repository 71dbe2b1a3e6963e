import { createHookActivities } from './hooks';
import { createAgentActivities } from './agents';
import { checkOutput } from './output';
import { keepFinalMessages } from './final-messages';
import { createFirstModelCall } from './first-call';
import { debugRunTool } from '../telemetry/debug-log';
import { activityEnv, type ActivityDeps } from './environment';
import { createModelCalls } from './model-calls';
import { createToolCalls } from './tool-calls';
import { createRunStart } from './run-start';

export { ConversationCache } from './conversation-cache';
export type { ActivityDeps } from './environment';

/**
 * Activities are built by a factory so the worker passes real providers and tests pass scripted ones.
 * Each activity receives and returns plain JSON only. Each concern is its own module: model calls,
 * tool calls, run start, hooks, subagent definitions; this composes them over one shared environment.
 */
export function createActivities(deps: ActivityDeps) {
  const env = activityEnv(deps);
  const verifyWorkspace = (workspace: string) => env.workspaces.verify(workspace);
  const hooks = createHookActivities({
    ...(deps.hooks ? { hooks: deps.hooks } : {}),
    settingsFile: env.settingsFile,
    defaultWorkspace: env.defaultWorkspace,
    verifyWorkspace,
    toolNames: deps.tools.names(),
  });
  const agents = createAgentActivities({
    ...(deps.agentsDir !== undefined ? { agentsDir: deps.agentsDir } : {}),
    defaultWorkspace: env.defaultWorkspace,
    verifyWorkspace,
    toolNames: deps.tools.names(),
  });
  const { callModel, summarizeRun } = createModelCalls(env);
  const { runTool, listMcpTools } = createToolCalls(env);
  const { prepareRun } = createRunStart(env, hooks);

  return {
    callModel,
    firstModelCall: createFirstModelCall({ prepareRun, callModel, cancelWatchMs: env.cancelWatchMs }),
    summarizeRun,
    runTool: env.debug ? debugRunTool(runTool) : runTool,
    prepareRun,
    runHook: hooks.runHook,
    listMcpTools,
    checkOutput,
    keepFinalMessages,
    loadAgentDefinitions: agents.loadAgentDefinitions,
  };
}

export type Activities = ReturnType<typeof createActivities>;
