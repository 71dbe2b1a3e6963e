/**
 * A worker process killed with SIGKILL at the worst moments — during a model call, during a
 * mutating tool, during a read-only tool, and while the run waits between activities — and another
 * one started: the run resumes by itself and completes with the right answer. The fake Messages API
 * counts model requests per turn (no completed call is made again); tools leave a side-effect log
 * in the workspace (a mutating tool never runs twice).
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { approveTool } from '../../src/client';
import { stateQuery, type AgentRunInput } from '../../src/shared';
import { message } from '../support/fake-anthropic';
import {
  countOf,
  linesOf,
  requestsPerTurn,
  resultText,
  startAgentRun,
  toolResultsIn,
  waitUntil,
} from '../support/fault-helpers';
import { useFaultSuite } from '../support/fault-suite';

jest.setTimeout(90_000);

const suite = useFaultSuite('kill', { DA_TEST_SLOW_READ_TOOL: '1' });

/** Short heartbeat timeouts so a lost worker's call is retried within seconds, not 30-60 s. */
function input(prompt: string, extra: Partial<AgentRunInput> = {}): AgentRunInput {
  return {
    prompt,
    model: 'claude-sonnet-5-5',
    workspace: suite.workspace,
    timeouts: { modelHeartbeatSeconds: 2, toolHeartbeatSeconds: 2 },
    ...extra,
  };
}

const effects = () => linesOf(path.join(suite.workspace, 'effects.log'));

test('SIGKILL during a model call: a restarted worker retries that call and the run completes; completed calls are not made again', async () => {
  suite.fake.enqueue(
    message([{ type: 'tool_use', id: 'toolu_k1', name: 'bash', input: { command: 'echo ran >> effects.log' } }]),
    // The second call streams slowly (pings for ~6 s), so the kill lands in the middle of it.
    message('The command ran.', { pings: 30, eventDelayMs: 200 }),
    message('The command ran.'),
  );
  const first = suite.fleet.start();
  await first.ready();
  const handle = await startAgentRun(suite.env.client, suite.taskQueue, input('run the command'));
  await waitUntil(() => suite.fake.requests.length >= 2, 'the second model call');
  first.kill('SIGKILL');
  const killed = await first.exited;

  const second = suite.fleet.start();
  await second.ready();
  const result = await handle.result();

  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'The command ran.', iterations: 2 });
  // Turn 1 once; turn 2 twice: the call cut off by the kill, then its retry.
  expect(requestsPerTurn(suite.fake.requests)).toEqual([1, 2]);
  const cutOff = suite.fake.requests[1]!;
  expect(cutOff.closedAt).toBeDefined();
  // The stream had ~6 s left: the kill, not the stream's end, closed it.
  expect(cutOff.closedAt! - killed.at).toBeLessThan(3_000);
  expect(await effects()).toEqual(['ran']);
});

test('SIGKILL during a mutating bash command: it is not run again; the model is told the outcome is unknown', async () => {
  const command = 'echo start >> effects.log; sleep 4; echo end >> effects.log';
  suite.fake.enqueue(
    message([{ type: 'tool_use', id: 'toolu_k2', name: 'bash', input: { command } }]),
    message('I checked effects.log before going on.'),
  );
  const first = suite.fleet.start();
  await first.ready();
  const handle = await startAgentRun(suite.env.client, suite.taskQueue, input('append to the log'));
  await waitUntil(async () => (await effects()).includes('start'), 'the command to start');
  first.kill('SIGKILL');
  await first.exited;

  const second = suite.fleet.start();
  await second.ready();
  const result = await handle.result();

  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'I checked effects.log before going on.' });
  expect(requestsPerTurn(suite.fake.requests)).toEqual([1, 1]);
  const [toolResult] = toolResultsIn(suite.fake.requests[1]);
  expect(toolResult).toMatchObject({ tool_use_id: 'toolu_k2', is_error: true });
  expect(resultText(toolResult)).toMatch(/outcome of this bash call is unknown/);
  expect(resultText(toolResult)).toMatch(/NOT run again/);
  // It names what the earlier attempt may have touched, so the model can check.
  expect(resultText(toolResult)).toMatch(/Workspace files changed since .*: effects\.log \(\d+ bytes/);
  // The command started once. (Its `sleep` outlives the killed worker: bash runs in its own process group.)
  expect(countOf(await effects(), 'start')).toBe(1);
});

test('SIGKILL during a read-only tool: it simply runs again on the restarted worker', async () => {
  suite.fake.enqueue(
    message([{ type: 'tool_use', id: 'toolu_k3', name: 'wait_for_file', input: { path: 'answer.txt' } }]),
    message('The answer is 42.'),
  );
  const executions = () => linesOf(path.join(suite.workspace, '.executions'));
  const first = suite.fleet.start();
  await first.ready();
  const handle = await startAgentRun(suite.env.client, suite.taskQueue, input('wait for the answer'));
  await waitUntil(async () => (await executions()).length === 1, 'the tool to start');
  first.kill('SIGKILL');
  await first.exited;

  const second = suite.fleet.start();
  await second.ready();
  await waitUntil(async () => (await executions()).length === 2, 'the tool to run again', 20_000);
  await fs.writeFile(path.join(suite.workspace, 'answer.txt'), '42');
  const result = await handle.result();

  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'The answer is 42.' });
  expect(await executions()).toEqual([`wait_for_file ${first.pid}`, `wait_for_file ${second.pid}`]);
  const [toolResult] = toolResultsIn(suite.fake.requests[1]);
  expect(toolResult?.is_error).toBeFalsy();
  expect(resultText(toolResult)).toBe('42');
  expect(requestsPerTurn(suite.fake.requests)).toEqual([1, 1]);
});

test('SIGKILL while the run waits between activities: a new worker takes the run over from history', async () => {
  suite.fake.enqueue(
    message([{ type: 'tool_use', id: 'toolu_k4', name: 'bash', input: { command: 'echo approved >> effects.log' } }]),
    message('Done after approval.'),
  );
  const first = suite.fleet.start();
  await first.ready();
  // `ask` parks the run between the model call and the tool: no activity is running when the worker dies.
  const handle = await startAgentRun(
    suite.env.client,
    suite.taskQueue,
    input('needs approval', { permissions: { bash: 'ask' } }),
  );
  await waitUntil(
    async () => (await handle.query(stateQuery)).status === 'awaiting_approval',
    'the run to wait for approval',
  );
  first.kill('SIGKILL');
  await first.exited;

  const second = suite.fleet.start();
  await second.ready();
  await approveTool(handle, 'toolu_k4');
  const result = await handle.result();

  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'Done after approval.', iterations: 2 });
  expect(requestsPerTurn(suite.fake.requests)).toEqual([1, 1]);
  expect(await effects()).toEqual(['approved']);
});
