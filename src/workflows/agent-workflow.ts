import {
  ActivityCancellationType,
  CancellationScope,
  allHandlersFinished,
  condition,
  isCancellation,
  makeContinueAsNewFunc,
  proxyActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import {
  BUILTIN_TOOL_NAMES,
  DONE_TOOL_NAME,
  ErrorTypes,
  type AgentRunInput,
  type AgentRunResult,
  type RunContinuation,
} from '../shared';
import { modelActivityOptions } from '../shared/run-timeouts';
import { Approvals } from './run/approvals';
import { agentActivities } from './calls/activity-proxy';
import { keepConversationSmall } from './steps/compaction';
import { carriedState, shouldContinueAsNew } from './steps/hand-over';
import { Conversation } from './run/conversation';
import { endCancelled, endWith } from './steps/ending';
import { EventLog } from './run/events';
import { registerHandlers } from './handlers';
import { Inbox } from './run/inbox';
import { ModelCalls } from './calls/model-calls';
import { RunState } from './run/run-state';
import { settingsOf, validatedInput } from './run/settings';
import { CONTINUED_STATUS, StatusBoard } from './run/status';
import { ToolDispatch } from './steps/tool-turn';
import { LoopExit, TurnHandler } from './steps/turn';
import { closingSummary, modelStep } from './steps/model-step';
import { Hooks } from './calls/hooks';
import { AnswerCheck } from './calls/answer-check';
import { keepFinalMessages } from './calls/final-messages';
import { Intake } from './steps/intake';
import { describeContext, prepareRun, type Prepared } from './calls/prepare-run';
import { McpTools } from './calls/mcp-tools';
import { joinTree, offerTask, subagentPlan } from './subagents';

/**
 * The durable agent loop (docs/architecture.md): model call → tool calls → tool results → model call …
 * Every model and tool call is an activity; the conversation lives in workflow state, rebuilt on
 * replay from the activity results that history already holds, and reaches the model activity as
 * a delta against the worker's cache, so history grows linearly (docs/architecture.md#history-stays-linear).
 */
export async function agentWorkflow(rawInput: AgentRunInput): Promise<AgentRunResult> {
  const info = workflowInfo();
  // `task` is the workflow's own tool: the rest of the run (and the worker) sees the input without it.
  const plan = subagentPlan(validatedInput(rawInput));
  const input = plan.workerInput;
  const resume: RunContinuation | undefined = input.resume;
  const settings = settingsOf(input);
  const { model, maxIterations, maxTokens, contextWindow, softCapBytes, session, requireDone } = settings;
  const textTools =
    settings.toolProtocol === 'xml'
      ? [...(input.tools ?? BUILTIN_TOOL_NAMES), ...(requireDone ? [DONE_TOOL_NAME] : [])]
      : undefined;

  const approvals = new Approvals();
  /** Set from the worker when its bash runs unsandboxed or cannot run: the run's details say so. */
  const sandbox: { warning?: string } = {};
  const state = new RunState(resume, () => approvals.size);
  // A session that handed over while waiting for input is still waiting (see the loop's start).
  state.awaitingInput = resume?.awaitingInput === true && resume.idleDeadline !== undefined;
  const inbox = new Inbox(resume?.pendingMessages);
  const conversation = new Conversation(
    resume?.conversation ?? {
      id: `${info.workflowId}/${info.runId}`,
      messages: [{ role: 'user', content: input.prompt }],
    },
    () => workflowInfo().unsafe.isReplaying,
  );
  const board = new StatusBoard(state, {
    model,
    maxIterations,
    maxBudgetUsd: input.maxBudgetUsd,
    pendingApprovals: () => approvals.list(),
    warning: () => sandbox.warning,
    context: () => describeContext(prepared?.context, mcp),
  });
  const events = new EventLog(resume, () => board.showDetails());
  const emit = events.emit.bind(events);
  const tree = joinTree({
    input,
    plan,
    model,
    state,
    approvals,
    resume,
    emit,
    statusChanged: () => board.showDetails(),
    workspace: () => prepared?.context?.workspace ?? input.workspace,
  });
  const answers = input.outputSchema ? new AnswerCheck(input.outputSchema, conversation, emit) : undefined;
  const hooks = new Hooks(
    { runId: info.workflowId, workspace: input.workspace, network: input.network ?? false },
    emit,
  );
  /** What run start assembled. */
  let prepared: Prepared | undefined;
  /** The run's MCP tools, under either tool protocol (docs/mcp.md). */
  const mcp = new McpTools({ workspace: input.workspace, network: input.network ?? false }, emit, (specs, hash) =>
    modelCalls.useMcpTools(specs, hash),
  );
  const modelOptions = modelActivityOptions(input.timeouts);
  const modelCalls = new ModelCalls(
    agentActivities(
      proxyActivities<Activities>({
        ...modelOptions,
        cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      }),
    ),
    conversation,
    {
      model,
      system: input.systemPrompt,
      // Under the text protocol the model is shown exactly the tools the run lets it call.
      toolNames: textTools ? [...(input.tools ?? BUILTIN_TOOL_NAMES)] : input.tools,
      extraToolNames: requireDone ? [DONE_TOOL_NAME] : undefined,
      maxTokens,
      ...(textTools ? { toolProtocol: 'xml' as const } : {}),
      // Native structured output would turn `<tool_code>` replies into JSON: not under the text protocol.
      ...(input.outputSchema && !textTools ? { outputSchema: input.outputSchema } : {}),
      ...(input.toolChoice ? { toolChoice: input.toolChoice } : {}),
    },
    emit,
    resume?.workerQueue,
  );
  const tools = new ToolDispatch(
    {
      workspace: input.workspace,
      network: input.network ?? false,
      ...(input.commandPolicy ? { commandPolicy: input.commandPolicy } : {}),
      toolNames: input.tools,
      requireDone,
      permissionFor: settings.permissionFor,
      approvalTimeoutMs: settings.approvalTimeoutMs,
      timeouts: input.timeouts,
      hooks,
      ...(mcp ? { mcp } : {}),
      ...(tree ? { task: tree } : {}),
    },
    state,
    approvals,
    conversation,
    modelCalls,
    emit,
    () => board.index(),
  );
  const loopScope = new CancellationScope();
  registerHandlers({
    state,
    events,
    inbox,
    approvals,
    session,
    maxIterations,
    maxBudgetUsd: input.maxBudgetUsd,
    model,
    emit,
    cancelLoop: () => loopScope.cancel(),
    statusChanged: () => board.showDetails(),
    ...(tree ? { subagents: () => tree.summaries() } : {}),
  });
  const turns = new TurnHandler({
    state,
    conversation,
    inbox,
    tools,
    emit,
    index: () => board.index(),
    session,
    sessionIdleMs: settings.sessionIdleMs,
    requireDone,
    maxTokens,
    model,
    hooks,
    ...(textTools ? { textTools, mcpToolNames: () => mcp.names() } : {}),
    ...(answers ? { answers } : {}),
    // Defined below; called only once the loop runs.
    handOver: (waiting) => handOver(waiting),
  });
  /** Usage and cost of a call; an iteration's call (`judge`) also decides whether compaction is due. */
  const account = (response: Parameters<RunState['account']>[0], judge = false) =>
    state.account(response, model, contextWindow, judge ? 'judge' : 'ignore');

  /** Hands the run to a fresh execution, so history stays small (docs/architecture.md#history-stays-linear). */
  const handOver = async (waiting?: { idleDeadline: number }): Promise<never> => {
    state.continuations += 1;
    emit({ kind: 'notice', message: `continuing as new (execution ${state.continuations + 1}) to keep history small` });
    await condition(allHandlersFinished);
    const carried = carriedState({
      conversation,
      state,
      events,
      inbox,
      workerQueue: modelCalls.workerQueue,
      ...(waiting ? { waiting } : {}),
      ...(prepared?.context
        ? {
            carriedContext: {
              context: prepared.context,
              hookEvents: prepared.hookEvents,
              ...(hooks.stopBlocks > 0 ? { stopBlocks: hooks.stopBlocks } : {}),
            },
          }
        : {}),
    });
    // The subagents' counter goes on, so a child's id never repeats within the run.
    Object.assign(carried, tree?.carried());
    // This execution stops here: its attributes say `continued`; the next one starts `running`.
    board.index(CONTINUED_STATUS);
    const next = makeContinueAsNewFunc<typeof agentWorkflow>({
      typedSearchAttributes: board.continuationAttributes(waiting ? 'awaiting_input' : 'running'),
      // Every hand-over is an upgrade point: the next execution starts on the deployment's current
      // version (pinned there in turn), reading only the carried input (docs/upgrading.md).
      initialVersioningBehavior: 'AUTO_UPGRADE',
    });
    return next({ ...rawInput, resume: carried });
  };

  const step = {
    state,
    conversation,
    modelCalls,
    tools,
    board,
    emit,
    account,
    sandbox,
    textProtocol: textTools !== undefined,
  };
  const summarize = () => closingSummary(step);

  const compactIfNeeded = () =>
    keepConversationSmall({
      conversation,
      state,
      modelCalls,
      prompt: input.prompt,
      softCapBytes,
      emit,
      account,
    });

  const intake = new Intake(inbox, conversation, hooks, emit);
  /** Run start: the system prompt and hooks, then the prompt's UserPromptSubmit hooks (first execution only). */
  const start = async (): Promise<LoopExit | undefined> => {
    if (answers && !resume) await answers.checkSchema();
    prepared = await prepareRun(input, resume, settings, emit, mcp);
    if (prepared.refused !== undefined) {
      return new LoopExit('failed', '', { type: ErrorTypes.WorkspaceRefused, message: prepared.refused });
    }
    // From here on the run's tools and hooks use the workspace's recorded real path.
    if (prepared.context?.workspace) {
      tools.useWorkspace(prepared.context.workspace);
      hooks.useWorkspace(prepared.context.workspace);
      mcp?.useWorkspace(prepared.context.workspace);
    }
    modelCalls.useSystem(prepared.system);
    modelCalls.followWorkflow(prepared.workerQueue);
    hooks.enable(prepared.hookEvents);
    hooks.stopBlocks = resume?.stopBlocks ?? 0;
    if (tree) {
      const workspace = prepared.context?.workspace ?? input.workspace;
      await offerTask(tree, { input, workspace, modelCalls, emit });
    }
    board.showDetails();
    const blocked = resume ? undefined : await intake.screenPrompt(input.prompt);
    if (blocked === undefined) return undefined;
    return new LoopExit('failed', '', {
      type: 'DurableAgent.PromptBlocked',
      message: `a UserPromptSubmit hook blocked the prompt: ${blocked}`,
    });
  };

  const loop = async (): Promise<LoopExit> => {
    const refused = await start();
    if (refused) return refused;
    // A session that handed over while waiting for input goes on waiting, until the same deadline.
    if (resume?.awaitingInput && resume.idleDeadline !== undefined) {
      const exit = await turns.waitForInput(state.lastAssistantText, resume.idleDeadline);
      if (exit) return exit;
    }
    for (;;) {
      if (state.interrupt) return LoopExit.interrupted(state.interrupt, state.lastAssistantText);
      if (hooks.stopRunRequested)
        return LoopExit.interrupted({ reason: hooks.stopRunRequested }, state.lastAssistantText);
      if (state.overBudget(input.maxBudgetUsd)) return new LoopExit('max_budget', state.lastAssistantText);
      // Messages join before the size check, so what they add is bounded with the rest.
      if ((await intake.takeMessages()) === 'blocked') {
        const exit = await turns.messageBlocked();
        if (exit) return exit;
        continue;
      }
      if (hooks.stopRunRequested) {
        return LoopExit.interrupted({ reason: hooks.stopRunRequested }, state.lastAssistantText);
      }
      // Compaction comes before continue-as-new: the conversation travels in its input.
      if ((await compactIfNeeded()) === 'does_not_fit') {
        return new LoopExit('failed', state.lastAssistantText, {
          type: 'DurableAgent.ContextWindowExceeded',
          message: `the conversation does not fit the context window of ${model} (${contextWindow} tokens) even right after compaction`,
        });
      }
      if (shouldContinueAsNew(input.continueAsNewAfter)) await handOver();
      const limit = state.limitReached({ ...settings, perMessage: session });
      if (limit === 'run') return new LoopExit('max_iterations', await summarize());
      if (limit === 'message') {
        const exit = await turns.endMessageAtLimit(await summarize(), maxIterations);
        if (exit) return exit;
        continue;
      }
      const response = await modelStep(step);
      if (response instanceof LoopExit) return response;
      const exit = await turns.handle(response);
      if (exit) return exit;
    }
  };

  emit(
    resume
      ? { kind: 'notice', message: `continued as new: execution ${state.continuations + 1}` }
      : { kind: 'run_started', model, maxIterations, prompt: input.prompt },
  );
  board.index();

  const ending = {
    state,
    board,
    model,
    emit,
    ...(answers ? { outputOf: (text: string) => answers.outputFor(text) } : {}),
    keepFinalMessages: () => keepFinalMessages(conversation),
  };
  let exit: LoopExit;
  try {
    exit = await loopScope.run(loop);
  } catch (err) {
    if (state.interrupt && (isCancellation(err) || loopScope.consideredCancelled)) {
      exit = LoopExit.interrupted(state.interrupt, state.lastAssistantText);
    } else if (CancellationScope.current().consideredCancelled) {
      return endCancelled(ending, err);
    } else {
      throw err;
    }
  }
  return endWith(ending, exit);
}
