import {
  type ActivityInterfaceFor,
  type ActivityOptions,
  ActivityCancellationType,
  proxyActivities,
  proxyLocalActivities,
} from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { LOCAL_TOOL_START_TO_CLOSE_TIMEOUT, TOOL_RETRY } from '../../shared/constants';
import type { ToolUseBlock } from '../../shared/messages';
import { describeToolCall } from '../../shared/summaries';
import { toolActivityOptions, type RunTimeouts } from '../../shared/run-timeouts';
import type { McpCallRef } from '../../shared/mcp';
import { agentActivities } from './activity-proxy';
import type { ModelCalls } from './model-calls';

/** What every tool call of the run carries besides the call itself. */
export interface ToolCallSettings {
  /** From run start on, the workspace's recorded real path. */
  workspace?: string;
  network: boolean;
  commandPolicy?: { deny?: string[] };
  timeouts?: RunTimeouts;
  checkpointIgnore?: string[];
  /** The call's turn and the run's last checkpoint (docs/checkpoints.md). */
  checkpointOf?: () => { turn: number; lastCheckpointId: string | undefined };
}

/**
 * The `runTool` activity: a local one for tools the worker says run locally (`runsLocally`, learnt
 * from each model call), otherwise a regular one routed to the worker that holds the conversation
 * when there is one (a single attempt there, then the shared queue; see `ModelCalls.onWorker`).
 */
export class ToolCalls {
  /** Tools the worker says run locally, learnt from each model call. */
  reportedLocalTools: ReadonlySet<string> = new Set();
  private readonly remote: ActivityInterfaceFor<Pick<Activities, 'runTool'>>;
  private readonly local: ActivityInterfaceFor<Pick<Activities, 'runTool'>>;

  constructor(
    private readonly s: ToolCallSettings,
    private readonly conversationId: string,
    private readonly modelCalls: ModelCalls,
  ) {
    // A cancelled call's end is recorded before the run goes on, so no call is left drawn as pending.
    this.remote = agentActivities(
      proxyActivities<Activities>({
        ...toolActivityOptions(s.timeouts),
        cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      }),
    );
    this.local = agentActivities(
      proxyLocalActivities<Activities>({
        startToCloseTimeout: LOCAL_TOOL_START_TO_CLOSE_TIMEOUT,
        retry: { ...TOOL_RETRY, maximumAttempts: s.timeouts?.toolMaxAttempts ?? TOOL_RETRY.maximumAttempts },
      }),
    );
  }

  /** The workspace's real path recorded at run start: every later tool call runs there. */
  useWorkspace(workspace: string): void {
    this.s.workspace = workspace;
  }

  /** Runs one call; `mcp` when it is an MCP tool's. */
  execute(toolUse: ToolUseBlock, mcp: McpCallRef | undefined) {
    const { s } = this;
    const checkpoint = s.checkpointOf?.();
    const args = {
      toolUseId: toolUse.id,
      name: toolUse.name,
      input: toolUse.input,
      workspace: s.workspace,
      conversationId: this.conversationId,
      ...(s.network ? { network: true } : {}),
      ...(s.commandPolicy ? { commandPolicy: s.commandPolicy } : {}),
      ...(mcp ? { mcp } : {}),
      ...(checkpoint ? { turn: checkpoint.turn } : {}),
      ...(checkpoint?.lastCheckpointId ? { lastCheckpointId: checkpoint.lastCheckpointId } : {}),
      ...(s.checkpointIgnore ? { checkpointIgnore: s.checkpointIgnore } : {}),
    };
    const summary = describeToolCall(toolUse.name, toolUse.input);
    // The worker's registry decides (each model call reports it).
    if (this.reportedLocalTools.has(toolUse.name)) {
      return this.local.runTool.executeWithOptions({ summary }, [args]).then((result) => {
        this.modelCalls.followWorkflow(result.workerQueue);
        return result;
      });
    }
    // Workflow time: the same on replay. An attempt on a lost worker started no earlier than this.
    const scheduledAt = Date.now();
    return this.modelCalls.onWorker(
      (options: ActivityOptions | Record<string, never>) =>
        this.remote.runTool.executeWithOptions({ summary, ...options }, [args]),
      (started) =>
        this.remote.runTool.executeWithOptions({ summary }, [
          started ? { ...args, mayHaveStarted: true, firstScheduledAt: scheduledAt } : args,
        ]),
      true,
    );
  }
}
