/**
 * The text tool protocol (`toolProtocol: 'xml'`) on the Anthropic provider end to end: the real
 * workflow and worker, the real Anthropic SDK against the fake Messages API, the real tools. The
 * "model" writes `<tool_code>` blocks in its text; results come back as `<observation>` messages.
 */
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { AnthropicProvider } from '../../src/models/anthropic';
import { interruptSignal, type AgentRunInput } from '../../src/shared';
import { message, startFakeAnthropic, type FakeAnthropic } from '../support/fake-anthropic';
import { linesOf, requestsPerTurn, startAgentRun, waitUntil } from '../support/fault-helpers';
import { runResult, waitForState } from '../support/run-helpers';
import { testAddress, testBundlePath, uniqueQueue, withWorker } from '../support/temporal';
import { WorkerFleet } from '../support/worker-harness';
import { useWorkflowSuite } from '../support/workflow-suite';

jest.setTimeout(90_000);
const { suite, start } = useWorkflowSuite('anthropic-xml');

let fake: FakeAnthropic;
beforeEach(async () => {
  fake = await startFakeAnthropic();
});
afterEach(async () => {
  await fleet.stopAll();
  await fake?.close();
});

const MODEL = 'claude-sonnet-5-5';
const xml = (input: Partial<AgentRunInput> = {}): Partial<AgentRunInput> => ({
  model: MODEL,
  toolProtocol: 'xml',
  ...input,
});
const call = (name: string, params: unknown) =>
  `<tool_code>\n<name>${name}</name>\n<parameters>${JSON.stringify(params)}</parameters>\n</tool_code>`;
const provider = (options: { heartbeatIntervalMs?: number } = {}) =>
  new AnthropicProvider({ baseURL: fake.url, apiKey: 'sk-test', ...options });
/** The text of the last user message of request i. */
const lastUser = (i: number): string => {
  const content = fake.requests[i]!.body.messages.at(-1).content as unknown;
  return typeof content === 'string' ? content : JSON.stringify(content);
};

test('no tools in the request, definitions in the system prompt; a call runs, a malformed one is explained; <final_answer> ends', async () => {
  fake.enqueue(
    message(`Writing it.\n${call('write_file', { path: 'a.txt', content: 'hello' })}`),
    message('<tool_code><name>read_file</name><parameters>{"path": a.txt}</parameters></tool_code>'),
    message(call('no_such_tool', {})),
    message('<final_answer>a.txt says hello.</final_answer>'),
  );
  const result = await withWorker(suite.env, { model: provider() }, async (tq) => runResult(await start(tq, xml())));
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'a.txt says hello.', iterations: 4 });
  expect(await fs.readFile(path.join(suite.workspace, 'a.txt'), 'utf8')).toBe('hello');
  expect(fake.requests).toHaveLength(4);
  for (const request of fake.requests) {
    expect(request.body.tools).toBeUndefined();
    expect(JSON.stringify(request.body.system)).toContain('<tool_definitions>');
    expect(JSON.stringify(request.body.system)).toContain('<name>write_file</name>');
  }
  expect(lastUser(1)).toMatch(/^<observation tool="write_file">/);
  expect(lastUser(2)).toMatch(/^<observation status="error">/);
  expect(lastUser(2)).toContain('not valid JSON');
  expect(lastUser(2)).toContain('<tool_code>');
  expect(lastUser(3)).toContain("Tool 'no_such_tool' not found");
});

test('a tool call cut at max_tokens and continued is run (or the model is told), never returned as the answer', async () => {
  const marker = path.join(suite.workspace, 'cut.txt');
  const whole = call('write_file', { path: 'cut.txt', content: 'x' });
  const cutAt = whole.indexOf('<parameters>') + 5;
  fake.enqueue(
    message(whole.slice(0, cutAt), { stop_reason: 'max_tokens' }),
    message(whole.slice(cutAt)),
    message('<final_answer>written</final_answer>'),
  );
  const result = await withWorker(suite.env, { model: provider() }, async (tq) => runResult(await start(tq, xml())));
  expect(result.finalText).not.toContain('<tool_code>');
  expect(result.finalText).not.toContain('</parameters>');
  // Either the continued call ran, or the model was told it could not and answered after.
  if (!existsSync(marker)) expect(fake.requests.length).toBeGreaterThanOrEqual(3);
});

test('an interrupted run ends with the model’s last words, not its last tool call', async () => {
  await fs.writeFile(path.join(suite.workspace, 'a.txt'), 'hello');
  fake.enqueue(message(`I will read a.txt first.\n${call('read_file', { path: 'a.txt' })}`), {
    kind: 'hang',
    afterEvents: 3,
    message: { content: [{ type: 'text', text: 'never' }] },
  });
  await withWorker(suite.env, { model: provider({ heartbeatIntervalMs: 200 }) }, async (tq) => {
    const handle = await start(tq, xml({ timeouts: { modelHeartbeatSeconds: 2 } }));
    while (fake.requests.length < 2) await new Promise((r) => setTimeout(r, 50));
    await handle.signal(interruptSignal, { reason: 'stop now' });
    const result = await runResult(handle);
    expect(result).toMatchObject({ exitReason: 'interrupted', finalText: 'I will read a.txt first.' });
  });
});

test('an interrupt during the streamed call stops it promptly', async () => {
  fake.enqueue({ kind: 'hang', afterEvents: 3, message: { content: [{ type: 'text', text: '<tool_code><name>' }] } });
  await withWorker(suite.env, { model: provider({ heartbeatIntervalMs: 200 }) }, async (tq) => {
    const handle = await start(tq, xml({ timeouts: { modelHeartbeatSeconds: 2 } }));
    await waitForState(handle, (s) => s.status === 'running');
    while (fake.requests.length === 0) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 500));
    const sentAt = Date.now();
    await handle.signal(interruptSignal, { reason: 'stop now' });
    const result = await runResult(handle);
    expect(result.exitReason).toBe('interrupted');
    expect(Date.now() - sentAt).toBeLessThan(5_000);
    const deadline = Date.now() + 5_000;
    while (fake.requests[0]!.closedAt === undefined && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(fake.requests[0]!.closedAt! - sentAt).toBeLessThan(5_000);
  });
});

/** Total payload bytes recorded in a run's history (activity inputs, results, local-activity markers). */
async function historyBytes(workflowId: string): Promise<number> {
  const history = await suite.env.client.workflow.getHandle(workflowId).fetchHistory();
  const size = (p: { data?: Uint8Array | null }[] | null | undefined) =>
    (p ?? []).reduce((s, x) => s + (x.data?.length ?? 0), 0);
  return (history.events ?? []).reduce(
    (sum, e) =>
      sum +
      size(e.activityTaskScheduledEventAttributes?.input?.payloads) +
      size(e.activityTaskCompletedEventAttributes?.result?.payloads) +
      Object.values(e.markerRecordedEventAttributes?.details ?? {}).reduce((m, d) => m + size(d.payloads), 0),
    0,
  );
}

test('history stays linear: 20 turns record about 4x what 5 turns do, not 16x', async () => {
  const line = 'y'.repeat(99);
  await fs.writeFile(path.join(suite.workspace, 'blob.txt'), `${line}\n`.repeat(40));
  const bytesFor = async (turns: number) => {
    for (let i = 0; i < turns; i++) fake.enqueue(message(call('read_file', { path: 'blob.txt' })));
    fake.enqueue(message('<final_answer>done</final_answer>'));
    const handle = await withWorker(suite.env, { model: provider() }, async (tq) => {
      const h = await start(tq, xml());
      expect((await runResult(h)).iterations).toBe(turns + 1);
      return h;
    });
    return historyBytes(handle.workflowId);
  };
  const five = await bytesFor(5);
  const twenty = await bytesFor(20);
  // Per turn: the read's 4 KB result and its observation in the next delta. Resending the
  // conversation would make this ratio ~16 (n²); linear growth with fixed run costs keeps it under 4.5.
  expect(twenty / five).toBeLessThan(4.5);
  expect(twenty / five).toBeGreaterThan(2);
});

let queue = '';
const fleet = new WorkerFleet(() => ({
  TEMPORAL_ADDRESS: testAddress(),
  TEMPORAL_TASK_QUEUE: queue,
  DA_TEST_WORKFLOW_BUNDLE: testBundlePath(),
  ANTHROPIC_BASE_URL: fake.url,
  ANTHROPIC_API_KEY: 'sk-test',
}));

test('SIGKILL during a streamed call: a new worker retries that call; the completed bash call is not run again', async () => {
  queue = uniqueQueue('anthropic-xml-kill');
  fake.enqueue(
    message(call('bash', { command: 'echo ran >> effects.log' })),
    // ~6 s of pings, then slow events: the kill lands mid-stream.
    message('<final_answer>The command ran, all is well.</final_answer>', { eventDelayMs: 300, pings: 20 }),
    message('<final_answer>The command ran.</final_answer>'),
  );
  const first = fleet.start();
  await first.ready();
  const handle = await startAgentRun(
    suite.env.client,
    queue,
    {
      prompt: 'run it',
      workspace: suite.workspace,
      ...xml({ timeouts: { modelHeartbeatSeconds: 2, toolHeartbeatSeconds: 2 } }),
    } as AgentRunInput,
    'anthropic-xml-kill',
  );
  await waitUntil(() => fake.requests.length >= 2, 'the second model call');
  await new Promise((r) => setTimeout(r, 1000));
  first.kill('SIGKILL');
  await first.exited;
  const second = fleet.start();
  await second.ready();
  const result = await runResult(handle);
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'The command ran.', iterations: 2 });
  expect(requestsPerTurn(fake.requests)).toEqual([1, 2]);
  expect(await linesOf(path.join(suite.workspace, 'effects.log'))).toEqual(['ran']);
});
