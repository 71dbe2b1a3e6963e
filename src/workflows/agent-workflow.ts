import {
  ActivityFailure,
  type ActivityOptions,
  ApplicationFailure,
  CancellationScope,
  proxyLocalActivities,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  log,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  TimeoutFailure,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { TimeoutType, type SearchAttributeUpdatePair } from '@temporalio/common';
import type { Activities } from '../activities';
import {
  BUILTIN_SIDE_EFFECTS,
  CACHE_MISS_ERROR_TYPE,
  DEFAULT_APPROVAL_TIMEOUT_SECONDS,
  DEFAULT_COMPACT_AT_BYTES,
  LOCAL_TOOL_START_TO_CLOSE_TIMEOUT,
  TOOL_RETRY,
  DEFAULT_SESSION_IDLE_TIMEOUT_SECONDS,
  DONE_TOOL_NAME,
  COMPACT_AT_FRACTION,
  DEFAULT_ANTHROPIC_MODEL,
  DEFAULTS,
  ErrorTypes,
  MAX_RETAINED_EVENTS,
  SEARCH_ATTRIBUTE_MIN_INTERVAL_MS,
  STICKY_SCHEDULE_TO_START_TIMEOUT,
  SUMMARY_FALLBACK_TEXT,
  SUMMARY_INSTRUCTION,
  ZERO_USAGE,
  addUsage,
  approveToolUpdate,
  contextWindowOf,
  costOf,
  costSearchAttribute,
  denyToolUpdate,
  eventsQuery,
  hasKnownPrice,
  interruptSignal,
  iterationsSearchAttribute,
  modelSearchAttribute,
  parseRunInput,
  sendMessageUpdate,
  stateQuery,
  statusSearchAttribute,
  textOf,
  toolResultBlock,
} from '../shared';
import type {
  AgentRunInput,
  AgentRunResult,
  AgentRunState,
  ConversationDelta,
  ApprovalInput,
  ApprovalResult,
  CallModelOutput,
  ContentBlock,
  ExitReason,
  ModelResponse,
  PendingApproval,
  Permission,
  RunContinuation,
  RunEvent,
  RunEventInput,
  RunStatus,
  ToolResultBlock,
  ToolUseBlock,
  Usage,
} from '../shared';
import { modelActivityOptions, toolActivityOptions } from '../shared/run-timeouts';
import { COMPACTION_INSTRUCTION, compactedConversation } from './compaction';
import { Conversation } from './conversation';
import { describeToolCall, modelCallSummary } from './summaries';
import { CONTINUE_AFTER_MAX_TOKENS, DONE_TOOL_NUDGE, classifyTurn, truncatedToolCallError } from './turn-outcome';

/** Events per `events` query page, and the model text kept per progress event (the answer event keeps all). */
const EVENTS_PER_PAGE = 200;
const EVENT_TEXT_CHARS = 1000;

/** Progress events carried into the next execution on continue-as-new. */
const EVENTS_CARRIED_OVER = 200;

/** Ends the loop with a given exit reason; never escapes the workflow. */
class LoopExit {
  constructor(
    readonly exitReason: ExitReason,
    readonly finalText: string,
    readonly error?: { type: string; message: string },
  ) {}
}

/**
 * The durable agent loop (DESIGN.md §2): model call → tool calls → tool results → model call …
 * Every model and tool call is an activity; the conversation lives in workflow state, rebuilt on
 * replay from the activity results that history already holds, and reaches the model activity as
 * a delta against the worker's cache, so history grows linearly (DESIGN.md §5).
 */
export async function agentWorkflow(rawInput: AgentRunInput): Promise<AgentRunResult> {
  const parsed = parseRunInput(rawInput);
  if (!parsed.ok) throw ApplicationFailure.nonRetryable(parsed.error, ErrorTypes.InvalidInput);
  const input = parsed.input;
  // Liveness timeouts and retry bounds: the defaults in constants.ts unless the run sets `timeouts`.
  const modelActivities = proxyActivities<Activities>(modelActivityOptions(input.timeouts));
  const toolActivities = proxyActivities<Activities>(toolActivityOptions(input.timeouts));
  const model = input.model ?? DEFAULT_ANTHROPIC_MODEL;
  const maxIterations = input.maxIterations ?? DEFAULTS.maxIterations;
  const maxTokens = input.maxTokens ?? DEFAULTS.maxTokens;
  const contextWindow = input.contextWindowTokens ?? contextWindowOf(model);
  const compactAtBytes = input.compactAtBytes ?? DEFAULT_COMPACT_AT_BYTES;
  // Undefined means every tool the worker offers; a list restricts the run to those tools.
  const toolNames = input.tools;
  const requireDone = input.requireDoneTool ?? false;
  const extraToolNames = requireDone ? [DONE_TOOL_NAME] : undefined;
  const session = input.session ?? false;
  const approvalTimeoutMs = (input.approvalTimeoutSeconds ?? DEFAULT_APPROVAL_TIMEOUT_SECONDS) * 1000;
  const sessionIdleMs = (input.sessionIdleTimeoutSeconds ?? DEFAULT_SESSION_IDLE_TIMEOUT_SECONDS) * 1000;
  /** allow / deny / ask per tool; with `approveMutating`, mutating tools (and unknown ones) default to ask. */
  const permissionFor = (name: string): Permission =>
    input.permissions?.[name] ??
    (input.approveMutating && (BUILTIN_SIDE_EFFECTS[name] ?? 'mutating') === 'mutating' ? 'ask' : 'allow');
  if (input.maxBudgetUsd !== undefined && !hasKnownPrice(model)) {
    throw ApplicationFailure.nonRetryable(
      `Invalid run input: maxBudgetUsd cannot be enforced because the price of model '${model}' is unknown; ` +
        'use a model from the price table or drop maxBudgetUsd',
      ErrorTypes.InvalidInput,
    );
  }

  const info = workflowInfo();
  const resume: RunContinuation | undefined = input.resume;
  const conversation = new Conversation(
    resume?.conversation ?? {
      id: `${info.workflowId}/${info.runId}`,
      messages: [{ role: 'user', content: input.prompt }],
    },
  );
  let finalStatus: ExitReason | undefined = undefined;
  let awaitingInput = false;
  const pendingMessages: string[] = resume?.pendingMessages.slice() ?? [];
  const pendingApprovals = new Map<string, PendingApproval>();
  const decisions = new Map<string, { approved: boolean; reason?: string }>();
  const currentStatus = (): RunStatus =>
    finalStatus ?? (pendingApprovals.size > 0 ? 'awaiting_approval' : awaitingInput ? 'awaiting_input' : 'running');
  let iteration = resume?.iteration ?? 0;
  let usage: Usage = resume?.usage ?? { ...ZERO_USAGE };
  // null once any call's cost is unknown: a partial sum would under-report.
  let costUsd: number | null = resume ? resume.costUsd : 0;
  let lastStopReason: ModelResponse['stopReason'] | undefined = resume?.lastStopReason;
  let lastAssistantText = resume?.lastAssistantText ?? '';
  let continuations = resume?.continuations ?? 0;
  let compactions = resume?.compactions ?? 0;
  let needsCompaction = resume?.needsCompaction ?? false;
  const activeTools = new Map<string, string>();
  let interrupt: { reason?: string } | undefined;

  const events: RunEvent[] = resume?.events.slice() ?? [];
  let seq = resume?.eventSeq ?? 0;
  let droppedEvents = resume !== undefined && (events[0]?.seq ?? 1) > 1;

  // Search attributes add history events; runs recorded before them replay without.
  const indexed = patched('search-attributes');
  // Routing calls to the worker that holds the conversation changes the commands' task queue.
  const sticky = patched('sticky-activities');
  // Read-only built-in tools as local activities: markers instead of activity events in history.
  const localReadTools = patched('local-read-tools');
  // Tools the worker says run locally (`runsLocally`: read_file, glob, grep and custom ones), learnt from each model call.
  const workerLocalTools = patched('worker-local-tools');
  let reportedLocalTools: ReadonlySet<string> = new Set();
  const localTools = proxyLocalActivities<Activities>({
    startToCloseTimeout: LOCAL_TOOL_START_TO_CLOSE_TIMEOUT,
    retry: { ...TOOL_RETRY, maximumAttempts: input.timeouts?.toolMaxAttempts ?? TOOL_RETRY.maximumAttempts },
  });
  let workerQueue: string | undefined = resume?.workerQueue;

  /**
   * Runs an activity on the worker that holds the conversation when there is one. If that worker
   * does not take it in time (gone, saturated), the run forgets it and `fallback` decides what to
   * do on the shared queue; the failure says whether a worker ever started the call.
   */
  const onWorker = async <T>(
    call: (options: ActivityOptions | Record<string, never>) => Promise<T>,
    fallback: (startedBy: string | undefined) => Promise<T>,
  ): Promise<T> => {
    const queue = sticky ? workerQueue : undefined;
    if (!queue) return call({});
    try {
      return await call({ taskQueue: queue, scheduleToStartTimeout: STICKY_SCHEDULE_TO_START_TIMEOUT });
    } catch (err) {
      if (!isScheduleToStartTimeout(err)) throw err;
      if (workerQueue === queue) workerQueue = undefined;
      emit({ kind: 'notice', message: `worker queue ${queue} did not take the call; using the shared queue` });
      return fallback(err instanceof ActivityFailure ? err.identity || undefined : undefined);
    }
  };
  // Fewer upserts within one status: runs recorded before this wrote them every iteration.
  const throttledIndex = patched('throttled-search-attributes');
  let lastIndexed: { status: RunStatus; at: number } | undefined;
  /**
   * Brings the search attributes up to date. A status change always writes; otherwise at most once
   * per SEARCH_ATTRIBUTE_MIN_INTERVAL_MS, so a fast loop does not pay a history event and a
   * visibility write per iteration (its iteration count then lags by at most one iteration).
   */
  const index = (): void => {
    if (!indexed) return;
    const status = currentStatus();
    const now = Date.now();
    if (throttledIndex && lastIndexed?.status === status && now - lastIndexed.at < SEARCH_ATTRIBUTE_MIN_INTERVAL_MS) {
      return;
    }
    lastIndexed = { status, at: now };
    const pairs: SearchAttributeUpdatePair[] = [
      { key: statusSearchAttribute, value: status },
      { key: iterationsSearchAttribute, value: iteration },
      { key: modelSearchAttribute, value: model },
      // An unknown cost removes the attribute: a stale number would read as a price.
      { key: costSearchAttribute, value: costUsd },
    ];
    upsertSearchAttributes(pairs);
  };

  /** The live line in the Web UI: not a command, so it costs no history and needs no patch. */
  const showDetails = (): void => {
    const cost = costUsd === null ? 'unknown' : `$${costUsd.toFixed(4)}`;
    const tokens = usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens;
    setCurrentDetails(
      [
        `**${currentStatus()}** · iteration ${iteration} / ${maxIterations} · model ${model}`,
        `tokens ${tokens} in / ${usage.outputTokens} out · cost ${cost}` +
          (input.maxBudgetUsd !== undefined ? ` of $${input.maxBudgetUsd}` : ''),
        activeTools.size ? `running: ${[...activeTools.values()].join(', ')}` : 'running: -',
        ...(pendingApprovals.size
          ? [`awaiting approval: ${[...pendingApprovals.values()].map((a) => `${a.name} (${a.toolUseId})`).join(', ')}`]
          : []),
      ].join('\n\n'),
    );
  };

  const emit = (event: RunEventInput): void => {
    events.push({ ...event, seq: ++seq } as RunEvent);
    if (events.length > MAX_RETAINED_EVENTS) {
      events.splice(0, events.length - MAX_RETAINED_EVENTS);
      droppedEvents = true;
    }
    showDetails();
  };

  const loopScope = new CancellationScope();

  setHandler(stateQuery, (): AgentRunState => ({
    status: currentStatus(),
    iteration,
    maxIterations,
    usage,
    costUsd,
    ...(input.maxBudgetUsd !== undefined ? { maxBudgetUsd: input.maxBudgetUsd } : {}),
    ...(lastStopReason !== undefined ? { lastStopReason } : {}),
    activeTools: [...activeTools.values()],
    model,
    pendingApprovals: [...pendingApprovals.values()],
    pendingMessages: pendingMessages.length,
    session,
  }));
  setHandler(eventsQuery, ({ after }) => {
    // Pages are bounded so a query result stays small however far behind the reader is.
    const page = events.filter((e) => e.seq > after).slice(0, EVENTS_PER_PAGE);
    return {
      events: page,
      cursor: page.length ? (page[page.length - 1]?.seq ?? seq) : seq,
      truncated: droppedEvents && (events[0]?.seq ?? 0) > after + 1,
    };
  });
  setHandler(interruptSignal, ({ reason } = {}) => {
    if (interrupt || finalStatus) return;
    interrupt = reason !== undefined ? { reason } : {};
    emit({ kind: 'notice', message: `interrupt requested${reason ? `: ${reason}` : ''}` });
    loopScope.cancel();
  });

  setHandler(
    sendMessageUpdate,
    ({ message }) => {
      pendingMessages.push(message);
      emit({ kind: 'user_message', message });
      return { pendingMessages: pendingMessages.length, iteration };
    },
    {
      validator: (update) => {
        if (finalStatus) throw new Error(`the run has ended ('${finalStatus}'); start a new run to continue`);
        if (!update || typeof update.message !== 'string' || !update.message.trim()) {
          throw new Error('message must be a non-empty string');
        }
        if (update.message.length > 200_000) throw new Error('message must be at most 200000 characters');
      },
    },
  );
  const decide =
    (approved: boolean) =>
    ({ toolUseId, reason }: ApprovalInput): ApprovalResult => {
      const pending = pendingApprovals.get(toolUseId);
      decisions.set(toolUseId, reason !== undefined ? { approved, reason } : { approved });
      return { toolUseId, name: pending?.name ?? '', approved };
    };
  const validateDecision = (update: ApprovalInput): void => {
    if (!update || typeof update.toolUseId !== 'string') throw new Error('toolUseId must be a string');
    if (update.reason !== undefined && typeof update.reason !== 'string') throw new Error('reason must be a string');
    if (!pendingApprovals.has(update.toolUseId) || decisions.has(update.toolUseId)) {
      const waiting = [...pendingApprovals.keys()].filter((id) => !decisions.has(id));
      throw new Error(
        `no tool call '${update.toolUseId}' is waiting for approval; waiting: ${waiting.length ? waiting.join(', ') : '(none)'}`,
      );
    }
  };
  setHandler(approveToolUpdate, decide(true), { validator: validateDecision });
  setHandler(denyToolUpdate, decide(false), { validator: validateDecision });

  const account = (response: ModelResponse): number | null => {
    usage = addUsage(usage, response.usage);
    const callCost = costOf(response.model || model, response.usage) ?? costOf(model, response.usage);
    costUsd = costUsd === null || callCost === null ? null : costUsd + callCost;
    const used = response.usage.inputTokens + response.usage.cacheReadInputTokens;
    if (
      used + response.usage.cacheCreationInputTokens + response.usage.outputTokens >
      COMPACT_AT_FRACTION * contextWindow
    ) {
      needsCompaction = true;
    }
    return callCost;
  };

  /**
   * Runs a model activity with the conversation as a delta. A worker without the prefix (another
   * worker, a restart, an eviction) fails fast with a cache miss; the conversation then goes once
   * in full.
   */
  const withConversation = async <T>(
    call: (conversation: ConversationDelta, options: ActivityOptions | Record<string, never>) => Promise<T>,
  ): Promise<T> => {
    // A call that falls back from a gone worker lands on one without the conversation: send it whole.
    const attempt = (full: boolean) =>
      onWorker(
        (options) => call(conversation.delta(full), options),
        () => call(conversation.delta(true), {}),
      );
    if (!conversation.hasSyncedPrefix) return attempt(true);
    try {
      return await attempt(false);
    } catch (err) {
      if (failureType(err) !== CACHE_MISS_ERROR_TYPE) throw err;
      log.info('conversation cache miss; resending the whole conversation', { error: failureMessage(err) });
      return attempt(true);
    }
  };

  /** Pauses the tool call until an operator approves or denies it, or the timeout denies it. */
  const askApproval = async (toolUse: ToolUseBlock): Promise<{ approved: boolean; reason?: string }> => {
    const deadline = Date.now() + approvalTimeoutMs;
    pendingApprovals.set(toolUse.id, { toolUseId: toolUse.id, name: toolUse.name, input: toolUse.input, deadline });
    emit({ kind: 'approval_requested', toolUseId: toolUse.id, name: toolUse.name, input: toolUse.input, deadline });
    index();
    try {
      await condition(() => decisions.has(toolUse.id), approvalTimeoutMs);
    } finally {
      pendingApprovals.delete(toolUse.id);
    }
    const decision = decisions.get(toolUse.id) ?? {
      approved: false,
      reason: `no decision within ${approvalTimeoutMs / 1000} s`,
    };
    emit({
      kind: 'approval_resolved',
      toolUseId: toolUse.id,
      name: toolUse.name,
      approved: decision.approved,
      ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
    });
    index();
    return decision;
  };

  const refuse = (toolUse: ToolUseBlock, content: string): ToolResultBlock => {
    emit({ kind: 'tool_call_finished', toolUseId: toolUse.id, name: toolUse.name, isError: true, preview: content });
    return toolResultBlock(toolUse.id, content, true);
  };

  const runOneTool = async (toolUse: ToolUseBlock): Promise<ToolResultBlock> => {
    if (toolUse.name === DONE_TOOL_NAME && !requireDone) {
      return refuse(toolUse, `Error: Tool '${DONE_TOOL_NAME}' not found. This run ends when you answer without tools.`);
    }
    // Only tools enabled for this run may run, whatever the model asks for.
    if (toolNames && !toolNames.includes(toolUse.name)) {
      return refuse(toolUse, `Error: Tool '${toolUse.name}' not found. Available tools: ${toolNames.join(', ')}.`);
    }
    const permission = permissionFor(toolUse.name);
    if (permission === 'deny') {
      return refuse(toolUse, `Error: the operator's policy does not allow tool '${toolUse.name}' in this run.`);
    }
    if (permission === 'ask') {
      const decision = await askApproval(toolUse);
      if (!decision.approved) {
        return refuse(
          toolUse,
          `Error: the operator denied this ${toolUse.name} call${decision.reason ? `: ${decision.reason}` : ''}. ` +
            'It was not run. Do not repeat it unchanged; adjust your approach or ask the user.',
        );
      }
    }
    activeTools.set(toolUse.id, toolUse.name);
    emit({ kind: 'tool_call_started', toolUseId: toolUse.id, name: toolUse.name, input: toolUse.input });
    let content: string;
    let isError: boolean;
    try {
      const args = {
        toolUseId: toolUse.id,
        name: toolUse.name,
        input: toolUse.input,
        workspace: input.workspace,
        conversationId: conversation.id,
        ...(input.network ? { network: true } : {}),
      };
      const summary = describeToolCall(toolUse.name, toolUse.input);
      // The worker's registry decides (each model call reports it); runs from before that used a fixed list.
      const local = workerLocalTools
        ? reportedLocalTools.has(toolUse.name)
        : localReadTools && BUILTIN_SIDE_EFFECTS[toolUse.name] === 'read_only';
      ({ content, isError } = local
        ? await localTools.runTool.executeWithOptions({ summary }, [args])
        : await onWorker(
            (options) => toolActivities.runTool.executeWithOptions({ summary, ...options }, [args]),
            (startedBy) =>
              toolActivities.runTool.executeWithOptions({ summary }, [
                startedBy ? { ...args, mayHaveStarted: true } : args,
              ]),
          ));
      conversation.markToolResultCached(toolUse.id);
    } catch (err) {
      if (isCancellation(err)) throw err;
      // Retries exhausted (timeouts, lost workers): the model learns the call failed and decides.
      content = `Error: tool '${toolUse.name}' failed: ${failureMessage(err)}`;
      isError = true;
    } finally {
      activeTools.delete(toolUse.id);
    }
    emit({
      kind: 'tool_call_finished',
      toolUseId: toolUse.id,
      name: toolUse.name,
      isError,
      preview: content.slice(0, 200),
    });
    return toolResultBlock(toolUse.id, content, isError);
  };

  /** A summary call over the conversation with a closing instruction; the conversation is unchanged. */
  const summaryCall = async (instruction: string, label: string): Promise<string> => {
    const { text, response } = await withConversation((delta, options) =>
      modelActivities.summarizeRun.executeWithOptions({ summary: `${label} · ${model}`, ...options }, [
        { model, system: input.systemPrompt, conversation: delta, toolNames, extraToolNames, maxTokens, instruction },
      ]),
    );
    account(response);
    return text;
  };

  const summarize = async (): Promise<string> => {
    try {
      return (await summaryCall(SUMMARY_INSTRUCTION, 'summary (max iterations)')).trim() || SUMMARY_FALLBACK_TEXT;
    } catch (err) {
      if (isCancellation(err)) throw err;
      emit({ kind: 'notice', message: `summary call failed: ${failureMessage(err)}` });
      return SUMMARY_FALLBACK_TEXT;
    }
  };

  /** Replaces older turns with a model-written summary so the run fits its context window. */
  const compact = async (): Promise<void> => {
    needsCompaction = false;
    try {
      const summary = (await summaryCall(COMPACTION_INSTRUCTION, 'compaction')).trim();
      if (!summary) throw new Error('the compaction summary was empty');
      const before = conversation.length;
      conversation.replace(compactedConversation(input.prompt, summary, conversation.all));
      compactions += 1;
      emit({ kind: 'notice', message: `compacted ${before} messages into a summary (compaction ${compactions})` });
    } catch (err) {
      if (isCancellation(err)) throw err;
      if (conversation.bytes > compactAtBytes) {
        // Too big to carry or resend: keep the task and the latest results, drop the older turns.
        conversation.replace(
          compactedConversation(input.prompt, 'Unavailable: earlier turns were dropped to fit.', conversation.all),
        );
        emit({ kind: 'notice', message: `compaction failed (${failureMessage(err)}); dropped older turns to fit` });
      } else {
        emit({ kind: 'notice', message: `compaction failed, continuing without it: ${failureMessage(err)}` });
      }
    }
  };

  const shouldContinueAsNew = (): boolean => {
    const now = workflowInfo();
    const limits = input.continueAsNewAfter;
    return (
      now.continueAsNewSuggested ||
      (limits?.events !== undefined && now.historyLength >= limits.events) ||
      (limits?.bytes !== undefined && now.historySize >= limits.bytes)
    );
  };

  const handOver = async (): Promise<never> => {
    continuations += 1;
    emit({ kind: 'notice', message: `continuing as new (execution ${continuations + 1}) to keep history small` });
    await condition(allHandlersFinished);
    const carried: RunContinuation = {
      conversation: conversation.snapshot(),
      iteration,
      usage,
      costUsd,
      ...(lastStopReason !== undefined ? { lastStopReason } : {}),
      lastAssistantText,
      events: events.slice(-EVENTS_CARRIED_OVER),
      eventSeq: seq,
      continuations,
      compactions,
      needsCompaction,
      pendingMessages,
      awaitingInput: false,
      ...(workerQueue ? { workerQueue } : {}),
    };
    return continueAsNew<typeof agentWorkflow>({ ...rawInput, resume: carried });
  };

  /** Gives messages from `send` to the model at this iteration boundary, in one user turn. */
  const takePendingMessages = (): void => {
    if (pendingMessages.length === 0) return;
    const text = pendingMessages.splice(0).join('\n\n');
    const last = conversation.last;
    if (last?.role === 'user') {
      // Joining the trailing user turn (tool results) keeps the roles alternating.
      const blocks: ContentBlock[] =
        typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : [...last.content];
      conversation.replaceLast({ role: 'user', content: [...blocks, { type: 'text', text }] });
    } else {
      conversation.append({ role: 'user', content: text });
    }
  };

  /**
   * The model answered. A plain run ends; a session waits for the next message (or ends after the
   * idle timeout). Messages sent meanwhile are taken first either way.
   */
  const finishTurn = async (text: string): Promise<LoopExit | undefined> => {
    emit({ kind: 'answer', text });
    if (pendingMessages.length > 0) return undefined;
    if (!session) return new LoopExit('completed', text);
    awaitingInput = true;
    emit({ kind: 'awaiting_input' });
    index();
    const gotMessage = await condition(() => pendingMessages.length > 0, sessionIdleMs);
    awaitingInput = false;
    if (!gotMessage) return new LoopExit('completed', text);
    return undefined;
  };

  const loop = async (): Promise<LoopExit> => {
    for (;;) {
      if (interrupt) return interrupted(interrupt, lastAssistantText);
      if (input.maxBudgetUsd !== undefined && costUsd !== null && costUsd >= input.maxBudgetUsd) {
        return new LoopExit('max_budget', lastAssistantText);
      }
      // Compaction comes before continue-as-new: the conversation travels in its input.
      if (needsCompaction || conversation.bytes > compactAtBytes) await compact();
      if (shouldContinueAsNew()) await handOver();
      if (iteration >= maxIterations) return new LoopExit('max_iterations', await summarize());
      takePendingMessages();

      emit({ kind: 'model_call_started', iteration: iteration + 1 });
      let response: CallModelOutput;
      try {
        response = await withConversation((delta, options) =>
          modelActivities.callModel.executeWithOptions(
            { summary: modelCallSummary(model, iteration + 1), ...options },
            [
              {
                model,
                system: input.systemPrompt,
                conversation: delta,
                toolNames,
                extraToolNames,
                maxTokens,
                toolChoice: { type: 'auto' },
              },
            ],
          ),
        );
      } catch (err) {
        if (isCancellation(err)) throw err;
        emit({ kind: 'model_call_failed', iteration: iteration + 1, error: failureMessage(err) });
        return new LoopExit('failed', lastAssistantText, { type: failureType(err), message: failureMessage(err) });
      }
      iteration += 1;
      if (sticky && response.workerQueue) workerQueue = response.workerQueue;
      if (workerLocalTools) reportedLocalTools = new Set(response.localTools ?? []);
      lastStopReason = response.stopReason;
      const callCost = account(response);
      // The assistant turn goes back exactly as returned: thinking blocks included, unmodified, in order.
      conversation.append({ role: 'assistant', content: response.content });
      conversation.markSynced();
      const text = textOf(response.content);
      if (text.trim()) lastAssistantText = text;
      emit({
        kind: 'model_call_finished',
        iteration,
        stopReason: response.stopReason,
        usage: response.usage,
        costUsd: callCost,
        text: text.length > EVENT_TEXT_CHARS ? `${text.slice(0, EVENT_TEXT_CHARS)}…` : text,
      });
      index();

      const outcome = classifyTurn(response);
      switch (outcome.kind) {
        case 'tools': {
          const done = requireDone ? outcome.toolUses.find((t) => t.name === DONE_TOOL_NAME) : undefined;
          const summary = doneSummary(done);
          const results = await Promise.all(
            outcome.toolUses.map((t) =>
              t !== done
                ? runOneTool(t)
                : summary !== undefined
                  ? toolResultBlock(t.id, 'Recorded. The run is finished.', false)
                  : toolResultBlock(t.id, "Error: 'done' needs a non-empty summary string.", true),
            ),
          );
          conversation.append({ role: 'user', content: results });
          if (summary !== undefined) {
            const exit = await finishTurn(summary);
            if (exit) return exit;
          }
          break;
        }
        case 'final': {
          if (requireDone) {
            // done-tool mode: only the done tool ends the run; a text-only reply gets a nudge.
            conversation.append({ role: 'user', content: DONE_TOOL_NUDGE });
            emit({ kind: 'notice', message: 'answered without calling done; nudging the model to continue' });
            break;
          }
          const exit = await finishTurn(outcome.text);
          if (exit) return exit;
          break;
        }
        case 'refused':
          return new LoopExit('refused', outcome.text);
        case 'truncated':
          conversation.append({
            role: 'user',
            content:
              outcome.toolUses.length > 0
                ? outcome.toolUses.map((t) => toolResultBlock(t.id, truncatedToolCallError(maxTokens), true))
                : CONTINUE_AFTER_MAX_TOKENS,
          });
          emit({ kind: 'notice', message: `response reached max_tokens (${maxTokens}); asking the model to continue` });
          break;
        case 'paused':
          // The assistant turn is last in the conversation; the next call lets the model resume it.
          break;
        case 'context_exceeded':
          // Compact and go on, unless compacting just happened and the conversation still does not fit.
          if (compactions > 0 && conversation.length <= 2) {
            return new LoopExit('failed', outcome.text || lastAssistantText, {
              type: 'DurableAgent.ContextWindowExceeded',
              message: `the conversation does not fit the context window of ${model} even after compaction`,
            });
          }
          // The partial turn stays; the compaction call summarizes it with the rest.
          needsCompaction = true;
          emit({ kind: 'notice', message: `the conversation reached the context window of ${model}; compacting` });
          break;
        default: {
          const unhandled: never = outcome;
          throw new Error(`unhandled turn outcome ${JSON.stringify(unhandled)}`);
        }
      }
    }
  };

  if (resume) {
    emit({ kind: 'notice', message: `continued as new: execution ${continuations + 1}` });
  } else {
    emit({ kind: 'run_started', model, maxIterations, prompt: input.prompt });
  }
  index();

  let exit: LoopExit;
  try {
    exit = await loopScope.run(loop);
  } catch (err) {
    if (!(interrupt && isCancellation(err))) throw err;
    exit = interrupted(interrupt, lastAssistantText);
  }

  finalStatus = exit.exitReason;
  emit({ kind: 'run_finished', exitReason: exit.exitReason, finalText: exit.finalText });
  index();
  await condition(allHandlersFinished);
  return {
    exitReason: exit.exitReason,
    finalText: exit.finalText,
    iterations: iteration,
    usage,
    costUsd,
    model,
    ...(exit.error ? { error: exit.error } : {}),
  };
}

function doneSummary(done: ToolUseBlock | undefined): string | undefined {
  const summary = (done?.input as { summary?: unknown } | undefined)?.summary;
  return typeof summary === 'string' && summary.trim() ? summary : undefined;
}

function isScheduleToStartTimeout(err: unknown): boolean {
  return (
    err instanceof ActivityFailure &&
    err.cause instanceof TimeoutFailure &&
    err.cause.timeoutType === TimeoutType.SCHEDULE_TO_START
  );
}

function interrupted(interrupt: { reason?: string }, lastText: string): LoopExit {
  return new LoopExit('interrupted', lastText, {
    type: 'DurableAgent.Interrupted',
    message: interrupt.reason ? `interrupted: ${interrupt.reason}` : 'interrupted',
  });
}

/** The innermost cause: an ActivityFailure wraps the ApplicationFailure that says what happened. */
function innermost(err: unknown): unknown {
  let current: unknown = err;
  while (current instanceof ActivityFailure && current.cause) current = current.cause;
  return current;
}

function failureMessage(err: unknown): string {
  const cause = innermost(err);
  return cause instanceof Error ? cause.message || cause.name : String(cause);
}

function failureType(err: unknown): string {
  const cause = innermost(err);
  if (cause instanceof ApplicationFailure && cause.type) return cause.type;
  return cause instanceof Error ? cause.name : 'Error';
}
