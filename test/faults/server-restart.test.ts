/**
 * The Temporal server (dev server with SQLite persistence, our own, not the suite's) stopped in the
 * middle of a run and started again ~10 s later on the same port: the run continues once it is
 * back; the worker process (`durable-agent worker`) and the CLI following the run
 * (`durable-agent run`) stay up, say they lost the server and that it is back, and need no restart.
 */
import * as path from 'node:path';
import type { AgentRunResult } from '../../src/shared';
import { runCli } from '../support/cli-process';
import { message, startFakeAnthropic, type FakeAnthropic } from '../support/fake-anthropic';
import { linesOf, requestsPerTurn, resultText, sleep, toolResultsIn, waitUntil } from '../support/fault-helpers';
import { OwnDevServer } from '../support/own-server';
import { tempWorkspace, testBundlePath, uniqueQueue } from '../support/temporal';
import { WorkerFleet } from '../support/worker-harness';

jest.setTimeout(120_000);

const OUTAGE_MS = 10_000;

let server: OwnDevServer;
let fake: FakeAnthropic;
const taskQueue = uniqueQueue('restart');
const fleet = new WorkerFleet(() => ({
  TEMPORAL_ADDRESS: server.address,
  TEMPORAL_TASK_QUEUE: taskQueue,
  DA_TEST_WORKFLOW_BUNDLE: testBundlePath(),
  ANTHROPIC_BASE_URL: fake.url,
  ANTHROPIC_API_KEY: 'sk-test',
  DA_TEST_HEALTH_CHECK_MS: '1000',
  DA_TEST_RETRY_MS: '500',
}));

beforeAll(async () => {
  server = await OwnDevServer.start();
  fake = await startFakeAnthropic();
});
afterAll(async () => {
  await fleet.stopAll();
  await fake?.close();
  await server?.close();
});

test('the server stops mid-run and comes back: the run completes, the worker and the CLI reconnect by themselves and say so', async () => {
  const workspace = await tempWorkspace('restart');
  const effects = () => linesOf(path.join(workspace, 'effects.log'));
  const command = 'echo start >> effects.log; sleep 5; echo end >> effects.log';
  fake.enqueue(
    message([{ type: 'tool_use', id: 'toolu_s1', name: 'bash', input: { command } }]),
    message('Both lines are in effects.log.'),
  );
  const worker = fleet.start();
  await worker.ready();
  const cli = runCli(
    ['run', '--json', '--no-inline-worker', '--model', 'claude-sonnet-5-5', '--workspace', workspace, 'append twice'],
    { TEMPORAL_ADDRESS: server.address, TEMPORAL_TASK_QUEUE: taskQueue, ANTHROPIC_API_KEY: 'sk-test' },
  );

  // The tool is running when the server goes away; it finishes while the server is still down.
  await waitUntil(async () => (await effects()).includes('start'), 'the command to start');
  await server.down();
  const downAt = Date.now();
  await waitUntil(() => /Lost contact with the Temporal server/.test(worker.output()), 'the worker to notice', 15_000);
  await sleep(OUTAGE_MS - (Date.now() - downAt));
  expect(cli.child.exitCode).toBeNull();
  await server.up();
  const upAt = Date.now();

  const { code, stdout, stderr } = await cli.done;
  const result = JSON.parse(stdout) as AgentRunResult;
  expect(code).toBe(0);
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'Both lines are in effects.log.' });

  // Nothing ran twice and the tool's real result (not an unknown outcome) reached the model.
  expect(await effects()).toEqual(['start', 'end']);
  expect(requestsPerTurn(fake.requests)).toEqual([1, 1]);
  const [toolResult] = toolResultsIn(fake.requests[1]);
  expect(toolResult?.is_error).toBeFalsy();
  expect(resultText(toolResult)).toMatch(/Exit code: 0/);
  expect(fake.requests[1]!.receivedAt).toBeGreaterThan(upAt);

  // The worker process stayed up and said what happened.
  expect(worker.child.exitCode).toBeNull();
  expect(worker.output()).toMatch(
    new RegExp(`Lost contact with the Temporal server at ${server.address}.*The worker keeps retrying`),
  );
  expect(worker.output()).toMatch(new RegExp(`Temporal server at ${server.address} is back after \\d+s`));
  expect(worker.output()).not.toMatch(/retried \d+ times/);
  // So did the CLI (progress goes to stderr with --json).
  expect(stderr).toMatch(new RegExp(`lost contact with the Temporal server at ${server.address}`));
  expect(stderr).toMatch(/Temporal server back after \d+ s/);
});
