/**
 * Finding F4 (issue 44) on a real worker: six runs whose every answer costs the validator seconds
 * (the tagged tree with `children` first, exponential in the answer's depth), checking at once, and one run with `{"type": "string"}` started among them. The victim's
 * schema check and answer check wait for a thread fairly (it has used no validator time, so it goes
 * before the hostile runs' later checks) and a wait past the queue budget is retried as "busy": it
 * completes. The hostile runs end `failed` with their own verdicts. The pool's deadline and queue
 * budget are lowered through its options to keep the test short and light (the hostile depth is
 * capped so a check costs about a second); the local activity's timeout is the real 30 seconds.
 */
import type { ModelRequest } from '../../src/shared/messages';
import { ScriptedModel, type ScriptStep } from '../../src/models/scripted';
import { OutputCheckPool, useOutputCheckPool } from '../../src/activities/output-check-pool';
import { OUTPUT_CHECK_BUSY_ERROR, OUTPUT_INVALID_ERROR } from '../../src/shared';
import { ApplicationFailure } from '@temporalio/common';
import { checkOutput } from '../../src/activities/output';
import { runResult } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';
import { taggedTreeAnswer, taggedTreeSchema } from './fair-schemas';

jest.setTimeout(60_000);

const { suite, start } = useWorkflowSuite('check-fairness');

const HOSTILE_RUNS = 6;

/** Every call answers from the prompt: a deep bad tree for the hostile runs, a string for the victim. */
function answerer(): ScriptStep {
  return (request: ModelRequest) => ({
    content: [
      {
        type: 'text',
        text: JSON.stringify(request.messages).includes('HOSTILE') ? taggedTreeAnswer(10) : '"ok"',
      },
    ],
  });
}

let pool: OutputCheckPool | undefined;
afterEach(async () => {
  useOutputCheckPool(undefined);
  await pool?.close();
});

test('a run with a trivial schema completes while six hostile runs keep the validator threads busy', async () => {
  pool = new OutputCheckPool({ deadlineMs: 4_000, queueMs: 5_000, detailMs: 300 });
  useOutputCheckPool(pool);
  const model = new ScriptedModel(Array.from({ length: 40 }, answerer));
  await withWorker(suite.env, { model }, async (taskQueue) => {
    const hostile = await Promise.all(
      Array.from({ length: HOSTILE_RUNS }, () =>
        start(taskQueue, { prompt: 'HOSTILE tree', outputSchema: taggedTreeSchema(true) }),
      ),
    );
    // The victim starts once hostile answers have run into the deadline.
    await waitFor(() =>
      hostile.some((handle) => pool!.usedMs(`${handle.workflowId}/${handle.firstExecutionRunId}`) >= 500),
    );
    const victim = await start(taskQueue, { prompt: 'A string, please.', outputSchema: { type: 'string' } });
    expect(await runResult(victim)).toMatchObject({ exitReason: 'completed', finalText: '"ok"', output: 'ok' });
    for (const handle of hostile) {
      const result = await runResult(handle);
      expect(result).toMatchObject({ exitReason: 'failed', error: { type: OUTPUT_INVALID_ERROR } });
    }
  });
});

async function waitFor(done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
}

test('a check that finds the validator busy fails retryably, and a run starting then is retried until it completes', async () => {
  pool = new OutputCheckPool({ maxThreads: 1, deadlineMs: 4_000, queueMs: 300 });
  useOutputCheckPool(pool);
  const hostileCheck = { schema: taggedTreeSchema(true), text: taggedTreeAnswer(11) };
  // The activity answers "busy" as a retryable ApplicationFailure while another run holds the thread.
  const holding = pool.check(hostileCheck, undefined, 'holder');
  const busy = await checkOutput({ schema: { type: 'string' }, text: '"ok"' }).catch((err: unknown) => err);
  expect(busy).toBeInstanceOf(ApplicationFailure);
  expect(busy).toMatchObject({ type: OUTPUT_CHECK_BUSY_ERROR, nonRetryable: false });
  await holding;
  // A run whose schema check at start finds the thread busy: retried with backoff, it completes.
  const model = new ScriptedModel([answerer()]);
  await withWorker(suite.env, { model }, async (taskQueue) => {
    const before = pool!.busyCount;
    const held = pool!.check(hostileCheck, undefined, 'holder-2');
    const victim = await start(taskQueue, { prompt: 'A string, please.', outputSchema: { type: 'string' } });
    expect(await runResult(victim)).toMatchObject({ exitReason: 'completed', output: 'ok' });
    await held;
    expect(pool!.busyCount).toBeGreaterThan(before);
  });
});
