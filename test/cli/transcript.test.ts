import { WorkflowNotFoundError } from '@temporalio/client';
import { z } from 'zod';
import { transcriptCommand, type Transcript } from '../../src/cli/transcript';
import { ApplicationFailure } from '@temporalio/common';
import { ScriptedModel, delayed, fail, text, toolUse, type ScriptStep } from '../../src/models/scripted';
import { ErrorTypes } from '../../src/shared/constants';
import {
  SUMMARY_FALLBACK_TEXT,
  SUMMARY_INSTRUCTION,
  endSessionUpdate,
  interruptSignal,
  sendMessageUpdate,
  type Message,
  type ModelRequest,
} from '../../src/shared';
import { createDefaultRegistry } from '../../src/tools';
import { waitForState } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

/**
 * `transcript`: the run's conversation rebuilt from event history alone. Every run here is read
 * after its worker has stopped (outside `withWorker`), so no worker answers anything.
 */
const { suite, start } = useWorkflowSuite('transcript');

async function transcriptOf(id: string): Promise<{ json: Transcript; markdown: string }> {
  let json = '';
  let markdown = '';
  expect(await transcriptCommand(suite.env.client, id, { json: true }, (c) => (json += c))).toBe(0);
  expect(await transcriptCommand(suite.env.client, id, { json: false }, (c) => (markdown += c))).toBe(0);
  return { json: JSON.parse(json) as Transcript, markdown };
}

const isClosing = (r: ModelRequest) => r.toolChoice?.type === 'none';

/** The conversation after the model's last call: what it was sent plus what it answered. */
function lastConversation(model: ScriptedModel, answer: Message): Message[] {
  const calls = model.requests.filter((r) => !isClosing(r));
  return [...calls[calls.length - 1]!.messages, answer];
}

/**
 * The closing call (the request at `index`, checked to be one) and the conversation it was sent
 * without the instruction the run added to its last user turn; `instruction` is that block.
 */
function closingCall(model: ScriptedModel, index: number): { messages: Message[]; instruction: unknown } {
  const closing = model.requests[index]!;
  expect(isClosing(closing)).toBe(true);
  const messages = structuredClone(closing.messages);
  const instruction = (messages.at(-1)!.content as unknown[]).pop();
  return { messages, instruction };
}

/** A read-only tool with zero latency that returns `lines` numbered lines. */
function registryWithLines() {
  const tools = createDefaultRegistry();
  tools.register({
    name: 'lines',
    description: 'returns numbered lines',
    inputSchema: z.object({ count: z.number(), tag: z.string() }),
    sideEffect: 'read_only',
    execute: async ({ count, tag }) => Array.from({ length: count }, (_, i) => `${tag} line ${i + 1}`).join('\n'),
  });
  return tools;
}

test('a finished run with tool calls reads back, with no worker up, as exactly the conversation the model saw', async () => {
  const model = new ScriptedModel([
    toolUse([{ id: 'toolu_w', name: 'write_file', input: { path: 'notes.md', content: 'alpha\nbeta\n' } }], {
      text: 'I will write the notes first.',
    }),
    toolUse([
      { id: 'toolu_r', name: 'read_file', input: { path: 'notes.md' } },
      { id: 'toolu_l', name: 'lines', input: { count: 40, tag: 'long' } },
      { id: 'toolu_x', name: 'no_such_tool', input: {} },
    ]),
    text('The notes say alpha and beta.'),
  ]);
  const handle = await withWorker(suite.env, { model, deps: { tools: registryWithLines() } }, async (tq) => {
    const h = await start(tq, { prompt: 'write and read the notes' });
    await h.result();
    return h;
  });

  const { json, markdown } = await transcriptOf(handle.workflowId);
  const answer: Message = { role: 'assistant', content: [{ type: 'text', text: 'The notes say alpha and beta.' }] };
  expect(json.messages).toEqual(lastConversation(model, answer));
  // Every earlier call saw a prefix of it.
  for (const request of model.requests)
    expect(json.messages.slice(0, request.messages.length)).toEqual(request.messages);
  expect(json).toMatchObject({ workflowId: handle.workflowId, status: 'completed', compactions: [] });
  expect(json.executions).toHaveLength(1);
  // The system prompt shown is the one the model was sent.
  expect(json.system).toBe(model.requests[0]!.system ?? null);
  expect(json.result).toMatchObject({ exitReason: 'completed', finalText: 'The notes say alpha and beta.' });
  // Local (read_file, lines) and remote (write_file) tool results are all there, the failed call as an error.
  const results = JSON.stringify(json.messages[4]);
  expect(results).toContain('1\\talpha\\n     2\\tbeta');
  expect(results).toContain('long line 40');
  expect(results).toContain('"is_error":true');

  expect(markdown).toContain('### 1 · user\n\nwrite and read the notes');
  expect(markdown).toContain('**Tool call** `write_file` · `toolu_w`');
  expect(markdown).toContain('"path": "notes.md"');
  expect(markdown).toContain('### 5 · user (tool results)');
  expect(markdown).toContain('**Result** of `toolu_x` · **error**');
  // The 40-line output is folded, the short ones are not.
  expect(markdown).toMatch(
    /<details><summary>output · 40 lines<\/summary>\n\n```\nlong line 1\n[^]*long line 40\n```\n\n<\/details>/,
  );
  expect(markdown.slice(markdown.indexOf('## Conversation')).match(/<details>/g)).toHaveLength(1);
});

test('a run that continued as new reads back whole, across its executions', async () => {
  const n = 10;
  const steps: ScriptStep[] = [];
  for (let i = 1; i <= n; i++)
    steps.push(toolUse([{ id: `toolu_${i}`, name: 'lines', input: { count: 3, tag: `t${i}` } }]));
  steps.push(text('all done'));
  const model = new ScriptedModel(steps);
  const handle = await withWorker(suite.env, { model, deps: { tools: registryWithLines() } }, async (tq) => {
    const h = await start(tq, { continueAsNewAfter: { events: 50 } });
    await h.result();
    return h;
  });

  const { json, markdown } = await transcriptOf(handle.workflowId);
  expect(json.executions.length).toBeGreaterThanOrEqual(2);
  expect(json.executions[0]!.runId).toBe(handle.firstExecutionRunId);
  expect(json.executions.slice(0, -1).every((e) => e.status === 'continued_as_new')).toBe(true);
  expect(json.executions.at(-1)!.status).toBe('completed');
  expect(json.messages).toEqual(
    lastConversation(model, { role: 'assistant', content: [{ type: 'text', text: 'all done' }] }),
  );
  expect(json.messages).toHaveLength(2 * n + 2);
  expect(json.compactions).toEqual([]);
  expect(markdown).toContain(`execution 2 (run \`${json.executions[1]!.runId}\`)`);
});

test('a compaction is marked where the summary replaced the earlier turns, and both sides are kept', async () => {
  const model = new ScriptedModel([
    toolUse([{ id: 'toolu_1', name: 'lines', input: { count: 2, tag: 'first' } }], { usage: { inputTokens: 300 } }),
    // 900 of 1000 tokens: past the compaction threshold.
    toolUse([{ id: 'toolu_2', name: 'lines', input: { count: 2, tag: 'second' } }], { usage: { inputTokens: 900 } }),
    text('SUMMARY: read two blocks of lines.'),
    text('finished after compaction'),
  ]);
  const handle = await withWorker(suite.env, { model, deps: { tools: registryWithLines() } }, async (tq) => {
    const h = await start(tq, { contextWindowTokens: 1000 });
    await h.result();
    return h;
  });

  const { json, markdown } = await transcriptOf(handle.workflowId);
  const [before, compaction, after] = [model.requests[1]!, model.requests[2]!, model.requests[3]!];
  expect(isClosing(compaction)).toBe(true);
  // Before: the whole first conversation (the compaction call saw it, plus its instruction, which is not kept).
  expect(json.messages.slice(0, 5)).toEqual([...before.messages, json.messages[3], json.messages[4]]);
  expect(json.messages.slice(0, 4)).toEqual(before.messages.concat(json.messages[3]!));
  expect(json.compactions).toEqual([
    { atIndex: 5, replacedMessages: 5, kind: 'summary', summary: 'SUMMARY: read two blocks of lines.' },
  ]);
  // After: exactly what the model saw next, and its answer.
  expect(json.messages.slice(5)).toEqual([
    ...after.messages,
    { role: 'assistant', content: [{ type: 'text', text: 'finished after compaction' }] },
  ]);
  expect(markdown).toContain('**Compaction**: the 5 messages above were replaced by a summary');
  expect(markdown.indexOf('**Compaction**')).toBeLessThan(markdown.indexOf('### 6 · user'));
  expect(markdown.indexOf('**Compaction**')).toBeGreaterThan(markdown.indexOf('### 5 · user'));
});

test('a long run that both compacts and continues as new: every call saw a window of the transcript', async () => {
  const turns = 24;
  let turn = 0;
  const step: ScriptStep = (request) => {
    if (isClosing(request)) return text(`Summary after ${turn} turns.`);
    turn++;
    return turn > turns
      ? text('done')
      : toolUse([{ id: `toolu_${turn}`, name: 'lines', input: { count: 60, tag: `t${turn}` } }]);
  };
  const model = new ScriptedModel(Array.from({ length: 2 * turns }, () => step));
  const handle = await withWorker(suite.env, { model, deps: { tools: registryWithLines() } }, async (tq) => {
    const h = await start(tq, { compactAtBytes: 10_000, continueAsNewAfter: { events: 60 } });
    await h.result();
    return h;
  });
  const { json } = await transcriptOf(handle.workflowId);
  expect(json.executions.length).toBeGreaterThanOrEqual(2);
  expect(json.compactions.length).toBeGreaterThanOrEqual(2);
  expect(
    json.compactions.every((c) => c.kind === 'summary' && /^Summary after \d+ turns\.$/.test(c.summary ?? '')),
  ).toBe(true);
  const calls = model.requests.filter((r) => !isClosing(r));
  const at = json.compactions.at(-1)!.atIndex;
  expect(json.messages.slice(at)).toEqual([
    ...calls.at(-1)!.messages,
    { role: 'assistant', content: [{ type: 'text', text: 'done' }] },
  ]);
  // Each call's conversation starts where a compaction (or the run) started and runs on from there.
  const starts = [0, ...json.compactions.map((c) => c.atIndex)];
  for (const request of calls) {
    expect(
      starts.some(
        (s) => JSON.stringify(json.messages.slice(s, s + request.messages.length)) === JSON.stringify(request.messages),
      ),
    ).toBe(true);
  }
  // Every turn's output is there whole (the latest results before a compaction are also quoted in the compacted turn).
  const all = JSON.stringify(json.messages);
  for (let i = 1; i <= turns; i++) expect(all).toContain(`t${i} line 1\\nt${i} line 2`);
  for (let i = 1; i <= turns; i++) expect(all).toContain(`t${i} line 60`);
});

/** The local activities a run's history recorded, by their markers' (encoded) details. */
async function markerDetails(handle: { fetchHistory(): Promise<{ events?: unknown[] | null }> }): Promise<string[]> {
  const events = ((await handle.fetchHistory()).events ?? []) as Array<{
    markerRecordedEventAttributes?: {
      details?: Record<string, { payloads?: Array<{ data?: Uint8Array | null }> | null }> | null;
    } | null;
  }>;
  return events.flatMap((e) =>
    Object.values(e.markerRecordedEventAttributes?.details ?? {}).flatMap((p) =>
      (p.payloads ?? []).map((payload) => Buffer.from(payload.data ?? []).toString('utf8')),
    ),
  );
}

test('a run at its iteration limit ends with the closing summary, kept apart from the conversation', async () => {
  const model = new ScriptedModel([
    toolUse([{ id: 'toolu_1', name: 'lines', input: { count: 1, tag: 'one' } }]),
    toolUse([{ id: 'toolu_2', name: 'lines', input: { count: 1, tag: 'two' } }]),
    text('Closing: read one and two.'),
  ]);
  const handle = await withWorker(suite.env, { model, deps: { tools: registryWithLines() } }, async (tq) => {
    const h = await start(tq, { maxIterations: 2 });
    await h.result();
    return h;
  });
  const { json, markdown } = await transcriptOf(handle.workflowId);
  // The closing call saw the whole conversation, its instruction added to the last user turn; the
  // transcript keeps the conversation without the instruction, and the tool results of the last turn.
  const { messages: withoutInstruction, instruction } = closingCall(model, 2);
  expect(instruction).toEqual({ type: 'text', text: SUMMARY_INSTRUCTION });
  expect(json.messages).toEqual(withoutInstruction);
  expect(JSON.stringify(json.messages.at(-1))).toContain('two line 1');
  // They come from the closing call's recorded input: the run recorded them no second time. The
  // `keepFinalMessages` local activity would have left a marker; this run (run start goes with its
  // first model call, its tool is a regular activity) has none at all.
  const markers = await markerDetails(handle);
  expect(markers).toEqual([]);
  expect(json.closingSummary).toEqual({
    atIndex: json.messages.length,
    content: [{ type: 'text', text: 'Closing: read one and two.' }],
  });
  expect(json.result).toMatchObject({ exitReason: 'max_iterations' });
  expect(markdown).toMatch(
    /### Closing summary \(iteration limit; not part of the conversation\)\n\nClosing: read one and two\./,
  );
});

test('a run whose closing summary failed still reads back whole: its end records the last tool results', async () => {
  const model = new ScriptedModel([
    toolUse([{ id: 'toolu_1', name: 'lines', input: { count: 1, tag: 'one' } }]),
    toolUse([{ id: 'toolu_2', name: 'lines', input: { count: 1, tag: 'two' } }]),
    fail(ApplicationFailure.nonRetryable('the provider said no', ErrorTypes.BadRequest)),
  ]);
  const handle = await withWorker(suite.env, { model, deps: { tools: registryWithLines() } }, async (tq) => {
    const h = await start(tq, { maxIterations: 2 });
    expect(await h.result()).toMatchObject({ exitReason: 'max_iterations', finalText: SUMMARY_FALLBACK_TEXT });
    return h;
  });
  const { json } = await transcriptOf(handle.workflowId);
  const { messages: withoutInstruction } = closingCall(model, 2);
  expect(json.messages).toEqual(withoutInstruction);
  expect(JSON.stringify(json.messages.at(-1))).toContain('two line 1');
  // No completed summary holds them: the run's end recorded them with keepFinalMessages.
  expect((await markerDetails(handle)).some((m) => m.includes('keepFinalMessages'))).toBe(true);
});

test('a session shows every message it was sent, in order', async () => {
  const model = new ScriptedModel([text('First.'), text('Second.')]);
  const handle = await withWorker(suite.env, { model }, async (tq) => {
    const h = await start(tq, { session: true, prompt: 'hello' });
    await waitForState(h, (s) => s.status === 'awaiting_input');
    await h.executeUpdate(sendMessageUpdate, { args: [{ message: 'and more' }] });
    await waitForState(h, (s) => s.status === 'awaiting_input' && s.iteration === 2);
    await h.executeUpdate(endSessionUpdate, { args: [{}] });
    await h.result();
    return h;
  });
  const { json } = await transcriptOf(handle.workflowId);
  expect(json.messages).toEqual([
    { role: 'user', content: 'hello' },
    { role: 'assistant', content: [{ type: 'text', text: 'First.' }] },
    ...model.requests[1]!.messages.slice(2),
    { role: 'assistant', content: [{ type: 'text', text: 'Second.' }] },
  ]);
  expect(JSON.stringify(json.messages[2])).toContain('and more');
});

test('a session whose message stopped at its iteration limit, then ended, reads back with the summary as its answer', async () => {
  const model = new ScriptedModel([
    toolUse([{ id: 'toolu_1', name: 'lines', input: { count: 1, tag: 'one' } }]),
    text('Summary: read one.'),
  ]);
  const handle = await withWorker(suite.env, { model, deps: { tools: registryWithLines() } }, async (tq) => {
    const h = await start(tq, { session: true, maxIterations: 1 });
    await waitForState(h, (s) => s.status === 'awaiting_input');
    await h.executeUpdate(endSessionUpdate, { args: [{}] });
    expect(await h.result()).toMatchObject({ exitReason: 'completed', finalText: 'Summary: read one.' });
    return h;
  });
  const { json } = await transcriptOf(handle.workflowId);
  const { messages: withoutInstruction } = closingCall(model, 1);
  // In a session the summary is the message's answer, so it is part of the conversation: the
  // summary's recorded input holds what came before it, and the run's end records the answer.
  expect(json.messages).toEqual([
    ...withoutInstruction,
    { role: 'assistant', content: [{ type: 'text', text: 'Summary: read one.' }] },
  ]);
  expect(JSON.stringify(json.messages)).toContain('one line 1');
  expect((await markerDetails(handle)).some((m) => m.includes('keepFinalMessages'))).toBe(true);
});

test('a running run shows what is recorded so far', async () => {
  const model = new ScriptedModel([
    toolUse([{ id: 'toolu_1', name: 'lines', input: { count: 2, tag: 'so far' } }]),
    delayed(60_000, text('never')),
  ]);
  await withWorker(suite.env, { model, deps: { tools: registryWithLines() } }, async (tq) => {
    const handle = await start(tq);
    await waitForState(handle, (s) => s.iteration === 1 && s.activeTools.length === 0 && model.requests.length === 2);
    const { json, markdown } = await transcriptOf(handle.workflowId);
    expect(json.status).toBe('running');
    expect(json.messages).toEqual(model.requests[1]!.messages);
    expect(markdown).toContain('so far line 2');
    await handle.signal(interruptSignal, { reason: 'test over' });
    await handle.result();
  });
});

test('a failed run shows its messages and why it failed', async () => {
  const model = new ScriptedModel([
    toolUse([{ id: 'toolu_1', name: 'lines', input: { count: 1, tag: 'before' } }]),
    fail(ApplicationFailure.nonRetryable('the provider said no', ErrorTypes.BadRequest)),
  ]);
  const handle = await withWorker(suite.env, { model, deps: { tools: registryWithLines() } }, async (tq) => {
    const h = await start(tq);
    await h.result().catch(() => undefined);
    return h;
  });
  const { json, markdown } = await transcriptOf(handle.workflowId);
  expect(json.status).toBe('failed');
  expect(json.reason).toContain('the provider said no');
  expect(json.messages).toEqual(model.requests[1]!.messages);
  expect(markdown).toContain('status: **failed**');
});

test('an unknown run id is refused with WorkflowNotFoundError', async () => {
  await expect(
    transcriptCommand(suite.env.client, `no-such-run-${Date.now()}`, { json: true }, () => {}),
  ).rejects.toBeInstanceOf(WorkflowNotFoundError);
});
