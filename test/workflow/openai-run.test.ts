/**
 * The OpenAI-compatible provider end to end: the real workflow and a real worker, the real `openai`
 * SDK, the real built-in tools, and a local fake Chat Completions server in place of the model.
 */
import { z } from 'zod';
import { OpenAIProvider } from '../../src/models/openai';
import { interruptSignal, WORKFLOW_TYPE, type AgentRunInput } from '../../src/shared';
import { createDefaultRegistry } from '../../src/tools';
import type { agentWorkflow } from '../../src/workflows';
import { answer, startFakeOpenAI, toolCalls } from '../support/fake-openai';
import { runResult, waitForState } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';
import { baseActivityName } from '../../src/shared/activity-names';

const { suite } = useWorkflowSuite('openai-run', startFakeOpenAI);

let counter = 0;
function start(
  taskQueue: string,
  input: Partial<AgentRunInput> = {},
  workflowId = `openai-${Date.now()}-${++counter}`,
) {
  return suite.env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
    taskQueue,
    workflowId,
    args: [{ prompt: 'do the work', model: 'openai:fake-model', workspace: suite.workspace, ...input }],
  });
}

const provider = () => new OpenAIProvider({ baseURL: suite.fake.url, heartbeatIntervalMs: 200 }, {});

/** The messages of a recorded request after the system prompt. */
function conversation(i: number): { role: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string }[] {
  return (suite.fake.requests[i]!.body.messages as { role: string }[]).filter((m) => m.role !== 'system');
}

test('a multi-step run with parallel tool calls and a malformed call completes; results go back as tool messages', async () => {
  suite.fake.enqueue(
    toolCalls([{ id: 'call_w', name: 'write_file', arguments: { path: 'notes.txt', content: 'alpha\n' } }]),
    toolCalls([
      { id: 'call_r', name: 'read_file', arguments: { path: 'notes.txt' } },
      { id: 'call_g', name: 'glob', arguments: { pattern: '*.txt' } },
    ]),
    toolCalls([{ id: 'call_bad', name: 'read_file', arguments: '{"path": notes.txt}' }]),
    answer('notes.txt says alpha.', { usage: { prompt_tokens: 500, completion_tokens: 9, cached_tokens: 400 } }),
  );
  const result = await withWorker(suite.env, { model: provider() }, async (tq) => runResult(await start(tq)));

  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'notes.txt says alpha.', iterations: 4 });
  // A model with no known price: the cost is unknown, not 0.
  expect(result.costUsd).toBeNull();
  expect(result.usage).toMatchObject({ cacheReadInputTokens: 400 });
  expect(suite.fake.requests).toHaveLength(4);
  expect(suite.fake.requests.every((r) => r.body.model === 'fake-model' && r.body.stream === true)).toBe(true);
  expect(suite.fake.requests[0]!.body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(
    expect.arrayContaining(['bash', 'read_file', 'write_file', 'glob']),
  );

  // Turn 2 sees the write's result as a tool message right after the assistant's tool call.
  const second = conversation(1);
  expect(second.slice(-2)).toMatchObject([
    { role: 'assistant', tool_calls: [{ id: 'call_w', function: { name: 'write_file' } }] },
    { role: 'tool', tool_call_id: 'call_w' },
  ]);
  // Turn 3: both parallel results, in order, the file's content among them.
  const third = conversation(2);
  const results = third.filter((m) => m.role === 'tool').slice(-2);
  expect(results.map((m) => m.tool_call_id)).toEqual(['call_r', 'call_g']);
  expect(String(results[0]!.content)).toContain('alpha');
  expect(String(results[1]!.content)).toContain('notes.txt');
  // Turn 4: the call with invalid JSON got a readable error, and the raw arguments went back as written.
  const fourth = conversation(3);
  const bad = fourth.find((m) => m.tool_call_id === 'call_bad')!;
  expect(String(bad.content)).toMatch(/^Error: .*not valid JSON/);
  expect(fourth).toContainEqual(
    expect.objectContaining({
      role: 'assistant',
      tool_calls: [
        { id: 'call_bad', type: 'function', function: { name: 'read_file', arguments: '{"path": notes.txt}' } },
      ],
    }),
  );
});

test('history grows linearly: model call inputs stay small while the conversation grows', async () => {
  const n = 10;
  const bytes = 8192;
  const tools = createDefaultRegistry();
  tools.register({
    name: 'blob',
    description: 'returns a block of text',
    inputSchema: z.strictObject({ tag: z.string() }),
    sideEffect: 'read_only',
    execute: async ({ tag }) => `${tag}:`.padEnd(bytes, 'x'),
  });
  for (let i = 1; i <= n; i++)
    suite.fake.enqueue(toolCalls([{ id: `call_${i}`, name: 'blob', arguments: { tag: `out${i}` } }]));
  suite.fake.enqueue(answer('all done'));
  const workflowId = `openai-linear-${Date.now()}`;
  const result = await withWorker(suite.env, { model: provider(), deps: { tools } }, async (tq) =>
    runResult(await start(tq, {}, workflowId)),
  );
  expect(result).toMatchObject({ exitReason: 'completed', iterations: n + 1 });
  // The server saw the whole conversation every time.
  expect(JSON.stringify(suite.fake.requests[n]!.body.messages)).toContain(`out${n}:xxxx`);
  expect(JSON.stringify(suite.fake.requests[n]!.body.messages)).toContain('out1:xxxx');

  const history = await suite.env.client.workflow.getHandle(workflowId).fetchHistory();
  const size = (p: { data?: Uint8Array | null }[] | null | undefined) =>
    (p ?? []).reduce((s, x) => s + (x.data?.length ?? 0), 0);
  const events = history.events ?? [];
  const modelInputs = events
    .filter((e) =>
      // A run's first call also starts it (firstModelCall).
      ['firstModelCall', 'callModel'].includes(
        baseActivityName(e.activityTaskScheduledEventAttributes?.activityType?.name ?? ''),
      ),
    )
    .map((e) => size(e.activityTaskScheduledEventAttributes?.input?.payloads));
  expect(modelInputs).toHaveLength(n + 1);
  // The first call carries the system prompt and the prompt; each later one only its delta, never a tool output.
  const [first, ...later] = modelInputs;
  expect(first).toBeLessThan(bytes);
  for (const input of later) expect(input).toBeLessThan(1024);
  const total = events.reduce(
    (sum, e) =>
      sum +
      size(e.activityTaskScheduledEventAttributes?.input?.payloads) +
      size(e.activityTaskCompletedEventAttributes?.result?.payloads),
    0,
  );
  // Each 8 KB output once, plus small change; resending the conversation would record ~n²/2 of them.
  expect(total).toBeGreaterThan(n * bytes);
  expect(total).toBeLessThan(n * bytes * 1.25);
});

test('an interrupt during a streaming call cancels the stream promptly and ends the run interrupted', async () => {
  suite.fake.enqueue({ kind: 'hang', afterChunks: 3, answer: { text: 'I am thinking about this for a long time' } });
  const result = await withWorker(suite.env, { model: provider() }, async (tq) => {
    const handle = await start(tq, { timeouts: { modelHeartbeatSeconds: 2 } });
    await waitForState(handle, (s) => s.status === 'running');
    while (suite.fake.requests.length === 0) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 500));
    const sentAt = Date.now();
    await handle.signal(interruptSignal, { reason: 'stop now' });
    const res = await runResult(handle);
    expect(Date.now() - sentAt).toBeLessThan(5_000);
    // The activity learns of the cancellation on its next heartbeat and aborts the HTTP request.
    const deadline = Date.now() + 5_000;
    while (suite.fake.requests[0]!.closedAt === undefined && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(suite.fake.requests[0]!.closedAt).toBeDefined();
    expect(suite.fake.requests[0]!.closedAt! - sentAt).toBeLessThan(5_000);
    return res;
  });
  expect(result.exitReason).toBe('interrupted');
  expect(suite.fake.requests).toHaveLength(1);
});

test('compaction and the closing summary work on openai: models: tool_choice none with the tools still defined', async () => {
  suite.fake.enqueue(
    // Turn 1 reports a prompt near the 10,000-token window: the conversation is compacted before turn 2.
    toolCalls([{ id: 'call_1', name: 'glob', arguments: { pattern: '*' } }], {
      usage: { prompt_tokens: 9_000, completion_tokens: 10 },
    }),
    answer('Summary of the work so far.', { usage: { prompt_tokens: 900, completion_tokens: 10 } }),
    toolCalls([{ id: 'call_2', name: 'glob', arguments: { pattern: '*' } }], {
      usage: { prompt_tokens: 1_000, completion_tokens: 10 },
    }),
    // maxIterations 2 reached: the closing summary.
    answer('Closing summary.', { usage: { prompt_tokens: 1_100, completion_tokens: 10 } }),
  );
  const result = await withWorker(suite.env, { model: provider() }, async (tq) =>
    runResult(await start(tq, { contextWindowTokens: 10_000, maxIterations: 2 })),
  );
  expect(result).toMatchObject({ exitReason: 'max_iterations', finalText: 'Closing summary.', iterations: 2 });
  expect(suite.fake.requests).toHaveLength(4);
  const closing = [suite.fake.requests[1]!, suite.fake.requests[3]!];
  for (const r of closing) {
    expect(r.body.tool_choice).toBe('none');
    expect(r.body.tools.length).toBeGreaterThan(0);
  }
  expect(suite.fake.requests[0]!.body.tool_choice).toBe('auto');
  expect(suite.fake.requests[2]!.body.tool_choice).toBe('auto');
  // Turn 2 went on from the compacted conversation, which carries the summary.
  expect(JSON.stringify(suite.fake.requests[2]!.body.messages)).toContain('Summary of the work so far.');
});
