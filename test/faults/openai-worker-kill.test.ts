/**
 * worker-kill.test.ts for `openai:` models: a worker process killed with SIGKILL during a streamed
 * Chat Completions call, and during a mutating tool, and another one started. The run resumes by
 * itself; no completed model call is made again; a mutating tool never runs twice. The workers are
 * the real `durable-agent worker` command, reaching the fake server through OPENAI_BASE_URL.
 */
import * as path from 'node:path';
import type { AgentRunInput } from '../../src/shared';
import { answer, startFakeOpenAI, toolCalls, type FakeOpenAI, type RecordedChatRequest } from '../support/fake-openai';
import { countOf, linesOf, startAgentRun, waitUntil } from '../support/fault-helpers';
import {
  connectTestEnv,
  tempWorkspace,
  testAddress,
  testBundlePath,
  uniqueQueue,
  type TestEnv,
} from '../support/temporal';
import { WorkerFleet } from '../support/worker-harness';

jest.setTimeout(90_000);

let env: TestEnv;
let fake: FakeOpenAI;
let workspace: string;
let taskQueue: string;
const fleet = new WorkerFleet(() => ({
  TEMPORAL_ADDRESS: testAddress(),
  TEMPORAL_TASK_QUEUE: taskQueue,
  DA_TEST_WORKFLOW_BUNDLE: testBundlePath(),
  OPENAI_BASE_URL: fake.url,
  OPENAI_API_KEY: 'sk-test',
}));

beforeAll(async () => {
  env = await connectTestEnv();
});
afterAll(async () => {
  await env?.close();
});
beforeEach(async () => {
  fake = await startFakeOpenAI();
  workspace = await tempWorkspace('openai-kill');
  taskQueue = uniqueQueue('openai-kill');
});
afterEach(async () => {
  await fleet.stopAll();
  await fake?.close();
});

/** Short heartbeat timeouts so a lost worker's call is retried within seconds. */
function input(prompt: string, toolProtocol: 'native' | 'xml' = 'native'): AgentRunInput {
  return {
    prompt,
    model: 'openai:fake-model',
    workspace,
    toolProtocol,
    timeouts: { modelHeartbeatSeconds: 2, toolHeartbeatSeconds: 2 },
  };
}

/** A turn that runs `command` with bash: a native tool call, or a `<tool_code>` block in the text. */
function bashTurn(protocol: 'native' | 'xml', id: string, command: string) {
  return protocol === 'native'
    ? toolCalls([{ id, name: 'bash', arguments: { command } }])
    : answer(`<tool_code><name>bash</name><parameters>${JSON.stringify({ command })}</parameters></tool_code>`);
}

const effects = () => linesOf(path.join(workspace, 'effects.log'));

/** Turn k of a run with one tool call per turn sends 2k-1 messages besides the system prompt. */
function requestsPerTurn(requests: RecordedChatRequest[]): number[] {
  const counts: number[] = [];
  for (const r of requests) {
    const turn = ((r.body.messages as { role: string }[]).filter((m) => m.role !== 'system').length + 1) / 2;
    counts[turn - 1] = (counts[turn - 1] ?? 0) + 1;
  }
  return Array.from(counts, (c) => c ?? 0);
}

function toolMessagesIn(request: RecordedChatRequest | undefined): { tool_call_id: string; content: string }[] {
  return ((request?.body.messages ?? []) as { role: string; tool_call_id: string; content: string }[]).filter(
    (m) => m.role === 'tool',
  );
}

test.each(['native', 'xml'] as const)(
  'SIGKILL during a streamed model call (%s tool protocol): a restarted worker retries that call; completed calls are not made again',
  async (protocol) => {
    fake.enqueue(
      bashTurn(protocol, 'call_k1', 'echo ran >> effects.log'),
      // The second call streams one character every 200 ms (~6 s), so the kill lands in the middle of it.
      answer('The command ran, all is well.', { pieceChars: 1, chunkDelayMs: 200 }),
      answer('The command ran.'),
    );
    const first = fleet.start();
    await first.ready();
    const handle = await startAgentRun(env.client, taskQueue, input('run the command', protocol), 'openai-kill');
    await waitUntil(() => fake.requests.length >= 2, 'the second model call');
    await new Promise((r) => setTimeout(r, 1000));
    first.kill('SIGKILL');
    const killed = await first.exited;

    const second = fleet.start();
    await second.ready();
    const result = await handle.result();

    expect(result).toMatchObject({ exitReason: 'completed', finalText: 'The command ran.', iterations: 2 });
    // Turn 1 once; turn 2 twice: the stream cut off by the kill, then its retry.
    expect(requestsPerTurn(fake.requests)).toEqual([1, 2]);
    const cutOff = fake.requests[1]!;
    expect(cutOff.closedAt).toBeDefined();
    // The stream had seconds left: the kill, not the stream's end, closed it.
    expect(cutOff.closedAt! - killed.at).toBeLessThan(3_000);
    expect(await effects()).toEqual(['ran']);
  },
);

test('SIGKILL during a mutating bash command: it is not run again; the model is told the outcome is unknown', async () => {
  const command = 'echo start >> effects.log; sleep 4; echo end >> effects.log';
  fake.enqueue(
    toolCalls([{ id: 'call_k2', name: 'bash', arguments: { command } }]),
    answer('I checked effects.log before going on.'),
  );
  const first = fleet.start();
  await first.ready();
  const handle = await startAgentRun(env.client, taskQueue, input('append to the log'), 'openai-kill');
  await waitUntil(async () => (await effects()).includes('start'), 'the command to start');
  first.kill('SIGKILL');
  await first.exited;

  const second = fleet.start();
  await second.ready();
  const result = await handle.result();

  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'I checked effects.log before going on.' });
  expect(requestsPerTurn(fake.requests)).toEqual([1, 1]);
  const [toolMessage] = toolMessagesIn(fake.requests[1]);
  expect(toolMessage?.tool_call_id).toBe('call_k2');
  // The is_error result reaches the server as an `Error: …` tool message.
  expect(toolMessage?.content).toMatch(/^Error: /);
  expect(toolMessage?.content).toMatch(/outcome of this bash call is unknown/);
  expect(toolMessage?.content).toMatch(/NOT run again/);
  expect(countOf(await effects(), 'start')).toBe(1);
});
