import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { WORKFLOW_TYPE } from '../../src/shared';
import type { agentWorkflow } from '../../src/workflows';
import { uniqueQueue } from '../support/temporal';
import { useTraceSuite, waitFor } from './trace-suite';

/** What a run's trace holds: its spans, their names and attributes, one trace across continue-as-new. */
const t = useTraceSuite();

test('a run with tools is one trace: invoke_agent, chat per model call, execute_tool per tool call (protobuf)', async () => {
  const telemetry = t.telemetryFor();
  const model = new ScriptedModel([
    toolUse(
      [
        { id: 'toolu_w', name: 'write_file', input: { path: 'notes.txt', content: 'secret plan\n' } },
        { id: 'toolu_g', name: 'glob', input: { pattern: '**/*.md' } },
      ],
      { usage: { inputTokens: 120, outputTokens: 30 } },
    ),
    text('Noted.', { usage: { inputTokens: 200, outputTokens: 7 } }),
  ]);
  const taskQueue = uniqueQueue('otel');
  const id = `otel-tools-${Date.now()}`;
  const w = await t.worker(telemetry, model, taskQueue);
  const result = await w.runUntil(async () => (await t.start(taskQueue, id)).result());
  expect(result.exitReason).toBe('completed');
  await t.flushed(telemetry);

  expect(t.receiver.traceEncodings.every((e) => e === 'protobuf')).toBe(true);
  expect(new Set(t.receiver.spans.map((s) => s.traceId)).size).toBe(1);
  expect(new Set(t.receiver.spans.map((s) => s.service))).toEqual(new Set(['otel-test']));

  const agent = t.one('invoke_agent durable-agent');
  expect(agent.attributes).toMatchObject({
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': 'durable-agent',
    'gen_ai.conversation.id': id,
    'gen_ai.request.model': 'scripted-test',
    'durable_agent.exit_reason': 'completed',
    'gen_ai.usage.input_tokens':
      result.usage.inputTokens + result.usage.cacheReadInputTokens + result.usage.cacheCreationInputTokens,
    'gen_ai.usage.output_tokens': result.usage.outputTokens,
  });
  expect(t.ancestry(agent)).toEqual(['RunWorkflow:agentWorkflow']);
  // Workflow spans carry the run's identity, not the whole WorkflowInfo (whose lastResult can hold an answer).
  expect(Object.keys(t.one('RunWorkflow:agentWorkflow').attributes).sort()).toEqual(
    ['attempt', 'namespace', 'runId', 'taskQueue', 'workflowId', 'workflowType'].sort(),
  );

  const chats = t.named('chat ');
  expect(chats.map((s) => s.name)).toEqual(['chat scripted-test', 'chat scripted-test']);
  const byFinish = (reason: string) =>
    chats.find((s) => (s.attributes['gen_ai.response.finish_reasons'] as string[])[0] === reason)!;
  expect(byFinish('tool_use').attributes).toMatchObject({
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': 'scripted-test',
    'gen_ai.usage.input_tokens': 120,
    'gen_ai.usage.output_tokens': 30,
    'gen_ai.conversation.id': id,
  });
  expect(byFinish('end_turn').attributes).toMatchObject({
    'gen_ai.usage.input_tokens': 200,
    'gen_ai.usage.output_tokens': 7,
  });

  const tools = t.named('execute_tool ').sort((a, b) => a.name.localeCompare(b.name));
  expect(tools.map((s) => [s.name, s.attributes['gen_ai.tool.name'], s.attributes['gen_ai.tool.call.id']])).toEqual([
    ['execute_tool glob', 'glob', 'toolu_g'],
    ['execute_tool write_file', 'write_file', 'toolu_w'],
  ]);
  for (const span of [...chats, ...tools]) {
    expect(t.ancestry(span)).toContain('invoke_agent durable-agent');
    // Content is opt-in: nothing of the prompt, the answer or the tool's input is on a span.
    expect(JSON.stringify(span.attributes)).not.toMatch(/secret plan|take notes|Noted\./);
  }

  await waitFor(
    () => t.receiver.metrics.has('gen_ai.client.token.usage'),
    () => telemetry.forceFlush(),
  );
  expect([...t.receiver.metrics.keys()]).toEqual(
    expect.arrayContaining([
      'gen_ai.client.token.usage',
      'gen_ai.client.operation.duration',
      'durable_agent.tool.duration',
    ]),
  );
  // Metrics go as protobuf too, like the traces (the default protocol).
  for (const encodings of t.receiver.metricEncodings.values()) expect([...encodings]).toEqual(['protobuf']);
});

test('with http/json and the content opt-in, spans carry the prompt, the answer and the tool calls', async () => {
  const telemetry = t.telemetryFor({ protocol: 'http/json', content: true });
  const model = new ScriptedModel([
    toolUse([{ id: 'toolu_r', name: 'write_file', input: { path: 'a.txt', content: 'alpha' } }]),
    text('All written.'),
  ]);
  const taskQueue = uniqueQueue('otel-json');
  const w = await t.worker(telemetry, model, taskQueue);
  await w.runUntil(async () => (await t.start(taskQueue, `otel-json-${Date.now()}`)).result());
  await t.flushed(telemetry);

  expect(t.receiver.traceEncodings.length).toBeGreaterThan(0);
  expect(t.receiver.traceEncodings.every((e) => e === 'json')).toBe(true);
  const chats = t.named('chat ');
  expect(chats.some((s) => String(s.attributes['gen_ai.input.messages']).includes('take notes'))).toBe(true);
  expect(chats.some((s) => String(s.attributes['gen_ai.output.messages']).includes('All written.'))).toBe(true);
  const tool = t.one('execute_tool write_file');
  expect(JSON.parse(String(tool.attributes['gen_ai.tool.call.arguments']))).toEqual({
    path: 'a.txt',
    content: 'alpha',
  });
  expect(String(tool.attributes['gen_ai.tool.call.result'])).toMatch(/a\.txt/);
  // Metrics follow the protocol when no metrics protocol of their own is given.
  await waitFor(
    () => t.receiver.metrics.has('durable_agent.tool.duration'),
    () => telemetry.forceFlush(),
  );
  for (const encodings of t.receiver.metricEncodings.values()) expect([...encodings]).toEqual(['json']);
});

test('a run that continues as new stays one trace: each execution an invoke_agent span under the previous one', async () => {
  const telemetry = t.telemetryFor();
  const turns = 8;
  const model = new ScriptedModel([
    ...Array.from({ length: turns }, (_, i) =>
      toolUse([{ id: `toolu_${i}`, name: 'write_file', input: { path: `f${i}.txt`, content: `${i}` } }]),
    ),
    text('all written'),
  ]);
  const taskQueue = uniqueQueue('otel-can');
  const id = `otel-can-${Date.now()}`;
  const w = await t.worker(telemetry, model, taskQueue);
  const result = await w.runUntil(async () => {
    const handle = await t.env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
      taskQueue,
      workflowId: id,
      args: [
        { prompt: 'write files', model: 'scripted-test', workspace: t.workspace, continueAsNewAfter: { events: 50 } },
      ],
    });
    await handle.result();
    return t.env.client.workflow.getHandle<typeof agentWorkflow>(id).result();
  });
  expect(result).toMatchObject({ exitReason: 'completed', iterations: turns + 1 });
  await waitFor(
    () => t.named('invoke_agent').some((s) => s.attributes['durable_agent.exit_reason'] === 'completed'),
    () => telemetry.forceFlush(),
  );
  await telemetry.forceFlush();

  const executions = t.named('RunWorkflow:agentWorkflow');
  expect(executions.length).toBeGreaterThanOrEqual(2);
  expect(new Set(t.receiver.spans.map((s) => s.traceId)).size).toBe(1);
  const agents = t.named('invoke_agent');
  expect(agents).toHaveLength(executions.length);
  expect(agents.filter((s) => s.attributes['durable_agent.continued_as_new'] === true)).toHaveLength(
    executions.length - 1,
  );
  expect(new Set(agents.map((s) => s.attributes['durable_agent.run_id'])).size).toBe(executions.length);
  expect(t.named('ContinueAsNew:agentWorkflow')).toHaveLength(executions.length - 1);
  // One root: every later execution hangs under the previous one's ContinueAsNew span.
  expect(t.receiver.spans.filter((s) => !s.parentSpanId).map((s) => s.name)).toEqual(['RunWorkflow:agentWorkflow']);
  for (const span of t.receiver.spans) t.ancestry(span);
  expect(t.named('execute_tool write_file')).toHaveLength(turns);
}, 120_000);

test('the closing summary at the iteration limit is a chat span too, marked as the summary', async () => {
  const telemetry = t.telemetryFor();
  const model = new ScriptedModel([
    toolUse([{ id: 'toolu_s', name: 'glob', input: { pattern: '*' } }], {
      usage: { inputTokens: 50, outputTokens: 9 },
    }),
    text('Summary: looked around.', { usage: { inputTokens: 80, outputTokens: 6 } }),
  ]);
  const taskQueue = uniqueQueue('otel-summary');
  const w = await t.worker(telemetry, model, taskQueue);
  const result = await w.runUntil(async () => {
    const handle = await t.env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
      taskQueue,
      workflowId: `otel-summary-${Date.now()}`,
      args: [{ prompt: 'look', model: 'scripted-test', workspace: t.workspace, maxIterations: 1 }],
    });
    return handle.result();
  });
  expect(result.exitReason).toBe('max_iterations');
  await t.flushed(telemetry);

  const chats = t.named('chat ');
  expect(
    chats.map((s) => [s.attributes['durable_agent.call'], s.attributes['gen_ai.usage.output_tokens']]).sort(),
  ).toEqual([
    ['summary', 6],
    ['turn', 9],
  ]);
  expect(t.ancestry(chats.find((s) => s.attributes['durable_agent.call'] === 'summary')!)).toContain(
    'invoke_agent durable-agent',
  );
  expect(t.one('invoke_agent durable-agent').attributes['durable_agent.exit_reason']).toBe('max_iterations');
});
