import { Context } from '@temporalio/activity';
import type { RunToolInput, RunToolOutput } from '../shared/activity-io';
import { cutChars } from '../shared/bounds';
import { INPUT_PREVIEW_CHARS } from '../shared/constants';
import { describeToolCall } from '../shared/summaries';
import { WorkspaceError } from '../safe-fs/workspace';
import { outcomeUnknownMessage } from './outcome-unknown';
import { shutdownFailure, stoppedByShutdown } from './shutdown';
import type { ActivityEnv } from './environment';

/** The tool activities: `runTool` (a built-in, registered or MCP tool) and `listMcpTools` (between turns). */
export function createToolCalls(env: ActivityEnv) {
  const { deps, conversations, workspaces, defaultWorkspace, heartbeatEveryMs, mcp, mcpRuntime, checkpoints } = env;

  async function runTool(input: RunToolInput): Promise<RunToolOutput> {
    const ctx = Context.current();
    let workspace: string;
    try {
      // The path run start recorded, checked again: nothing a run did since may have redirected it.
      workspace = await verifyForCall(input);
    } catch (error) {
      if (!(error instanceof WorkspaceError)) throw error;
      return { content: `Error: ${error.message}`, isError: true };
    }
    // Failover (docs/checkpoints.md): a workspace this worker did not record is compared with the run's last checkpoint.
    const before = await checkpoints.beforeCall(input, workspace);
    const { unrun, ...ran } = await runToolOnce(input, workspace, ctx);
    let result: RunToolOutput = before.note ? { ...ran, content: `${ran.content}\n\n${before.note}` } : ran;
    // The turn's checkpoint, in this activity: after a call that may have changed files.
    const checkpoint = await checkpoints.afterCall(input, workspace, sideEffectOf(input), !unrun);
    result = { ...result, ...before.fields, ...(checkpoint ? { checkpoint } : {}) };
    if (input.conversationId) conversations.putToolResult(input.conversationId, input.toolUseId, result);
    return ctx.info.isLocal && deps.workerQueue ? { ...result, workerQueue: deps.workerQueue } : result;
  }

  /** The call's workspace, verified; one missing on this worker is created first when the run has a checkpoint to restore. */
  async function verifyForCall(input: RunToolInput): Promise<string> {
    const recorded = input.workspace ?? defaultWorkspace;
    try {
      return await workspaces.verify(recorded);
    } catch (error) {
      if (!(error instanceof WorkspaceError) || !checkpoints.enabled || !input.lastCheckpointId) throw error;
      await checkpoints.ensureWorkspace(input, recorded);
      return workspaces.verify(recorded);
    }
  }

  function sideEffectOf(input: RunToolInput): string | undefined {
    return input.mcp ? input.mcp.sideEffect : deps.tools.get(input.name)?.sideEffect;
  }

  async function runToolOnce(
    input: RunToolInput,
    workspace: string,
    ctx: Context,
  ): Promise<RunToolOutput & { unrun?: true }> {
    const tool = input.mcp ? undefined : deps.tools.get(input.name);
    const sideEffect = input.mcp ? input.mcp.sideEffect : tool?.sideEffect;
    // A mutating tool whose earlier attempt may have started (worker lost mid-call, timeout) is not
    // re-run blindly: the model is told the outcome is unknown and can check and decide.
    if (sideEffect === 'mutating' && (ctx.info.attempt > 1 || input.mayHaveStarted)) {
      return {
        content: await outcomeUnknownMessage(input, workspace, Math.max(ctx.info.attempt, 2)),
        isError: true,
        unrun: true,
      };
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
    if (result.isError && stoppedByShutdown(ctx))
      throw shutdownFailure(ctx, `the ${input.name} call`, deps.workerQueue);
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

  // Between turns, with the run's recorded workspace checked again like every tool call's.
  const listMcpTools = async (input: Parameters<typeof mcp.listMcpTools>[0]) =>
    mcp.listMcpTools({ ...input, workspace: await workspaces.verify(input.workspace ?? defaultWorkspace) });

  return { runTool, listMcpTools };
}
