import type { PayloadCodec } from '@temporalio/common';
import type { ActivityDeps } from '../activities';
import type { FunctionHooks } from '../hooks';
import type { McpServerConfig } from '../shared/mcp';
import type { McpWorkerOptions } from '../mcp';
import { createModelResolver, type ModelResolver, type ModelResolverOptions } from '../models';
import { createBuiltinTools, ToolRegistry, type BuiltinToolOptions } from '../tools';
import type { SandboxSetting } from '../sandbox';
import type { Tool } from '../tools/types';
import { workerSettings } from '../worker';
import type { AgentDeployment } from '../worker/deployment';
import type { CheckpointsOption } from '../activities/checkpoint-steps';

/**
 * What `new AgentPlugin(options)` takes. Every setting left out is read from the environment the
 * way the `durable-agent` CLI reads it (docs/configuration.md), so a worker of the user's own and
 * `durable-agent worker` behave alike with the same environment.
 */
export interface AgentPluginOptions {
  /** Extra tools made with `defineTool`, offered next to the built-in ones. A name may not repeat a built-in's. */
  tools?: Tool[];
  /** Options of the built-in tools (bash's sandbox and limits, glob and grep limits). */
  builtinTools?: BuiltinToolOptions;
  /**
   * Which sandbox bash uses: `bwrap` (the default) or `off`. Default: `DURABLE_AGENT_SANDBOX`.
   * Shorthand for `builtinTools.bash.sandbox`.
   */
  sandbox?: SandboxSetting;
  /**
   * Model providers. Default: Anthropic (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`), `openai:<model>`
   * ids on an OpenAI-compatible endpoint (`OPENAI_API_KEY`, `OPENAI_BASE_URL`), `offline-*` ids on
   * the built-in offline model. Either provider settings, or a resolver of your own (model id → provider).
   */
  models?: ModelResolverOptions | ModelResolver;
  /** Hooks as functions (`canExecuteTool` included), next to the settings files' command hooks: docs/hooks.md. */
  hooks?: FunctionHooks;
  /** The worker-wide hooks settings file. Default: `DURABLE_AGENT_SETTINGS`, else `~/.durable-agent/settings.json`. */
  settingsFile?: string;
  /**
   * The operator's folder of agent definitions (docs/subagents.md#defining-agents), which win over a
   * workspace's. Default: `DURABLE_AGENT_AGENTS_DIR`, else `~/.durable-agent/agents` when it exists.
   */
  agentsDir?: string;
  /** The workspace of runs that name none. Default: the worker's working directory. */
  workspace?: string;
  /**
   * Where runs' workspaces may be (docs/file-safety.md#workspace-roots-who-chooses-a-workspace).
   * Default: `DURABLE_AGENT_WORKSPACE_ROOTS`, else the default workspace. A run naming a workspace
   * outside them fails at start.
   */
  workspaceRoots?: string[];
  /**
   * MCP servers every run on this worker gets, in Claude Code's `mcpServers` shape (docs/mcp.md):
   * `{ github: { type: 'http', url, headers } }` or `{ fs: { command, args, env } }`.
   */
  mcpServers?: Record<string, McpServerConfig>;
  /** More MCP settings: the worker-wide file, whether runs may name servers of their own, pooling. */
  mcp?: Omit<McpWorkerOptions, 'servers'>;
  /**
   * Payload codec for workers and clients: `false` for none. Default: AES-256-GCM encryption when
   * `DURABLE_AGENT_CODEC_KEYS` is set (payloads, failure messages and stack traces), else none.
   */
  codec?: PayloadCodec | false;
  /**
   * Route each run's model and tool calls to the worker that holds its conversation (each worker
   * also polls a queue of its own). Default: `DURABLE_AGENT_STICKY_ACTIVITIES` (on unless `0`/`false`).
   */
  stickyActivities?: boolean;
  /**
   * The Worker Deployment Version of the worker (docs/upgrading.md): its runs are pinned to it.
   * Default: `DURABLE_AGENT_DEPLOYMENT_NAME` + `DURABLE_AGENT_BUILD_ID`; `false` or neither set: unversioned.
   * A worker whose own options set `workerDeploymentOptions` keeps them.
   */
  deployment?: AgentDeployment | false;
  /**
   * At worker start, create the agent's search attributes in the namespace when they are missing
   * (runs need them). Default `true`; `false` when they are created by other means (Temporal Cloud:
   * `tcld`), in which case the worker does not check.
   */
  registerSearchAttributes?: boolean;
  /**
   * Connection defaults from the CLI's environment (`TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`,
   * `TEMPORAL_API_KEY`, `TEMPORAL_TLS*`, profiles): applied to a connection or client made with this
   * plugin, for each setting its own options leave out. Default `true`; `false` leaves them alone.
   */
  connectionFromEnv?: boolean;
  /**
   * Workspace checkpoints (docs/checkpoints.md): `false` for none, a `DURABLE_AGENT_CHECKPOINTS` value
   * (`off`, a directory, `s3://bucket/prefix`), a store, or `{ store, ignore, limits }` (`ignore`: the
   * worker's `checkpointIgnore` patterns). Default: `DURABLE_AGENT_CHECKPOINTS`, on (a directory under
   * `~/.local/share/durable-agent/`).
   */
  checkpoints?: CheckpointsOption;
}

/** The activities' dependencies for `options`, with the environment's defaults. */
export function activityDeps(options: AgentPluginOptions): ActivityDeps {
  const settings = workerSettings();
  const bash = {
    ...options.builtinTools?.bash,
    ...(options.sandbox !== undefined ? { sandbox: options.sandbox } : {}),
  };
  const tools = new ToolRegistry([...createBuiltinTools({ ...options.builtinTools, bash }), ...(options.tools ?? [])]);
  const idle = settings.modelIdleTimeoutMs !== undefined ? { idleTimeoutMs: settings.modelIdleTimeoutMs } : {};
  const models =
    typeof options.models === 'function' ? options.models : createModelResolver({ anthropic: idle, ...options.models });
  return {
    models,
    tools,
    defaultWorkspace: options.workspace ?? process.cwd(),
    cancelWatchMs: settings.cancelWatchMs,
    ...(options.hooks ? { hooks: options.hooks } : {}),
    ...(options.settingsFile ? { settingsFile: options.settingsFile } : {}),
    ...(options.agentsDir ? { agentsDir: options.agentsDir } : {}),
    ...(options.workspaceRoots ? { workspaceRoots: options.workspaceRoots } : {}),
    ...(options.checkpoints !== undefined ? { checkpoints: options.checkpoints } : {}),
    ...(options.mcpServers || options.mcp
      ? { mcp: { ...options.mcp, ...(options.mcpServers ? { servers: options.mcpServers } : {}) } }
      : {}),
  };
}

/** Throws a readable error for options a plugin cannot work with (checked once, at construction). */
export function checkOptions(options: AgentPluginOptions): void {
  if (typeof options !== 'object' || options === null) throw new TypeError('AgentPlugin options must be an object');
  if (options.tools !== undefined && !Array.isArray(options.tools)) {
    throw new TypeError('AgentPlugin option tools must be an array of tools made with defineTool');
  }
  if (
    options.workspaceRoots !== undefined &&
    (!Array.isArray(options.workspaceRoots) || options.workspaceRoots.some((r) => typeof r !== 'string'))
  ) {
    throw new TypeError('AgentPlugin option workspaceRoots must be an array of directory paths');
  }
  if (options.mcpServers !== undefined && (typeof options.mcpServers !== 'object' || options.mcpServers === null)) {
    throw new TypeError("AgentPlugin option mcpServers must be an object in Claude Code's mcpServers shape");
  }
  if (options.agentsDir !== undefined && typeof options.agentsDir !== 'string') {
    throw new TypeError('AgentPlugin option agentsDir must be a directory path');
  }
  if (options.sandbox !== undefined && options.sandbox !== 'bwrap' && options.sandbox !== 'off') {
    throw new TypeError(`AgentPlugin option sandbox must be 'bwrap' or 'off', got '${String(options.sandbox)}'`);
  }
}
