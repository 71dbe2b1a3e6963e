import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  isCancellation,
  log,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type { createActivities } from '../activities';
import {
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
  costOf,
  eventsQuery,
  hasKnownPrice,
  interruptSignal,
  parseRunInput,
  stateQuery,
  textOf,
} from '../shared';
import type {
  AgentRunInput,
  AgentRunResult,
  AgentRunState,
  ExitReason,
  Message,
  ModelResponse,
  RunEvent,
  RunEventInput,
  RunStatus,
  ToolResultBlock,
  ToolUseBlock,
  Usage,
} from '../shared';
import { CONTINUE_AFTER_MAX_TOKENS, classifyTurn, truncatedToolCallError } from './turn-outcome';
import { describeToolCall, modelCallSummary } from './summaries';

type Activities = ReturnType<typeof createActivities>;

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

/** Thrown inside the loop to end it with a given exit reason; never escapes the workflow. */
class LoopExit {
  constructor(
    readonly exitReason: ExitReason,
    readonly finalText: string,
    readonly error?: { type: string; message: string },
  ) {}
}

/**
 * The durable agent loop (DESIGN.md §2): model call → tool calls → tool results → model call …
 * Every model and tool call is an activity; the conversation lives in workflow state and is
 * rebuilt on replay from the activity results that history already holds.
 */
export async function agentWorkflow(rawInput: AgentRunInput): Promise<AgentRunResult> {
  const parsed = parseRunInput(rawInput);
  if (!parsed.ok) throw ApplicationFailure.nonRetryable(parsed.error, ErrorTypes.InvalidInput);
  const input = parsed.input;
  const model = input.model ?? DEFAULT_ANTHROPIC_MODEL;
  const maxIterations = input.maxIterations ?? DEFAULTS.maxIterations;
  const maxTokens = input.maxTokens ?? DEFAULTS.maxTokens;
  // Undefined means every tool the worker has; a list restricts the run to those tools.
  const toolNames = input.tools;
  if (input.maxBudgetUsd !== undefined && !hasKnownPrice(model)) {
    throw ApplicationFailure.nonRetryable(
      `Invalid run input: maxBudgetUsd cannot be enforced because the price of model '${model}' is unknown; ` +
        'use a model from the price table or drop maxBudgetUsd',
      ErrorTypes.InvalidInput,
    );
  }

  const messages: Message[] = [{ role: 'user', content: input.prompt }];
  let status: RunStatus = 'running';
  let iteration = 0;
  let usage: Usage = { ...ZERO_USAGE };
  // null once any call's cost is unknown: a partial sum would under-report.
  let costUsd: number | null = 0;
  let lastStopReason: ModelResponse['stopReason'] | undefined;
  let lastAssistantText = '';
  const activeTools = new Map<string, string>();
  let interrupt: { reason?: string } | undefined;

  const events: RunEvent[] = [];
  let seq = 0;
  let droppedEvents = false;
  const emit = (event: RunEventInput): void => {
    events.push({ ...event, seq: ++seq } as RunEvent);
    if (events.length > MAX_RETAINED_EVENTS) {
      events.splice(0, events.length - MAX_RETAINED_EVENTS);
      droppedEvents = true;
    }
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
  setHandler(eventsQuery, ({ after }) => {
    const page = events.filter((e) => e.seq > after);
    return {
      events: page,
      cursor: seq,
      truncated: droppedEvents && (events[0]?.seq ?? 0) > after + 1,
    };
  });
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
    return callCost;
  };

  const runOneTool = async (toolUse: ToolUseBlock): Promise<ToolResultBlock> => {
    if (toolNames && !toolNames.includes(toolUse.name)) {
      // Only tools enabled for this run may run, whatever the model asks for.
      const content = `Error: Tool '${toolUse.name}' not found. Available tools: ${toolNames.join(', ')}.`;
      emit({ kind: 'tool_call_finished', toolUseId: toolUse.id, name: toolUse.name, isError: true, preview: content });
      return { type: 'tool_result', tool_use_id: toolUse.id, content, is_error: true };
    }
    activeTools.set(toolUse.id, toolUse.name);
    emit({ kind: 'tool_call_started', toolUseId: toolUse.id, name: toolUse.name, input: toolUse.input });
    let content: string;
    let isError: boolean;
    try {
      const result = await toolActivities.runTool.executeWithOptions(
        { summary: describeToolCall(toolUse.name, toolUse.input) },
        [{ toolUseId: toolUse.id, name: toolUse.name, input: toolUse.input, workspace: input.workspace }],
      );
      ({ content, isError } = result);
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
    return { type: 'tool_result', tool_use_id: toolUse.id, content, ...(isError ? { is_error: true } : {}) };
  };

  const summarize = async (): Promise<string> => {
    try {
      const { text, response } = await modelActivities.summarizeRun.executeWithOptions(
        { summary: `summary (max iterations) · ${model}` },
        [
          {
            model,
            system: input.systemPrompt,
            messages,
            toolNames,
            maxTokens,
            instruction: SUMMARY_INSTRUCTION,
          },
        ],
      );
      account(response);
      return text.trim() || SUMMARY_FALLBACK_TEXT;
    } catch (err) {
      if (isCancellation(err)) throw err;
      log.warn('summary call failed; ending with the fallback text', { error: failureMessage(err) });
      emit({ kind: 'notice', message: `summary call failed: ${failureMessage(err)}` });
      return SUMMARY_FALLBACK_TEXT;
    }
  };

  const loop = async (): Promise<LoopExit> => {
    for (;;) {
      if (interrupt) return interrupted(interrupt, lastAssistantText);
      if (input.maxBudgetUsd !== undefined && costUsd !== null && costUsd >= input.maxBudgetUsd) {
        return new LoopExit('max_budget', lastAssistantText);
      }
      if (iteration >= maxIterations) {
        return new LoopExit('max_iterations', await summarize());
      }

      emit({ kind: 'model_call_started', iteration: iteration + 1 });
      let response: ModelResponse;
      try {
        response = await modelActivities.callModel.executeWithOptions(
          { summary: modelCallSummary(model, iteration + 1) },
          [{ model, system: input.systemPrompt, messages, toolNames, maxTokens, toolChoice: { type: 'auto' } }],
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
      messages.push({ role: 'assistant', content: response.content });
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

      const outcome = classifyTurn(response);
      switch (outcome.kind) {
        case 'tools': {
          const results = await Promise.all(outcome.toolUses.map(runOneTool));
          messages.push({ role: 'user', content: results });
          break;
        }
        case 'final':
          return new LoopExit('completed', outcome.text);
        case 'refused':
          return new LoopExit('refused', outcome.text);
        case 'truncated':
          if (outcome.toolUses.length > 0) {
            messages.push({
              role: 'user',
              content: outcome.toolUses.map((t): ToolResultBlock => ({
                type: 'tool_result',
                tool_use_id: t.id,
                content: truncatedToolCallError(maxTokens),
                is_error: true,
              })),
            });
          } else {
            messages.push({ role: 'user', content: CONTINUE_AFTER_MAX_TOKENS });
          }
          emit({ kind: 'notice', message: `response reached max_tokens (${maxTokens}); asking the model to continue` });
          break;
        case 'paused':
          // The assistant turn is last in the conversation; the next call lets the model resume it.
          break;
        case 'context_exceeded':
          return new LoopExit('failed', outcome.text || lastAssistantText, {
            type: 'DurableAgent.ContextWindowExceeded',
            message: `the conversation no longer fits the context window of ${model}`,
          });
        default: {
          const unhandled: never = outcome;
          throw new Error(`unhandled turn outcome ${JSON.stringify(unhandled)}`);
        }
      }
    }
  };

  emit({ kind: 'run_started', model, maxIterations, prompt: input.prompt });
  let exit: LoopExit;
  try {
    exit = await loopScope.run(loop);
  } catch (err) {
    if (!(interrupt && isCancellation(err))) throw err;
    exit = interrupted(interrupt, lastAssistantText);
  }

  status = exit.exitReason;
  emit({ kind: 'run_finished', exitReason: exit.exitReason, finalText: exit.finalText });
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

/** The innermost cause's message: an ActivityFailure wraps the ApplicationFailure that says what happened. */
function failureMessage(err: unknown): string {
  let current: unknown = err;
  while (current instanceof ActivityFailure && current.cause) current = current.cause;
  if (current instanceof Error) return current.message || current.name;
  return String(current);
}

function failureType(err: unknown): string {
  let current: unknown = err;
  while (current instanceof ActivityFailure && current.cause) current = current.cause;
  if (current instanceof ApplicationFailure && current.type) return current.type;
  if (current instanceof Error) return current.name;
  return 'Error';
}
