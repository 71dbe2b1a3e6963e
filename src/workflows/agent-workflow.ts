import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  log,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import type { Activities } from '../activities';
import {
  CACHE_MISS_ERROR_TYPE,
  COMPACT_AT_FRACTION,
  DEFAULT_ANTHROPIC_MODEL,
  DEFAULTS,
  ErrorTypes,
  MAX_RETAINED_EVENTS,
  MODEL_HEARTBEAT_TIMEOUT,
  MODEL_RETRY,
  MODEL_START_TO_CLOSE_TIMEOUT,
  SUMMARY_FALLBACK_TEXT,
  SUMMARY_INSTRUCTION,
  TOOL_HEARTBEAT_TIMEOUT,
  TOOL_RETRY,
  TOOL_START_TO_CLOSE_TIMEOUT,
  ZERO_USAGE,
  addUsage,
  contextWindowOf,
  costOf,
  costSearchAttribute,
  eventsQuery,
  hasKnownPrice,
  interruptSignal,
  iterationsSearchAttribute,
  modelSearchAttribute,
  parseRunInput,
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
  ExitReason,
  ModelResponse,
  RunContinuation,
  RunEvent,
  RunEventInput,
  RunStatus,
  ToolResultBlock,
  ToolUseBlock,
  Usage,
} from '../shared';
import { COMPACTION_INSTRUCTION, compactedConversation } from './compaction';
import { Conversation } from './conversation';
import { describeToolCall, modelCallSummary } from './summaries';
import { CONTINUE_AFTER_MAX_TOKENS, classifyTurn, truncatedToolCallError } from './turn-outcome';

const modelActivities = proxyActivities<Activities>({
  startToCloseTimeout: MODEL_START_TO_CLOSE_TIMEOUT,
  heartbeatTimeout: MODEL_HEARTBEAT_TIMEOUT,
  retry: MODEL_RETRY,
});

const toolActivities = proxyActivities<Activities>({
  startToCloseTimeout: TOOL_START_TO_CLOSE_TIMEOUT,
  heartbeatTimeout: TOOL_HEARTBEAT_TIMEOUT,
  retry: TOOL_RETRY,
});

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
  const model = input.model ?? DEFAULT_ANTHROPIC_MODEL;
  const maxIterations = input.maxIterations ?? DEFAULTS.maxIterations;
  const maxTokens = input.maxTokens ?? DEFAULTS.maxTokens;
  const contextWindow = input.contextWindowTokens ?? contextWindowOf(model);
  // Undefined means every tool the worker has; a list restricts the run to those tools.
  const toolNames = input.tools;
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
  let status: RunStatus = 'running';
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
  const index = (): void => {
    if (!indexed) return;
    const pairs: SearchAttributeUpdatePair[] = [
      { key: statusSearchAttribute, value: status },
      { key: iterationsSearchAttribute, value: iteration },
      { key: modelSearchAttribute, value: model },
    ];
    if (costUsd !== null) pairs.push({ key: costSearchAttribute, value: costUsd });
    upsertSearchAttributes(pairs);
  };

  /** The live line in the Web UI: not a command, so it costs no history and needs no patch. */
  const showDetails = (): void => {
    const cost = costUsd === null ? 'unknown' : `$${costUsd.toFixed(4)}`;
    const tokens = usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens;
    setCurrentDetails(
      [
        `**${status}** · iteration ${iteration} / ${maxIterations} · model ${model}`,
        `tokens ${tokens} in / ${usage.outputTokens} out · cost ${cost}` +
          (input.maxBudgetUsd !== undefined ? ` of $${input.maxBudgetUsd}` : ''),
        activeTools.size ? `running: ${[...activeTools.values()].join(', ')}` : 'running: -',
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
    status,
    iteration,
    maxIterations,
    usage,
    costUsd,
    ...(input.maxBudgetUsd !== undefined ? { maxBudgetUsd: input.maxBudgetUsd } : {}),
    ...(lastStopReason !== undefined ? { lastStopReason } : {}),
    activeTools: [...activeTools.values()],
    model,
  }));
  setHandler(eventsQuery, ({ after }) => ({
    events: events.filter((e) => e.seq > after),
    cursor: seq,
    truncated: droppedEvents && (events[0]?.seq ?? 0) > after + 1,
  }));
  setHandler(interruptSignal, ({ reason } = {}) => {
    if (interrupt || status !== 'running') return;
    interrupt = reason !== undefined ? { reason } : {};
    emit({ kind: 'notice', message: `interrupt requested${reason ? `: ${reason}` : ''}` });
    loopScope.cancel();
  });

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
  const withConversation = async <T>(call: (conversation: ConversationDelta) => Promise<T>): Promise<T> => {
    if (!conversation.hasSyncedPrefix) return call(conversation.delta(true));
    try {
      return await call(conversation.delta(false));
    } catch (err) {
      if (failureType(err) !== CACHE_MISS_ERROR_TYPE) throw err;
      log.info('conversation cache miss; resending the whole conversation', { error: failureMessage(err) });
      return call(conversation.delta(true));
    }
  };

  const runOneTool = async (toolUse: ToolUseBlock): Promise<ToolResultBlock> => {
    if (toolNames && !toolNames.includes(toolUse.name)) {
      // Only tools enabled for this run may run, whatever the model asks for.
      const content = `Error: Tool '${toolUse.name}' not found. Available tools: ${toolNames.join(', ')}.`;
      emit({ kind: 'tool_call_finished', toolUseId: toolUse.id, name: toolUse.name, isError: true, preview: content });
      return toolResultBlock(toolUse.id, content, true);
    }
    activeTools.set(toolUse.id, toolUse.name);
    emit({ kind: 'tool_call_started', toolUseId: toolUse.id, name: toolUse.name, input: toolUse.input });
    let content: string;
    let isError: boolean;
    try {
      ({ content, isError } = await toolActivities.runTool.executeWithOptions(
        { summary: describeToolCall(toolUse.name, toolUse.input) },
        [
          {
            toolUseId: toolUse.id,
            name: toolUse.name,
            input: toolUse.input,
            workspace: input.workspace,
            conversationId: conversation.id,
          },
        ],
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
    const { text, response } = await withConversation((delta) =>
      modelActivities.summarizeRun.executeWithOptions({ summary: `${label} · ${model}` }, [
        { model, system: input.systemPrompt, conversation: delta, toolNames, maxTokens, instruction },
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
      emit({ kind: 'notice', message: `compaction failed, continuing without it: ${failureMessage(err)}` });
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
    };
    return continueAsNew<typeof agentWorkflow>({ ...rawInput, resume: carried });
  };

  const loop = async (): Promise<LoopExit> => {
    for (;;) {
      if (interrupt) return interrupted(interrupt, lastAssistantText);
      if (shouldContinueAsNew()) await handOver();
      if (input.maxBudgetUsd !== undefined && costUsd !== null && costUsd >= input.maxBudgetUsd) {
        return new LoopExit('max_budget', lastAssistantText);
      }
      if (iteration >= maxIterations) return new LoopExit('max_iterations', await summarize());
      if (needsCompaction) await compact();

      emit({ kind: 'model_call_started', iteration: iteration + 1 });
      let response: ModelResponse;
      try {
        response = await withConversation((delta) =>
          modelActivities.callModel.executeWithOptions({ summary: modelCallSummary(model, iteration + 1) }, [
            {
              model,
              system: input.systemPrompt,
              conversation: delta,
              toolNames,
              maxTokens,
              toolChoice: { type: 'auto' },
            },
          ]),
        );
      } catch (err) {
        if (isCancellation(err)) throw err;
        emit({ kind: 'model_call_failed', iteration: iteration + 1, error: failureMessage(err) });
        return new LoopExit('failed', lastAssistantText, { type: failureType(err), message: failureMessage(err) });
      }
      iteration += 1;
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
        text,
      });
      index();

      const outcome = classifyTurn(response);
      switch (outcome.kind) {
        case 'tools': {
          const results = await Promise.all(outcome.toolUses.map(runOneTool));
          conversation.append({ role: 'user', content: results });
          break;
        }
        case 'final':
          return new LoopExit('completed', outcome.text);
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

  status = exit.exitReason;
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
