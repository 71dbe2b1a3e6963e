import { cutChars } from '../../shared/bounds';
import { MAX_TOOL_CALLS_PER_TURN } from '../../shared/constants';
import { toolResultBlock } from '../../shared/conversation';
import type { ToolResultBlock, ToolUseBlock } from '../../shared/messages';
import { DONE_TOOL_NAME, type Permission } from '../../shared/run/tool-policy';
import { TASK_TOOL_NAME } from '../../shared/subagents';
import { failureMessage, stopping } from '../calls/failures';
import { postToolEvent, runAsAsked, type PreToolDecision } from '../calls/hooks';
import type { Run } from '../run/run';
import { doneResult, fitToBudget, summaryOf, type TurnResults } from './tool-results';

/** Longer tool names are refused as unknown (the API allows 64 characters; custom tools get some room). */
const MAX_TOOL_NAME_CHARS = 128;

/**
 * Runs the tool calls of one turn: policy (enabled tools, permissions, approvals, the done tool),
 * then each call as an activity (calls/tool-calls.ts). Every outcome is a tool_result; nothing the
 * model asks for fails the run.
 */
export async function runToolTurn(run: Run, toolUses: ToolUseBlock[]): Promise<TurnResults> {
  const doneCall = run.settings.requireDone ? toolUses.find((t) => t.name === DONE_TOOL_NAME) : undefined;
  const doneSummary = summaryOf(doneCall);
  const seen = new Set<string>();
  let running = 0;
  let finished = false;
  const calls = toolUses.map((t): Promise<ToolResultBlock> => {
    if (finished) {
      return Promise.resolve(
        refuse(run, t, `Error: not run: the run finished with your '${DONE_TOOL_NAME}' call before this one.`),
      );
    }
    if (t === doneCall) {
      finished = doneSummary !== undefined;
      return Promise.resolve(done(run, t, doneSummary));
    }
    if (seen.has(t.id)) {
      return Promise.resolve(
        refuse(
          run,
          t,
          `Error: not run: another call in this turn has the same tool_use id '${t.id}'; ids must be unique.`,
        ),
      );
    }
    seen.add(t.id);
    if (++running > MAX_TOOL_CALLS_PER_TURN) {
      return Promise.resolve(
        refuse(
          run,
          t,
          `Error: not run: at most ${MAX_TOOL_CALLS_PER_TURN} tool calls run per turn; make this call in your next turn.`,
        ),
      );
    }
    return runOne(run, t);
  });
  // Wait for every call to settle (a cancelled one included) before the run goes on.
  const settled = calls.length === 1 ? [await calls[0]!] : await allFulfilled(calls);
  run.checkpoints.settle(run.state.iteration);
  // The one point where a run's MCP tools change: after the turn's calls, before the next model call.
  if (run.mcp.changesPending) await run.mcp.refreshIfChanged();
  return { results: fitToBudget(settled), ...(finished ? { doneSummary } : {}) };
}

/** Every call's result once all have settled; the first failure (a stop) when one failed. */
async function allFulfilled<T>(calls: Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(calls);
  const rejected = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (rejected) throw rejected.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<T>).value);
}

/** The `done` call: narrated like any tool call (its summary is the answer), never run as an activity. */
function done(run: Run, toolUse: ToolUseBlock, summary: string | undefined): ToolResultBlock {
  const result = doneResult(toolUse, summary);
  run.emit({ kind: 'tool_call_started', toolUseId: toolUse.id, name: toolUse.name, input: toolUse.input });
  run.emit({
    kind: 'tool_call_finished',
    toolUseId: toolUse.id,
    name: toolUse.name,
    isError: result.is_error === true,
    preview: result.content,
  });
  return result;
}

function refuse(run: Run, toolUse: ToolUseBlock, content: string): ToolResultBlock {
  run.emit({ kind: 'tool_call_finished', toolUseId: toolUse.id, name: toolUse.name, isError: true, preview: content });
  return toolResultBlock(toolUse.id, content, true);
}

/** Why a call may not run at all (unknown, not enabled, denied by policy); undefined: it may. */
function refusal(run: Run, name: string): string | undefined {
  const { mcp, input, settings } = run;
  if (name === DONE_TOOL_NAME && !settings.requireDone) {
    return `Error: Tool '${DONE_TOOL_NAME}' not found. This run ends when you answer without tools.`;
  }
  // An MCP tool the run does not offer (never listed, or gone since): refused, never sent to a server.
  const mcpUnknown = mcp.unknownMessage(name);
  if (mcpUnknown !== undefined) return mcpUnknown;
  // Only tools enabled for this run may run, whatever the model asks for.
  if (input.tools && !input.tools.includes(name) && !mcp.has(name)) {
    return `Error: Tool '${name}' not found. Unknown tool; this run's tools are: ${runToolNames(run).join(', ') || '(none)'}.`;
  }
  return undefined;
}

/** The tools a run with a tool list has: its list (MCP names the run does not offer left out), `task`, `done`, its MCP tools. */
function runToolNames(run: Run): string[] {
  const { input, mcp, settings, tree } = run;
  const listed = (input.tools ?? []).filter((name) => !name.startsWith('mcp__') || mcp.has(name));
  return [
    ...new Set([
      ...listed,
      ...(tree ? [TASK_TOOL_NAME] : []),
      ...(settings.requireDone ? [DONE_TOOL_NAME] : []),
      ...mcp.names(),
    ]),
  ];
}

/** One call, from its checks to its result. */
function runOne(run: Run, toolUse: ToolUseBlock): Promise<ToolResultBlock> {
  const { mcp, hooks, settings } = run;
  // No tool has a name this long: refuse before it reaches state, queries or activity inputs.
  if (typeof toolUse.name !== 'string' || toolUse.name.length > MAX_TOOL_NAME_CHARS) {
    return Promise.resolve(refuse(run, toolUse, `Error: Tool '${cutChars(String(toolUse.name), 60)}' not found.`));
  }
  if (toolUse.name === TASK_TOOL_NAME && run.tree) {
    // The hooks and approvals that stand before every tool call stand before a subagent too.
    return run.tree.run(toolUse, { hooks, approve: (call) => askApproval(run, call) });
  }
  const refused = refusal(run, toolUse.name);
  if (refused !== undefined) return Promise.resolve(refuse(run, toolUse, refused));
  const permission = settings.permissionFor(toolUse.name, mcp.sideEffect(toolUse.name));
  if (permission === 'deny') {
    return Promise.resolve(
      refuse(run, toolUse, `Error: the operator's policy does not allow tool '${toolUse.name}' in this run.`),
    );
  }
  if (hooks.has('PreToolUse') || permission === 'ask') return runGated(run, toolUse, permission);
  return callTool(run, toolUse, toolUse, runAsAsked(toolUse));
}

/** A call that a PreToolUse hook or an approval stands before. */
async function runGated(run: Run, toolUse: ToolUseBlock, permission: Permission): Promise<ToolResultBlock> {
  const { hooks } = run;
  // PreToolUse hooks may deny the call, rewrite its input, ask for approval, or (trusted hooks) allow it.
  const pre = hooks.has('PreToolUse') ? await hooks.beforeTool(toolUse) : runAsAsked(toolUse);
  if (pre.kind === 'deny') return refuse(run, toolUse, `Error: not run: ${pre.reason}`);
  const call: ToolUseBlock = { ...toolUse, input: pre.input };
  if ((permission === 'ask' && !pre.allowed) || pre.ask) {
    const decision = await askApproval(run, call);
    if (!decision.approved) {
      return refuse(
        run,
        toolUse,
        `Error: the operator denied this ${toolUse.name} call${decision.reason ? `: ${decision.reason}` : ''}. ` +
          'It was not run. Do not repeat it unchanged; adjust your approach or ask the user.',
      );
    }
  }
  return callTool(run, toolUse, call, pre);
}

/**
 * Runs the call as an activity, then the PostToolUse (or PostToolUseFailure) hooks when the run has
 * them. From the activity's result to the hooks' command is one `await` on every path, so the calls of
 * one turn issue their commands in the same order as they did as promise chains.
 */
async function callTool(
  run: Run,
  toolUse: ToolUseBlock,
  call: ToolUseBlock,
  pre: PreToolDecision,
): Promise<ToolResultBlock> {
  const { mcp, state } = run;
  state.activeTools.set(toolUse.id, toolUse.name);
  run.emit({ kind: 'tool_call_started', toolUseId: toolUse.id, name: toolUse.name, input: call.input });
  let result: Awaited<ReturnType<Run['toolCalls']['execute']>> | undefined;
  let failure: unknown;
  try {
    result = await run.toolCalls.execute(call, mcp.callRef(call.name));
  } catch (err) {
    failure = err;
  }
  state.activeTools.delete(toolUse.id);
  let content: string;
  let isError: boolean;
  if (result) {
    if (result.mcpToolsChanged) mcp.markChanged(toolUse.name);
    run.checkpoints.take(result);
    state.conversation.markToolResultCached(toolUse.id);
    ({ content, isError } = result);
  } else {
    if (stopping(failure)) throw failure;
    // Retries exhausted (timeouts, lost workers): the model learns the call failed and decides.
    content = `Error: tool '${toolUse.name}' failed: ${failureMessage(failure)}`;
    isError = true;
  }
  const notes = pre.kind === 'run' && pre.context ? [`[hook context] ${pre.context}`] : [];
  if (run.hooks.has(postToolEvent(isError))) {
    notes.push(...(await run.hooks.afterTool(toolUse, call.input, content, isError)));
  }
  return resultBlock(run, toolUse, content, isError, notes);
}

function resultBlock(
  run: Run,
  toolUse: ToolUseBlock,
  output: string,
  isError: boolean,
  notes: string[],
): ToolResultBlock {
  let content = output;
  if (notes.length > 0) {
    // The result no longer matches what the worker cached: it travels inline.
    run.state.conversation.forgetToolResult(toolUse.id);
    content = `${content}\n\n${notes.join('\n')}`;
  }
  run.emit({ kind: 'tool_call_finished', toolUseId: toolUse.id, name: toolUse.name, isError, preview: content });
  return toolResultBlock(toolUse.id, content, isError);
}

/** Pauses the tool call until an operator approves or denies it, or the timeout denies it. */
async function askApproval(run: Run, toolUse: ToolUseBlock) {
  const decision = await run.approvals.ask(toolUse, run.settings.approvalTimeoutMs, (a) => {
    run.emit({
      kind: 'approval_requested',
      toolUseId: a.toolUseId,
      name: a.name,
      input: a.input,
      deadline: a.deadline,
    });
    run.board.index();
  });
  run.emit({
    kind: 'approval_resolved',
    toolUseId: toolUse.id,
    name: toolUse.name,
    approved: decision.approved,
    ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
  });
  run.board.index();
  return decision;
}
