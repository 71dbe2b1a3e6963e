import {
  type ActivityInterfaceFor,
  type ActivityOptions,
  ActivityCancellationType,
  proxyActivities,
  proxyLocalActivities,
} from '@temporalio/workflow';
import type { Activities } from '../../activities';
import {
  DONE_TOOL_NAME,
  LOCAL_TOOL_START_TO_CLOSE_TIMEOUT,
  MAX_TOOL_CALLS_PER_TURN,
  MAX_TURN_TOOL_RESULT_BYTES,
  TOOL_RETRY,
  cutBytes,
  cutChars,
  describeToolCall,
  toolResultBlock,
  utf8Length,
  type Permission,
  type RunEventInput,
  type ToolResultBlock,
  type ToolUseBlock,
} from '../../shared';
import { toolActivityOptions, type RunTimeouts } from '../../shared/run-timeouts';
import type { Approvals } from '../run/approvals';
import { agentActivities } from '../calls/activity-proxy';
import type { Conversation } from '../run/conversation';
import { failureMessage, stopping, type ModelCalls } from '../calls/model-calls';
import type { Hooks } from '../calls/hooks';
import type { RunState } from '../run/run-state';
import type { McpTools } from '../calls/mcp-tools';
import { TASK_TOOL_NAME } from '../../shared/subagents';

export interface DispatchSettings {
  workspace?: string;
  network: boolean;
  commandPolicy?: { deny?: string[] };
  toolNames?: string[];
  requireDone: boolean;
  permissionFor(name: string, sideEffect?: string): Permission;
  approvalTimeoutMs: number;
  timeouts?: RunTimeouts;
  /** PreToolUse / PostToolUse(Failure) hooks. */
  hooks?: Hooks;
  /** The run's MCP tools (native tool calls; docs/mcp.md). */
  mcp?: McpTools;
  /** The `task` tool, when the run offers it: runs a subagent (docs/subagents.md). */
  task?: { run(toolUse: ToolUseBlock): Promise<ToolResultBlock> };
}

/** Longer tool names are refused as unknown (the API allows 64 characters; custom tools get some room). */
const MAX_TOOL_NAME_CHARS = 128;

/** One turn's tool results, and the `done` summary when the turn finished the run. */
export interface TurnResults {
  results: ToolResultBlock[];
  doneSummary?: string;
}

/**
 * Runs the tool calls of one turn: policy (enabled tools, permissions, approvals, the done tool),
 * then each call as an activity — a local one for tools the worker runs locally. Every outcome is
 * a tool_result; nothing the model asks for fails the run.
 */
export class ToolDispatch {
  /** Tools the worker says run locally (`runsLocally`), learnt from each model call. */
  reportedLocalTools: ReadonlySet<string> = new Set();
  private readonly remote: ActivityInterfaceFor<Pick<Activities, 'runTool'>>;
  private readonly local: ActivityInterfaceFor<Pick<Activities, 'runTool'>>;

  constructor(
    private readonly s: DispatchSettings,
    private readonly state: RunState,
    private readonly approvals: Approvals,
    private readonly conversation: Conversation,
    private readonly modelCalls: ModelCalls,
    private readonly emit: (event: RunEventInput) => void,
    private readonly statusChanged: () => void,
  ) {
    const options = toolActivityOptions(s.timeouts);
    // A cancelled call's end is recorded before the run goes on, so no call is left drawn as pending.
    this.remote = agentActivities(
      proxyActivities<Activities>({
        ...options,
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

  async runTurn(toolUses: ToolUseBlock[]): Promise<TurnResults> {
    const doneCall = this.s.requireDone ? toolUses.find((t) => t.name === DONE_TOOL_NAME) : undefined;
    const doneSummary = summaryOf(doneCall);
    const seen = new Set<string>();
    let running = 0;
    let finished = false;
    const calls = toolUses.map((t): Promise<ToolResultBlock> => {
      if (finished) {
        return Promise.resolve(
          this.refuse(t, `Error: not run: the run finished with your '${DONE_TOOL_NAME}' call before this one.`),
        );
      }
      if (t === doneCall) {
        finished = doneSummary !== undefined;
        return Promise.resolve(this.done(t, doneSummary));
      }
      if (seen.has(t.id)) {
        return Promise.resolve(
          this.refuse(
            t,
            `Error: not run: another call in this turn has the same tool_use id '${t.id}'; ids must be unique.`,
          ),
        );
      }
      seen.add(t.id);
      if (++running > MAX_TOOL_CALLS_PER_TURN) {
        return Promise.resolve(
          this.refuse(
            t,
            `Error: not run: at most ${MAX_TOOL_CALLS_PER_TURN} tool calls run per turn; make this call in your next turn.`,
          ),
        );
      }
      return this.runOne(t);
    });
    // Wait for every call to settle (a cancelled one included) before the run goes on.
    const settled = await Promise.allSettled(calls);
    const rejected = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (rejected) throw rejected.reason;
    const results = fitToBudget(settled.map((r) => (r as PromiseFulfilledResult<ToolResultBlock>).value));
    // The one point where a run's MCP tools change: after the turn's calls, before the next model call.
    if (this.s.mcp) await this.s.mcp.refreshIfChanged();
    return { results, ...(finished ? { doneSummary } : {}) };
  }

  /** The `done` call: narrated like any tool call (its summary is the answer), never run as an activity. */
  private done(toolUse: ToolUseBlock, summary: string | undefined): ToolResultBlock {
    const result = doneResult(toolUse, summary);
    this.emit({ kind: 'tool_call_started', toolUseId: toolUse.id, name: toolUse.name, input: toolUse.input });
    this.emit({
      kind: 'tool_call_finished',
      toolUseId: toolUse.id,
      name: toolUse.name,
      isError: result.is_error === true,
      preview: result.content,
    });
    return result;
  }

  private refuse(toolUse: ToolUseBlock, content: string): ToolResultBlock {
    this.emit({
      kind: 'tool_call_finished',
      toolUseId: toolUse.id,
      name: toolUse.name,
      isError: true,
      preview: content,
    });
    return toolResultBlock(toolUse.id, content, true);
  }

  private async runOne(toolUse: ToolUseBlock): Promise<ToolResultBlock> {
    const { s } = this;
    // No tool has a name this long: refuse before it reaches state, queries or activity inputs.
    if (typeof toolUse.name !== 'string' || toolUse.name.length > MAX_TOOL_NAME_CHARS) {
      return this.refuse(toolUse, `Error: Tool '${cutChars(String(toolUse.name), 60)}' not found.`);
    }
    if (toolUse.name === TASK_TOOL_NAME && s.task) return s.task.run(toolUse);
    if (toolUse.name === DONE_TOOL_NAME && !s.requireDone) {
      return this.refuse(
        toolUse,
        `Error: Tool '${DONE_TOOL_NAME}' not found. This run ends when you answer without tools.`,
      );
    }
    // An MCP tool the run does not offer (never listed, or gone since): refused, never sent to a server.
    const mcpUnknown = s.mcp?.unknownMessage(toolUse.name);
    if (mcpUnknown !== undefined) return this.refuse(toolUse, mcpUnknown);
    // Only tools enabled for this run may run, whatever the model asks for.
    if (s.toolNames && !s.toolNames.includes(toolUse.name) && !s.mcp?.has(toolUse.name)) {
      return this.refuse(
        toolUse,
        `Error: Tool '${toolUse.name}' not found. Available tools: ${s.toolNames.join(', ')}.`,
      );
    }
    const permission = s.permissionFor(toolUse.name, s.mcp?.sideEffect(toolUse.name));
    if (permission === 'deny') {
      return this.refuse(toolUse, `Error: the operator's policy does not allow tool '${toolUse.name}' in this run.`);
    }
    // PreToolUse hooks may deny the call, rewrite its input, ask for approval, or (trusted hooks) allow it.
    const pre = s.hooks ? await s.hooks.beforeTool(toolUse) : undefined;
    if (pre?.kind === 'deny') return this.refuse(toolUse, `Error: not run: ${pre.reason}`);
    const call: ToolUseBlock = pre ? { ...toolUse, input: pre.input } : toolUse;
    if ((permission === 'ask' && !pre?.allowed) || pre?.ask) {
      const decision = await this.askApproval(call);
      if (!decision.approved) {
        return this.refuse(
          toolUse,
          `Error: the operator denied this ${toolUse.name} call${decision.reason ? `: ${decision.reason}` : ''}. ` +
            'It was not run. Do not repeat it unchanged; adjust your approach or ask the user.',
        );
      }
    }
    this.state.activeTools.set(toolUse.id, toolUse.name);
    this.emit({ kind: 'tool_call_started', toolUseId: toolUse.id, name: toolUse.name, input: call.input });
    let content: string;
    let isError: boolean;
    try {
      const result = await this.execute(call);
      ({ content, isError } = result);
      if (result.mcpToolsChanged) s.mcp?.markChanged(toolUse.name);
      this.conversation.markToolResultCached(toolUse.id);
    } catch (err) {
      if (stopping(err)) throw err;
      // Retries exhausted (timeouts, lost workers): the model learns the call failed and decides.
      content = `Error: tool '${toolUse.name}' failed: ${failureMessage(err)}`;
      isError = true;
    } finally {
      this.state.activeTools.delete(toolUse.id);
    }
    const notes = [...(pre?.kind === 'run' && pre.context ? [`[hook context] ${pre.context}`] : [])];
    if (s.hooks) notes.push(...(await s.hooks.afterTool(toolUse, call.input, content, isError)));
    if (notes.length > 0) {
      // The result no longer matches what the worker cached: it travels inline.
      this.conversation.forgetToolResult(toolUse.id);
      content = `${content}\n\n${notes.join('\n')}`;
    }
    this.emit({
      kind: 'tool_call_finished',
      toolUseId: toolUse.id,
      name: toolUse.name,
      isError,
      preview: content,
    });
    return toolResultBlock(toolUse.id, content, isError);
  }

  private execute(toolUse: ToolUseBlock) {
    const { s } = this;
    const mcp = s.mcp?.callRef(toolUse.name);
    const args = {
      toolUseId: toolUse.id,
      name: toolUse.name,
      input: toolUse.input,
      workspace: s.workspace,
      conversationId: this.conversation.id,
      ...(s.network ? { network: true } : {}),
      ...(s.commandPolicy ? { commandPolicy: s.commandPolicy } : {}),
      ...(mcp ? { mcp } : {}),
    };
    const summary = describeToolCall(toolUse.name, toolUse.input);
    // The worker's registry decides (each model call reports it).
    if (this.reportedLocalTools.has(toolUse.name)) {
      return this.local.runTool.executeWithOptions({ summary }, [args]).then((result) => {
        this.modelCalls.followWorkflow(result.workerQueue);
        return result;
      });
    }
    return this.modelCalls.onWorker(
      (options: ActivityOptions | Record<string, never>) =>
        this.remote.runTool.executeWithOptions({ summary, ...options }, [args]),
      (started) =>
        this.remote.runTool.executeWithOptions({ summary }, [started ? { ...args, mayHaveStarted: true } : args]),
      true,
    );
  }

  /** Pauses the tool call until an operator approves or denies it, or the timeout denies it. */
  private async askApproval(toolUse: ToolUseBlock) {
    const decision = await this.approvals.ask(toolUse, this.s.approvalTimeoutMs, (a) => {
      this.emit({
        kind: 'approval_requested',
        toolUseId: a.toolUseId,
        name: a.name,
        input: a.input,
        deadline: a.deadline,
      });
      this.statusChanged();
    });
    this.emit({
      kind: 'approval_resolved',
      toolUseId: toolUse.id,
      name: toolUse.name,
      approved: decision.approved,
      ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
    });
    this.statusChanged();
    return decision;
  }
}

function summaryOf(done: ToolUseBlock | undefined): string | undefined {
  const summary = (done?.input as { summary?: unknown } | undefined)?.summary;
  return typeof summary === 'string' && summary.trim() ? summary : undefined;
}

function doneResult(t: ToolUseBlock, summary: string | undefined): ToolResultBlock {
  return summary !== undefined
    ? toolResultBlock(t.id, 'Recorded. The run is finished.', false)
    : toolResultBlock(t.id, "Error: 'done' needs a non-empty summary string.", true);
}

/**
 * Cuts the longest results so one turn's results stay within MAX_TURN_TOOL_RESULT_BYTES (the next
 * model call's delta must fit a payload): results under the fair share stay whole, the rest share
 * what is left equally.
 */
export function fitToBudget(results: ToolResultBlock[], budget = MAX_TURN_TOOL_RESULT_BYTES): ToolResultBlock[] {
  const sizes = results.map((r) => utf8Length(r.content));
  if (sizes.reduce((a, b) => a + b, 0) <= budget) return results;
  const ascending = sizes.slice().sort((a, b) => a - b);
  let remaining = budget;
  let cap = 0;
  for (let i = 0; i < ascending.length; i++) {
    const share = remaining / (ascending.length - i);
    if (ascending[i]! > share) {
      cap = Math.floor(share);
      break;
    }
    remaining -= ascending[i]!;
  }
  const note = (size: number) => `\n[output cut to fit the run's history: about ${cap} of ${size} bytes shown]`;
  return results.map((r, i) =>
    sizes[i]! > cap
      ? toolResultBlock(
          r.tool_use_id,
          cutBytes(r.content, Math.max(0, cap - 120), note(sizes[i]!)),
          r.is_error === true,
        )
      : r,
  );
}
