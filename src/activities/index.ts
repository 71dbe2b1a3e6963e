import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { ModelResolver } from '../models/types';
import type { ToolRegistry } from '../tools/registry';
import type {
  CallModelInput,
  CallModelOutput,
  PrepareRunInput,
  PrepareRunOutput,
  RunToolInput,
  RunToolOutput,
  SummarizeRunInput,
  SummarizeRunOutput,
} from '../shared/activity-io';
import type { ContentBlock, Message } from '../shared/messages';
import { cutChars } from '../shared/bounds';
import { ErrorTypes, INPUT_PREVIEW_CHARS } from '../shared/constants';
import { describeToolCall } from '../shared/summaries';
import { sandboxStatus } from '../sandbox';
import { checkModelResponse } from './response-check';
import { ConversationCache } from './conversation-cache';
import { outcomeUnknownMessage } from './outcome-unknown';
import { modelRequest } from './model-request';
import { modelProgress } from './model-progress';
import { CANCEL_WATCH_MS, withCancelWatch } from './cancel-watch';
import { proseProgress } from './prose-progress';
import { createHookActivities } from './hooks';
import { createContextActivities } from './context';
import { createAgentActivities } from './agents';
import { workerSettingsPath, type FunctionHooks } from '../hooks';
import { WorkspaceError } from '../tools/workspace';
import { WorkspacePolicy } from '../tools/workspace-roots';
import { createMcpRuntime, McpRuntime, type McpWorkerOptions } from '../mcp';
import { createMcpActivities } from './mcp';
import { operatorFileOptions } from '../safe-fs/operator-files';
import { checkOutput } from './output';
import { keepFinalMessages } from './final-messages';
import { createFirstModelCall } from './first-call';
import { debugEnabled, debugModels, debugRunTool } from '../telemetry/debug-log';

export { ConversationCache } from './conversation-cache';

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
}

/**
 * Activities are built by a factory so the worker passes real providers and tests pass scripted ones.
 * Each activity receives and returns plain JSON only.
 */
export function createActivities(deps: ActivityDeps) {
  const heartbeatEveryMs = deps.toolHeartbeatIntervalMs ?? 1000;
  const cancelWatchMs = deps.cancelWatchMs ?? CANCEL_WATCH_MS;
  const conversations = deps.conversations ?? new ConversationCache();
  // DURABLE_AGENT_DEBUG=1: a line per model call and per tool call on stderr (docs/observability.md).
  const debug = debugEnabled();
  const models = debug ? debugModels(deps.models) : deps.models;
  const settingsFile = deps.settingsFile ?? workerSettingsPath();
  const defaultWorkspace = deps.defaultWorkspace ?? process.cwd();
  // Built once, at worker start: a root that is `/` or a system directory stops the worker here.
  const workspaces = new WorkspacePolicy({
    ...(deps.workspaceRoots ? { roots: deps.workspaceRoots } : {}),
    defaultRoot: defaultWorkspace,
    settingsFile,
    ...operatorFileOptions(deps),
  });

  const sandboxWarning =
    deps.sandboxWarning ??
    (() => {
      const status = sandboxStatus();
      return status.mode === 'bwrap' ? undefined : status.detail;
    });
  const offersBash = (input: Pick<CallModelInput, 'toolNames'>) =>
    deps.tools.get('bash') !== undefined && (input.toolNames === undefined || input.toolNames.includes('bash'));

  const mcpRuntime =
    deps.mcp instanceof McpRuntime
      ? deps.mcp
      : createMcpRuntime({ workspaceRoots: workspaces.roots, ...(deps.mcp ?? {}) });
  const mcp = createMcpActivities(mcpRuntime, () => defaultWorkspace);
  const toolSpecs = (
    input: Pick<CallModelInput, 'toolNames' | 'extraToolNames' | 'mcpTools' | 'mcpToolsHash' | 'conversation'>,
  ) => [
    // A run may name tools this worker lacks (its `tools` are checked for shape only): left out here,
    // said at run start (assembleContext's warning), refused by name if the model calls one.
    ...deps.tools.specs(input.toolNames?.filter((name) => deps.tools.has(name))),
    ...deps.tools.specs(input.extraToolNames ?? []),
    ...mcp.toolSpecs(input),
  ];

  async function callModel(input: CallModelInput): Promise<CallModelOutput> {
    const ctx = Context.current();
    const messages = conversations.materialize(input.conversation);
    const { request, system } = modelRequest(input, messages, conversations, toolSpecs(input), input.toolChoice);
    const { beatNow, ...progress } = modelProgress(ctx, input.model, { label: 'model call' });
    const response = checkModelResponse(
      await onShutdown(ctx, 'model call', () =>
        withCancelWatch(
          ctx,
          beatNow,
          () =>
            models(input.model).call(request, {
              signal: ctx.cancellationSignal,
              ...proseProgress(input.toolProtocol, progress),
            }),
          cancelWatchMs,
        ),
      ),
    );
    // The workflow appends exactly this assistant turn; the cache does the same so the next delta fits.
    conversations.commit(
      input.conversation.id,
      messages,
      input.conversation.headHash,
      { role: 'assistant', content: response.content },
      system,
    );
    const localTools = [
      ...deps.tools.localNames(input.toolNames),
      ...deps.tools.localNames(input.extraToolNames ?? []),
    ];
    return {
      ...response,
      ...(deps.workerQueue ? { workerQueue: deps.workerQueue } : {}),
      ...(localTools.length ? { localTools } : {}),
      ...(offersBash(input) && sandboxWarning() ? { sandboxWarning: sandboxWarning() } : {}),
    };
  }

  /**
   * A closing call: the summary at the iteration limit, or the summary that compacts a long
   * conversation. Tools stay defined (the history holds tool_use and tool_result blocks, which the
   * API rejects without definitions) but `tool_choice: none` forbids new calls. The instruction is
   * added to this request only; neither the run's history nor the cache changes.
   */
  async function summarizeRun(input: SummarizeRunInput): Promise<SummarizeRunOutput> {
    const ctx = Context.current();
    const messages = conversations.materialize(input.conversation);
    const { request } = modelRequest(
      input,
      withClosingInstruction(messages, input.instruction),
      conversations,
      toolSpecs(input),
      { type: 'none' },
    );
    const { beatNow, ...progress } = modelProgress(ctx, input.model, { label: 'closing summary' });
    const response = checkModelResponse(
      await onShutdown(ctx, 'closing summary', () =>
        withCancelWatch(
          ctx,
          beatNow,
          () => models(input.model).call(request, { signal: ctx.cancellationSignal, ...progress }),
          cancelWatchMs,
        ),
      ),
    );
    // The text is in the response: returning it twice would double the result's size.
    return { response };
  }

  async function runTool(input: RunToolInput): Promise<RunToolOutput> {
    const ctx = Context.current();
    let workspace: string;
    try {
      // The path run start recorded, checked again: nothing a run did since may have redirected it.
      workspace = await workspaces.verify(input.workspace ?? defaultWorkspace);
    } catch (error) {
      if (!(error instanceof WorkspaceError)) throw error;
      return { content: `Error: ${error.message}`, isError: true };
    }
    const result = await runToolOnce(input, workspace, ctx);
    if (input.conversationId) conversations.putToolResult(input.conversationId, input.toolUseId, result);
    return ctx.info.isLocal && deps.workerQueue ? { ...result, workerQueue: deps.workerQueue } : result;
  }

  /**
   * Stopped because this worker is shutting down, not because the run asked: the call is not the
   * model's to judge. On the shared queue the attempt fails retryably and Temporal retries it on
   * another worker. On this worker's own queue a retry would wait for a worker that is gone, so it
   * fails for good and the workflow goes on at once on the shared queue (telling a mutating tool
   * that it may have started).
   */
  function shutdownFailure(ctx: Context, what: string): ApplicationFailure {
    const own = deps.workerQueue !== undefined && ctx.info.taskQueue === deps.workerQueue;
    const message = `the worker shut down during ${what}; ${own ? 'the run goes on on another worker' : 'retrying on another worker'}`;
    return own
      ? ApplicationFailure.nonRetryable(message, ErrorTypes.WorkerShutdown)
      : ApplicationFailure.retryable(message, ErrorTypes.WorkerShutdown);
  }

  async function onShutdown<T>(ctx: Context, what: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (stoppedByShutdown(ctx)) throw shutdownFailure(ctx, `the ${what}`);
      throw err;
    }
  }

  async function runToolOnce(input: RunToolInput, workspace: string, ctx: Context): Promise<RunToolOutput> {
    const tool = input.mcp ? undefined : deps.tools.get(input.name);
    const sideEffect = input.mcp ? input.mcp.sideEffect : tool?.sideEffect;
    // A mutating tool whose earlier attempt may have started (worker lost mid-call, timeout) is not
    // re-run blindly: the model is told the outcome is unknown and can check and decide.
    if (sideEffect === 'mutating' && (ctx.info.attempt > 1 || input.mayHaveStarted)) {
      return { content: await outcomeUnknownMessage(input, workspace, Math.max(ctx.info.attempt, 2)), isError: true };
    }
    // Local activities (cheap read-only tools) cannot heartbeat; the worker cancels them directly.
    // Heartbeat details say what runs, so the Web UI's Pending Activities is readable.
    const started = Date.now();
    // Described when the first heartbeat goes out: most calls end before it.
    let call: string | undefined;
    const heartbeat = ctx.info.isLocal
      ? () => {}
      : (d?: unknown) =>
          ctx.heartbeat({
            tool: cutChars(input.name, 64),
            call: (call ??= cutChars(describeToolCall(input.name, input.input), INPUT_PREVIEW_CHARS)),
            elapsedSeconds: Math.round((Date.now() - started) / 1000),
            ...(d !== undefined ? { progress: typeof d === 'string' ? cutChars(d, INPUT_PREVIEW_CHARS) : d } : {}),
          });
    const timer = ctx.info.isLocal ? undefined : setInterval(heartbeat, heartbeatEveryMs);
    let result: RunToolOutput;
    try {
      result = input.mcp
        ? await runMcpTool(input.mcp, input, workspace, ctx, heartbeat)
        : await deps.tools.run(input.name, input.input, {
            workspace,
            signal: ctx.cancellationSignal,
            heartbeat,
            toolUseId: input.toolUseId,
            ...(input.network ? { network: true } : {}),
            ...(input.commandPolicy ? { commandPolicy: input.commandPolicy } : {}),
          });
    } finally {
      clearInterval(timer);
    }
    // Stopped because this worker is shutting down, not because the run asked: the call is not the
    // model's to judge. Failing the attempt retries it on another worker, where a read-only tool
    // simply runs again and a mutating one reports that its outcome is unknown.
    if (result.isError && stoppedByShutdown(ctx)) throw shutdownFailure(ctx, `the ${input.name} call`);
    return result;
  }

  /** An MCP server's tool (docs/mcp.md): over the worker's pooled connection; progress goes into heartbeats. */
  async function runMcpTool(
    ref: NonNullable<RunToolInput['mcp']>,
    input: RunToolInput,
    workspace: string,
    ctx: Context,
    heartbeat: (d?: unknown) => void,
  ): Promise<RunToolOutput> {
    const { toolsChanged, ...result } = await mcpRuntime.call(ref, input.input, {
      workspace,
      network: input.network === true,
      toolUseId: input.toolUseId,
      signal: ctx.cancellationSignal,
      heartbeat,
      timeoutMs: ctx.info.startToCloseTimeoutMs,
    });
    return { ...result, ...(toolsChanged ? { mcpToolsChanged: true } : {}) };
  }

  const hookActivities = createHookActivities({
    ...(deps.hooks ? { hooks: deps.hooks } : {}),
    settingsFile,
    defaultWorkspace,
    verifyWorkspace: (workspace) => workspaces.verify(workspace),
    toolNames: deps.tools.names(),
  });
  const contextActivities = createContextActivities({ tools: deps.tools, defaultWorkspace, workspaces });
  const agentActivities = createAgentActivities({
    ...(deps.agentsDir !== undefined ? { agentsDir: deps.agentsDir } : {}),
    defaultWorkspace,
    verifyWorkspace: (workspace) => workspaces.verify(workspace),
    toolNames: deps.tools.names(),
  });

  /**
   * Run start: the workspace, admitted by the worker's rules and resolved to the real path every
   * later call uses (docs/file-safety.md); the system prompt (docs/context.md); and which hook events
   * have hooks (docs/hooks.md).
   */
  async function prepareRun(input: PrepareRunInput): Promise<PrepareRunOutput> {
    const workspace = await contextActivities.admitWorkspace(input.context.workspace);
    const context = await contextActivities.assembleContext({ ...input.context, workspace });
    const hooks = await hookActivities.hookEvents({ workspace });
    const servers = input.mcp
      ? await mcp.listForRun({ ...input, context: { ...input.context, workspace } })
      : undefined;
    const local = Context.current().info.isLocal && deps.workerQueue;
    return {
      context,
      hooks,
      workspace,
      ...(local ? { workerQueue: deps.workerQueue } : {}),
      ...(servers ? { mcp: servers } : {}),
    };
  }

  return {
    callModel,
    firstModelCall: createFirstModelCall({ prepareRun, callModel, cancelWatchMs }),
    summarizeRun,
    runTool: debug ? debugRunTool(runTool) : runTool,
    prepareRun,
    runHook: hookActivities.runHook,
    // Between turns, with the run's recorded workspace checked again like every tool call's.
    listMcpTools: async (input: Parameters<typeof mcp.listMcpTools>[0]) =>
      mcp.listMcpTools({ ...input, workspace: await workspaces.verify(input.workspace ?? defaultWorkspace) }),
    checkOutput,
    keepFinalMessages,
    loadAgentDefinitions: agentActivities.loadAgentDefinitions,
  };
}

export type Activities = ReturnType<typeof createActivities>;

/** True when the activity was cancelled by its own worker's shutdown (after the grace period). */
function stoppedByShutdown(ctx: Context): boolean {
  const signal = ctx.cancellationSignal;
  if (!signal.aborted) return false;
  if (ctx.cancellationDetails?.workerShutdown) return true;
  const reason: unknown = signal.reason;
  return reason instanceof CancelledFailure && reason.message === 'WORKER_SHUTDOWN';
}

/** Appends the instruction to a copy of the conversation, merging into a trailing user turn. */
function withClosingInstruction(messages: Message[], instruction: string): Message[] {
  const copy = messages.slice();
  const last = copy[copy.length - 1];
  if (last?.role === 'user') {
    const blocks: ContentBlock[] =
      typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : [...last.content];
    blocks.push({ type: 'text', text: instruction });
    copy[copy.length - 1] = { role: 'user', content: blocks };
  } else {
    copy.push({ role: 'user', content: instruction });
  }
  return copy;
}
