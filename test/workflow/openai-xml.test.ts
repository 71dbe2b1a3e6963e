/**
 * The text tool protocol (`toolProtocol: 'xml'`) on an `openai:` model end to end: the real workflow
 * and worker, the real `openai` SDK and built-in tools, and a fake Chat Completions server whose
 * "model" has no native tool calling and writes `<tool_code>` blocks in its text instead.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { OpenAIProvider } from '../../src/models/openai';
import { interruptSignal, WORKFLOW_TYPE, type AgentRunInput } from '../../src/shared';
import type { agentWorkflow } from '../../src/workflows';
import { answer, startFakeOpenAI } from '../support/fake-openai';
import { runResult, waitForState } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';
import { baseActivityName } from '../../src/shared/activity-names';

const { suite } = useWorkflowSuite('openai-xml', startFakeOpenAI);

const call = (name: string, params: unknown) =>
  `<tool_code>\n<name>${name}</name>\n<parameters>${JSON.stringify(params)}</parameters>\n</tool_code>`;

let counter = 0;
function start(
  taskQueue: string,
  input: Partial<AgentRunInput> = {},
  workflowId = `openai-xml-${Date.now()}-${++counter}`,
) {
  return suite.env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
    taskQueue,
    workflowId,
    args: [
      { prompt: 'do the work', model: 'openai:fake-model', workspace: suite.workspace, toolProtocol: 'xml', ...input },
    ],
  });
}

function lastUserText(i: number): string {
  const messages = suite.fake.requests[i]!.body.messages as { role: string; content: string }[];
  return messages[messages.length - 1]!.content;
}

test('tools are described in the system prompt, one <tool_code> call per turn runs, results come back as observations', async () => {
  suite.fake.enqueue(
    answer(`I will write the file.\n${call('write_file', { path: 'a.txt', content: 'hello' })}`),
    answer('```xml\n<tool_code><name>read_file</name><parameters>{"path": a.txt}</parameters></tool_code>\n```'),
    answer(call('read_file', { path: 'a.txt' })),
    answer('<final_answer>The file says hello.</final_answer>'),
  );
  const model = new OpenAIProvider({ baseURL: suite.fake.url }, {});
  const result = await withWorker(suite.env, { model }, async (tq) => runResult(await start(tq)));

  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'The file says hello.', iterations: 4 });
  expect(suite.fake.requests).toHaveLength(4);
  for (const request of suite.fake.requests) {
    // No native tool calling: no tools in the API request, the definitions in the system prompt.
    expect(request.body.tools).toBeUndefined();
    const system = request.body.messages[0];
    expect(system.role).toBe('system');
    expect(system.content).toContain('<tool_definitions>');
    expect(system.content).toContain('<name>write_file</name>');
  }
  expect(lastUserText(1)).toMatch(/^<observation tool="write_file">/);
  // The malformed call (bad JSON) was not run; the model was told why and shown the format.
  expect(lastUserText(2)).toMatch(/^<observation status="error">/);
  expect(lastUserText(2)).toContain('not valid JSON');
  expect(lastUserText(2)).toContain('<tool_code>');
  expect(lastUserText(3)).toMatch(/^<observation tool="read_file">/);
  expect(lastUserText(3)).toContain('hello');
});

test('history grows linearly under the text protocol: each output is recorded about twice, never resent', async () => {
  const n = 10;
  const bytes = 8192;
  // read_file of a file of ~8 KB per turn (only built-in tools can be named under the text protocol).
  const line = 'x'.repeat(99);
  for (let i = 1; i <= n; i++) {
    await fs.writeFile(path.join(suite.workspace, `blob${i}.txt`), `out${i}:${line}\n`.repeat(bytes / 100));
    suite.fake.enqueue(answer(call('read_file', { path: `blob${i}.txt` })));
  }
  suite.fake.enqueue(answer('<final_answer>all done</final_answer>'));
  const workflowId = `openai-xml-linear-${Date.now()}`;
  const model = new OpenAIProvider({ baseURL: suite.fake.url }, {});
  const result = await withWorker(suite.env, { model }, async (tq) => runResult(await start(tq, {}, workflowId)));
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'all done', iterations: n + 1 });
  const last = JSON.stringify(suite.fake.requests[n]!.body.messages);
  for (const i of [1, n]) expect(last).toContain(`out${i}:xxxx`);

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
  // Each later call carries only its delta: the previous answer and one observation (the tool's
  // output travels in the observation text, not by reference as native tool results do). It does not grow.
  const later = modelInputs.slice(1);
  for (const input of later) expect(input).toBeLessThan(bytes + 2048);
  expect(Math.max(...later) - Math.min(...later)).toBeLessThan(1024);
  const total = events.reduce(
    (sum, e) =>
      sum +
      size(e.activityTaskScheduledEventAttributes?.input?.payloads) +
      size(e.activityTaskCompletedEventAttributes?.result?.payloads) +
      // Read-only tools run as local activities: their results are recorded in markers.
      Object.values(e.markerRecordedEventAttributes?.details ?? {}).reduce((m, d) => m + size(d.payloads), 0),
    0,
  );
  // Each output twice (the read's result, then the observation in the next call's delta), plus line
  // numbers and small change; resending the conversation would record ~n²/2 of them (450 KB here).
  expect(total).toBeGreaterThan(2 * n * bytes);
  expect(total).toBeLessThan(2 * n * bytes * 1.4);
});

test('an interrupt under the text protocol cancels the streaming call promptly', async () => {
  suite.fake.enqueue({ kind: 'hang', afterChunks: 3, answer: { text: '<tool_code><name>bash</name>' } });
  const model = new OpenAIProvider({ baseURL: suite.fake.url, heartbeatIntervalMs: 200 }, {});
  const result = await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, { timeouts: { modelHeartbeatSeconds: 2 } });
    await waitForState(handle, (s) => s.status === 'running');
    while (suite.fake.requests.length === 0) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 500));
    const sentAt = Date.now();
    await handle.signal(interruptSignal, { reason: 'stop now' });
    const res = await runResult(handle);
    expect(Date.now() - sentAt).toBeLessThan(5_000);
    const deadline = Date.now() + 5_000;
    while (suite.fake.requests[0]!.closedAt === undefined && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(suite.fake.requests[0]!.closedAt! - sentAt).toBeLessThan(5_000);
    return res;
  });
  expect(result.exitReason).toBe('interrupted');
});
