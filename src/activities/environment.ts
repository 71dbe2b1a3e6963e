import type { ModelResolver } from '../models/types';
import type { ToolRegistry } from '../tools/registry';
import type { CallModelInput } from '../shared/activity-io';
import type { ToolSpec } from '../shared/messages';
import { sandboxStatus } from '../sandbox';
import { workerSettingsPath, type FunctionHooks } from '../hooks';
import { WorkspacePolicy } from '../tools/workspace-roots';
import { createMcpRuntime, McpRuntime, type McpWorkerOptions } from '../mcp';
import { operatorFileOptions } from '../safe-fs/operator-files';
import { debugEnabled, debugModels } from '../telemetry/debug-log';
import { Admission, admitModels, parseAdmissionSwitch, parseRateLimits } from '../admission';
import { ConversationCache } from './conversation-cache';
import { CANCEL_WATCH_MS } from './cancel-watch';
import { createMcpActivities } from './mcp';
import type { WorkerCheckpoints } from '../checkpoints';
import {
  createCheckpointSteps,
  workerCheckpoints,
  type CheckpointSteps,
  type CheckpointsOption,
} from './checkpoint-steps';

export interface ActivityDeps {
  /** Picks the model provider for a model id. */
  models: ModelResolver;
  /** The tools this worker can run; their JSON Schemas are sent to the model. */
  tools: ToolRegistry;
  /** Workspace for runs that name none (the worker's working directory by default). */
  defaultWorkspace?: string;
  /** How often tools heartbeat so cancellation reaches them (ms). */
  toolHeartbeatIntervalMs?: number;
  /** How often a model call asks whether its run cancelled it, ms; 0 turns the watch off (default 1 s). */
  cancelWatchMs?: number;
  /** The worker's conversation cache; one per worker process (a fresh one by default). */
  conversations?: ConversationCache;
  /** This worker's own task queue, which runs route their next calls to (sticky activities). */
  workerQueue?: string;
  /** A warning for runs' details when bash is not sandboxed; default: from `DURABLE_AGENT_SANDBOX` and the machine. */
  sandboxWarning?: () => string | undefined;
  /** Hooks registered as functions (custom workers), `canExecuteTool` included: see docs/hooks.md. */
  hooks?: FunctionHooks;
  /** The worker-wide hooks settings file; default `DURABLE_AGENT_SETTINGS`, else `~/.durable-agent/settings.json`. */
  settingsFile?: string;
  /**
   * Where runs' workspaces may be (docs/file-safety.md): default `DURABLE_AGENT_WORKSPACE_ROOTS`,
   * else the default workspace. A workspace outside them fails its run at start.
   */
  workspaceRoots?: string[];
  /** MCP servers (docs/mcp.md): worker-wide servers and file, pool settings, or a runtime to share. */
  mcp?: McpWorkerOptions | McpRuntime;
  /** The operator's agents folder (docs/subagents.md): default `DURABLE_AGENT_AGENTS_DIR`, else `~/.durable-agent/agents`. */
  agentsDir?: string;
  /**
   * Workspace checkpoints (docs/checkpoints.md): `false` for none, a store, a `DURABLE_AGENT_CHECKPOINTS`
   * value, or options with the worker's `checkpointIgnore`. Default: from `DURABLE_AGENT_CHECKPOINTS` (on).
   */
  checkpoints?: CheckpointsOption | WorkerCheckpoints;
  /**
   * Admission of model calls by their provider key's rate budget (docs/models.md, "Rate limits"): an
   * `Admission` to use, or `false` for none (calls go at once; a 429 retries after `retry-after`).
   * Default: on unless `DURABLE_AGENT_ADMISSION=off`, with `DURABLE_AGENT_RATE_LIMITS`.
   */
  admission?: Admission | false;
}

/** The worker's admission from its deps or environment; `undefined` when turned off. */
export function admissionFrom(deps: Pick<ActivityDeps, 'admission'>, env = process.env): Admission | undefined {
  if (deps.admission === false) return undefined;
  if (deps.admission) return deps.admission;
  if (!parseAdmissionSwitch(env.DURABLE_AGENT_ADMISSION)) return undefined;
  return new Admission({ limits: parseRateLimits(env.DURABLE_AGENT_RATE_LIMITS) });
}

/** What the activity modules share: the deps with their defaults applied, built once per worker. */
export interface ActivityEnv {
  deps: ActivityDeps;
  /** The model resolver, each call admitted by its key's rate budget, wrapped in debug lines when `DURABLE_AGENT_DEBUG=1`. */
  models: ModelResolver;
  debug: boolean;
  conversations: ConversationCache;
  defaultWorkspace: string;
  settingsFile: string;
  workspaces: WorkspacePolicy;
  heartbeatEveryMs: number;
  cancelWatchMs: number;
  sandboxWarning: () => string | undefined;
  mcpRuntime: McpRuntime;
  mcp: ReturnType<typeof createMcpActivities>;
  /** Workspace checkpoints in the tool and run-start activities (src/activities/checkpoint-steps.ts). */
  checkpoints: CheckpointSteps;
  /** The tool definitions a model call sends: the run's named tools this worker has, extra tools, MCP tools. */
  toolSpecs: (
    input: Pick<CallModelInput, 'toolNames' | 'extraToolNames' | 'mcpTools' | 'mcpToolsHash' | 'conversation'>,
  ) => ToolSpec[];
}

/** Applies the deps' defaults once, at worker start. */
export function activityEnv(deps: ActivityDeps): ActivityEnv {
  // DURABLE_AGENT_DEBUG=1: a line per model call and per tool call on stderr (docs/observability.md).
  const debug = debugEnabled();
  const settingsFile = deps.settingsFile ?? workerSettingsPath();
  const defaultWorkspace = deps.defaultWorkspace ?? process.cwd();
  // Built once, at worker start: a root that is `/` or a system directory stops the worker here.
  const workspaces = new WorkspacePolicy({
    ...(deps.workspaceRoots ? { roots: deps.workspaceRoots } : {}),
    defaultRoot: defaultWorkspace,
    settingsFile,
    ...operatorFileOptions(deps),
  });
  const mcpRuntime =
    deps.mcp instanceof McpRuntime
      ? deps.mcp
      : createMcpRuntime({ workspaceRoots: workspaces.roots, ...(deps.mcp ?? {}) });
  const mcp = createMcpActivities(mcpRuntime, () => defaultWorkspace);
  const admission = admissionFrom(deps);
  const models = admission ? admitModels(deps.models, admission) : deps.models;
  return {
    deps,
    models: debug ? debugModels(models) : models,
    debug,
    conversations: deps.conversations ?? new ConversationCache(),
    defaultWorkspace,
    settingsFile,
    workspaces,
    heartbeatEveryMs: deps.toolHeartbeatIntervalMs ?? 1000,
    cancelWatchMs: deps.cancelWatchMs ?? CANCEL_WATCH_MS,
    sandboxWarning:
      deps.sandboxWarning ??
      (() => {
        const status = sandboxStatus();
        return status.mode === 'bwrap' ? undefined : status.detail;
      }),
    mcpRuntime,
    mcp,
    checkpoints: createCheckpointSteps(workerCheckpoints(deps.checkpoints)),
    toolSpecs: (input) => [
      // A run may name tools this worker lacks (its `tools` are checked for shape only): left out here,
      // said at run start (assembleContext's warning), refused by name if the model calls one.
      ...deps.tools.specs(input.toolNames?.filter((name) => deps.tools.has(name))),
      ...deps.tools.specs(input.extraToolNames ?? []),
      ...mcp.toolSpecs(input),
    ],
  };
}
