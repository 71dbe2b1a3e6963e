/**
 * Hostile output schemas against a real worker process (the `durable-agent worker` command, as an
 * operator runs it): the 2 KB schema whose `$ref`s double 24 times used to exhaust the worker's heap
 * when it checked the answer `1`, killing every worker that picked the run up. Now the run is refused
 * at start, and a schema that passes the start bounds but costs too much for one answer ends only
 * the validator's thread: the worker lives on and the run ends with a typed verdict.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { MAX_OUTPUT_CORRECTIONS, OUTPUT_INVALID_ERROR } from '../../src/shared';
import { message } from '../support/fake-anthropic';
import { startAgentRun } from '../support/fault-helpers';
import { useFaultSuite } from '../support/fault-suite';
import { runResult } from '../support/run-helpers';
import { deepAnswer, doublingSchema, recursiveDoublingSchema } from './hostile-schemas';

jest.setTimeout(120_000);

const suite = useFaultSuite('hostile-schema');

test('the doubling schema is refused at start with InvalidInput, and the worker that saw it lives on', async () => {
  suite.fake.enqueue(message('1'), message('1'), message('1'));
  const worker = suite.fleet.start();
  await worker.ready();
  const handle = await startAgentRun(suite.env.client, suite.taskQueue, {
    prompt: 'Answer.',
    model: 'claude-sonnet-5-5',
    workspace: suite.workspace,
    outputSchema: doublingSchema(24),
  });
  const failure = await handle.result().catch((err: unknown) => err);
  expect(failure).toBeInstanceOf(WorkflowFailedError);
  const cause = (failure as WorkflowFailedError).cause as ApplicationFailure;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect(cause.type).toBe('DurableAgent.InvalidInput');
  expect(cause.message).toMatch(/outputSchema expands to more than 20000 subschemas/);
  expect(suite.fake.requests).toHaveLength(0);
  expect(worker.child.exitCode).toBeNull();
  expect(worker.child.signalCode).toBeNull();
});

test('a schema within the bounds whose check of an answer blows its limits fails the run, not the worker', async () => {
  for (let i = 0; i <= MAX_OUTPUT_CORRECTIONS; i++) suite.fake.enqueue(message(deepAnswer));
  const worker = suite.fleet.start();
  await worker.ready();
  const handle = await startAgentRun(suite.env.client, suite.taskQueue, {
    prompt: 'Answer.',
    model: 'claude-sonnet-5-5',
    workspace: suite.workspace,
    outputSchema: recursiveDoublingSchema,
  });
  const result = await runResult(handle);
  expect(result).toMatchObject({ exitReason: 'failed', error: { type: OUTPUT_INVALID_ERROR } });
  expect((result as { error: { message: string } }).error.message).toMatch(
    /the answer could not be checked against outputSchema: the check (ran out of memory|took longer)/,
  );
  expect(suite.fake.requests).toHaveLength(MAX_OUTPUT_CORRECTIONS + 1);
  // One worker process did all of it, and is still up.
  expect(worker.child.exitCode).toBeNull();
  expect(worker.child.signalCode).toBeNull();
});
