import type { WorkflowExecutionDescription } from '@temporalio/client';
import { indexedFigures, reconcileStatus } from '../cli/run-status';
import { ZERO_USAGE, costOf, textOf, type ContentBlock, type Message, type Usage } from '../shared';
import type { RunRecord } from './run-reader';
import { forkOrigin } from './run-list';
import type { CallTiming, RunView, ToolCallView, TurnBlock, TurnView } from './run-view';

/** A tool result names its spill file like this (src/tools/spill.ts writes it there). */
const SPILL_PATH = /\.durable-agent\/spill\/[\w.-]+/;

/** The page's view of a run: its description (status, attributes) and one pass over its history. */
export function buildRunView(description: WorkflowExecutionDescription, record: RunRecord, webUi: string): RunView {
  const t = record.transcript;
  const figures = indexedFigures(description);
  const results = toolResults(t.messages);
  const subagents = new Map(record.subagents.filter((s) => s.toolUseId).map((s) => [s.toolUseId!, s]));
  const locals = [...record.localToolTimings];
  const sent = [...record.sentMessages];
  const checkpoints = new Map(record.checkpoints.map((c) => [c.turn, c]));
  const turns: TurnView[] = record.answers.map((answer, index) => {
    const iteration = index + 1;
    const usage = asUsage(answer.usage);
    const blocks: TurnBlock[] = [];
    let lastEnd = answer.timing.endedAt ?? null;
    for (const raw of answer.content as ContentBlock[]) {
      const block = raw as {
        type?: unknown;
        text?: unknown;
        thinking?: unknown;
        id?: unknown;
        name?: unknown;
        input?: unknown;
      };
      if (block.type === 'text' && typeof block.text === 'string') blocks.push({ type: 'text', text: block.text });
      else if (block.type === 'thinking' && typeof block.thinking === 'string')
        blocks.push({ type: 'reasoning', text: block.thinking });
      else if (block.type === 'redacted_thinking') blocks.push({ type: 'reasoning', text: '(redacted thinking)' });
      else if (block.type === 'tool_use' && typeof block.id === 'string') {
        const result = results.get(block.id);
        const timing = record.toolTimings.get(block.id) ?? (result ? locals.shift() : undefined);
        const spill = result ? SPILL_PATH.exec(result.content)?.[0] : undefined;
        const child = subagents.get(block.id);
        const call: ToolCallView = {
          id: block.id,
          name: typeof block.name === 'string' ? block.name : '?',
          input: block.input,
          ...(result ? { result } : {}),
          ...(spill ? { spill } : {}),
          ...(timing ? { timing } : {}),
          ...(child
            ? {
                subagent: {
                  workflowId: child.workflowId,
                  ...(child.agent ? { agent: child.agent } : {}),
                  ...(child.description ? { description: child.description } : {}),
                },
              }
            : {}),
        };
        if (timing?.endedAt && (lastEnd === null || timing.endedAt > lastEnd)) lastEnd = timing.endedAt;
        blocks.push({ type: 'tool', call });
      } else blocks.push({ type: 'other', kind: typeof block.type === 'string' ? block.type : '?' });
    }
    const start = answer.timing.scheduledAt;
    const userMessages: string[] = [];
    while (sent.length && sent[0]!.at <= start) userMessages.push(sent.shift()!.message);
    const checkpoint = checkpoints.get(iteration);
    return {
      iteration,
      model: answer.model,
      stopReason: answer.stopReason,
      usage,
      costUsd: answer.model ? costOf(answer.model, usage) : null,
      timing: answer.timing,
      durationMs: lastEnd !== null ? lastEnd - start : null,
      blocks,
      userMessages,
      ...(checkpoint ? { checkpoint } : {}),
    };
  });
  const first = t.messages[0];
  const result = asObject(t.result);
  const open = description.status.name === 'RUNNING';
  return {
    workflowId: description.workflowId,
    runId: description.runId,
    executionStatus: description.status.name,
    status: reconcileStatus(description.status.name, figures.stored),
    open,
    model: figures.model ?? turns[0]?.model ?? null,
    startTime: description.startTime.toISOString(),
    closeTime: description.closeTime ? description.closeTime.toISOString() : null,
    parentWorkflowId: description.parentExecution?.workflowId ?? null,
    forkedFrom: forkOrigin(description.memo?.['forkedFrom']),
    prompt: first ? messageText(first) : '',
    system: t.system,
    contextSources: t.contextSources ?? [],
    turns,
    errors: record.failures.map((timing: CallTiming) => ({
      at: timing.endedAt ?? timing.scheduledAt,
      message: timing.failure ?? 'failed',
      timing,
    })),
    closingSummary: t.closingSummary ? textOf(t.closingSummary.content) : null,
    compactions: t.compactions.length,
    result: result
      ? {
          ...(typeof result['exitReason'] === 'string' ? { exitReason: result['exitReason'] } : {}),
          ...(typeof result['finalText'] === 'string' ? { finalText: result['finalText'] } : {}),
          ...('output' in result ? { output: result['output'] } : {}),
          ...(asObject(result['error']) ? { error: result['error'] as { type?: string; message?: string } } : {}),
          ...(typeof result['iterations'] === 'number' ? { iterations: result['iterations'] } : {}),
          ...(typeof result['costUsd'] === 'number' || result['costUsd'] === null
            ? { costUsd: result['costUsd'] as number | null }
            : {}),
          ...(asObject(result['usage']) ? { usage: asUsage(result['usage']) } : {}),
        }
      : null,
    reason: t.reason ?? null,
    webUi,
    checkpoints: record.checkpoints.map(({ turn, id, filesChanged, bytes }) => ({ turn, id, filesChanged, bytes })),
  };
}

/** Every tool result in the conversation, by tool use id (the last one wins: a result is never sent twice). */
function toolResults(messages: Message[]): Map<string, { content: string; isError: boolean }> {
  const out = new Map<string, { content: string; isError: boolean }>();
  for (const message of messages) {
    if (message.role !== 'user' || typeof message.content === 'string') continue;
    for (const block of message.content) {
      const b = block as { type?: unknown; tool_use_id?: unknown; content?: unknown; is_error?: unknown };
      if (b.type !== 'tool_result' || typeof b.tool_use_id !== 'string') continue;
      out.set(b.tool_use_id, { content: resultText(b.content), isError: b.is_error === true });
    }
  }
  return out;
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((c) =>
      c !== null && typeof c === 'object' && typeof (c as { text?: unknown }).text === 'string'
        ? (c as { text: string }).text
        : '',
    )
    .join('\n');
}

function messageText(message: Message): string {
  return typeof message.content === 'string' ? message.content : textOf(message.content);
}

function asUsage(value: unknown): Usage {
  const u = asObject(value);
  const n = (k: keyof Usage) => (typeof u?.[k] === 'number' ? (u[k] as number) : 0);
  return u
    ? {
        inputTokens: n('inputTokens'),
        outputTokens: n('outputTokens'),
        cacheReadInputTokens: n('cacheReadInputTokens'),
        cacheCreationInputTokens: n('cacheCreationInputTokens'),
      }
    : { ...ZERO_USAGE };
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
