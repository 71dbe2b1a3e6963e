/**
 * SIGTERM to a worker process: it stops taking tasks, lets running activities finish within the
 * grace period (DURABLE_AGENT_SHUTDOWN_GRACE), cancels what is still running after it, and exits
 * within grace + a margin, leaving no process behind; the run goes on on another worker. The runs
 * here use the default heartbeat timeouts (60 s model, 30 s tool): nothing waits for them.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { message } from '../support/fake-anthropic';
import {
  linesOf,
  requestsPerTurn,
  resultText,
  startAgentRun,
  toolResultsIn,
  waitUntil,
} from '../support/fault-helpers';
import { useFaultSuite } from '../support/fault-suite';
import { liveProcessesWith, uniqueSleep } from '../support/processes';

jest.setTimeout(60_000);

/** How long after the grace period a worker may take to exit: below the 5 s hard stop (cancelled bash gets 1 s before SIGKILL). */
const EXIT_MARGIN_MS = 4000;

const suite = useFaultSuite('sigterm');

const run = (prompt: string) =>
  startAgentRun(
    suite.env.client,
    suite.taskQueue,
    { prompt, model: 'claude-sonnet-5-5', workspace: suite.workspace },
    'sigterm',
  );

test('SIGTERM mid-tool, past the grace period: the tool is stopped, the worker exits in time, nothing is left running, the run completes elsewhere', async () => {
  // A unique sleep length marks the command's processes (pids inside the sandbox mean nothing outside it).
  const sleep = uniqueSleep();
  const command = `echo start >> effects.log; sleep ${sleep}; echo end >> effects.log`;
  suite.fake.enqueue(
    message([{ type: 'tool_use', id: 'toolu_t1', name: 'bash', input: { command } }]),
    message('Noted that the command was stopped.'),
  );
  const graceMs = 2000;
  const first = suite.fleet.start({ DURABLE_AGENT_SHUTDOWN_GRACE: `${graceMs}ms` }, 'first');
  await first.ready();
  const handle = await run('run a long command');
  await waitUntil(
    async () => (await linesOf(path.join(suite.workspace, 'effects.log'))).includes('start'),
    'the command',
  );
  const second = suite.fleet.start({}, 'second');
  await second.ready();

  const signalled = Date.now();
  first.kill('SIGTERM');
  const exit = await first.exited;
  const result = await handle.result();

  expect(exit.code).toBe(0);
  expect(exit.at - signalled).toBeGreaterThanOrEqual(graceMs - 100);
  expect(exit.at - signalled).toBeLessThan(graceMs + EXIT_MARGIN_MS);
  expect(first.output()).toMatch(/SIGTERM: shutting down\. No new tasks are taken; running activities get up to 2s/);
  expect(first.output()).toMatch(/Worker stopped \d+(\.\d)?m?s after SIGTERM\./);
  // The command's whole process group was stopped with the worker: nothing outlives it.
  expect(liveProcessesWith(`sleep ${sleep}`)).toEqual([]);
  expect(await linesOf(path.join(suite.workspace, 'effects.log'))).toEqual(['start']);

  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'Noted that the command was stopped.' });
  expect(requestsPerTurn(suite.fake.requests)).toEqual([1, 1]);
  const [toolResult] = toolResultsIn(suite.fake.requests[1]);
  expect(toolResult?.is_error).toBe(true);
  // The stopped attempt is retried on the other worker, which does not run bash again blindly.
  expect(resultText(toolResult)).toMatch(/outcome of this bash call is unknown.*NOT run again/s);
});

test('SIGTERM during a read-only tool past the grace period: the call runs again on another worker and the model gets its real output', async () => {
  suite.fake.enqueue(
    message([{ type: 'tool_use', id: 'toolu_t3', name: 'wait_for_file', input: { path: 'answer.txt' } }]),
    message('The answer is 42.'),
  );
  const executions = () => linesOf(path.join(suite.workspace, '.executions'));
  const first = suite.fleet.start({ DURABLE_AGENT_SHUTDOWN_GRACE: '1s', DA_TEST_SLOW_READ_TOOL: '1' }, 'first');
  await first.ready();
  const handle = await run('wait for the answer');
  await waitUntil(async () => (await executions()).length === 1, 'the tool to start');
  const second = suite.fleet.start({ DA_TEST_SLOW_READ_TOOL: '1' }, 'second');
  await second.ready();
  first.kill('SIGTERM');
  expect((await first.exited).code).toBe(0);
  await waitUntil(async () => (await executions()).length === 2, 'the tool to run again on the second worker');
  await fs.writeFile(path.join(suite.workspace, 'answer.txt'), '42');
  const result = await handle.result();

  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'The answer is 42.' });
  expect(await executions()).toEqual([`wait_for_file ${first.pid}`, `wait_for_file ${second.pid}`]);
  // The model never saw the stopped attempt: one tool result, the real one.
  expect(requestsPerTurn(suite.fake.requests)).toEqual([1, 1]);
  const [toolResult] = toolResultsIn(suite.fake.requests[1]);
  expect(toolResult?.is_error).toBeFalsy();
  expect(resultText(toolResult)).toBe('42');
});

test('SIGTERM mid-tool, within the grace period: the tool finishes, its result is reported, the worker exits right after', async () => {
  const command = 'echo started >> effects.log; sleep 5; echo done >> effects.log';
  suite.fake.enqueue(
    message([{ type: 'tool_use', id: 'toolu_t2', name: 'bash', input: { command } }]),
    message('The command finished.'),
  );
  const first = suite.fleet.start({ DURABLE_AGENT_SHUTDOWN_GRACE: '10s' }, 'first');
  await first.ready();
  const handle = await run('run a short command');
  await waitUntil(
    async () => (await linesOf(path.join(suite.workspace, 'effects.log'))).includes('started'),
    'the command',
  );
  const started = Date.now();
  const second = suite.fleet.start({}, 'second');
  await second.ready();
  const signalled = Date.now();
  first.kill('SIGTERM');
  const exit = await first.exited;
  const result = await handle.result();

  expect(exit.code).toBe(0);
  // It waited for the command (5 s from its start), not for the whole grace period.
  expect(exit.at - started).toBeGreaterThanOrEqual(4500);
  expect(exit.at - signalled).toBeLessThan(10_000);
  expect(exit.at - started).toBeLessThan(5000 + EXIT_MARGIN_MS);
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'The command finished.' });
  expect(await linesOf(path.join(suite.workspace, 'effects.log'))).toEqual(['started', 'done']);
  const [toolResult] = toolResultsIn(suite.fake.requests[1]);
  expect(toolResult?.is_error).toBeFalsy();
  expect(resultText(toolResult)).toMatch(/Exit code: 0/);
});

test('SIGTERM during a model call past the grace period: the call is cancelled and retried on another worker at once, not after its heartbeat timeout', async () => {
  suite.fake.enqueue(
    // ~10 s of pings before the answer: the call is still running when the grace period ends.
    message('too late', { pings: 50, eventDelayMs: 200 }),
    message('Answered by the other worker.'),
  );
  const graceMs = 1000;
  const first = suite.fleet.start({ DURABLE_AGENT_SHUTDOWN_GRACE: `${graceMs}ms` }, 'first');
  await first.ready();
  const handle = await run('say something');
  await waitUntil(() => suite.fake.requests.length === 1, 'the model call');
  const second = suite.fleet.start({}, 'second');
  await second.ready();
  const signalled = Date.now();
  first.kill('SIGTERM');
  const exit = await first.exited;
  const result = await handle.result();

  expect(exit.code).toBe(0);
  expect(exit.at - signalled).toBeLessThan(graceMs + EXIT_MARGIN_MS);
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'Answered by the other worker.' });
  expect(requestsPerTurn(suite.fake.requests)).toEqual([2]);
  // The retry came as soon as the cancelled attempt failed, far inside the 60 s heartbeat timeout.
  expect(suite.fake.requests[1]!.receivedAt - signalled).toBeLessThan(graceMs + EXIT_MARGIN_MS + 2000);
});
