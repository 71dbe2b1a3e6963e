/**
 * Finding F4 (issue 44) on a real worker: six runs whose every answer costs the validator a whole
 * deadline, checking at once, and one run with `{"type": "string"}` started among them. The victim's
 * schema check and answer check wait for a thread fairly (it has used no validator time, so it goes
 * before the hostile runs' later checks) and a wait past the queue budget is retried as "busy": it
 * completes. The hostile runs end `failed` with their own verdicts. The deadline is lowered through
 * the pool's options to keep the test short; the local activity's timeout is the real 30 seconds.
 */
import type { ModelRequest } from '../../src/shared/messages';
import { ScriptedModel, type ScriptStep } from '../../src/models/scripted';
import { OutputCheckPool, useOutputCheckPool } from '../../src/activities/output-check-pool';
import { OUTPUT_INVALID_ERROR } from '../../src/shared';
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
        text: JSON.stringify(request.messages).includes('HOSTILE') ? taggedTreeAnswer(14) : '"ok"',
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
  pool = new OutputCheckPool({ deadlineMs: 1_500, queueMs: 2_500, detailMs: 300 });
  useOutputCheckPool(pool);
  const model = new ScriptedModel(Array.from({ length: 40 }, answerer));
  await withWorker(suite.env, { model }, async (taskQueue) => {
    const hostile = await Promise.all(
      Array.from({ length: HOSTILE_RUNS }, () =>
        start(taskQueue, { prompt: 'HOSTILE tree', outputSchema: taggedTreeSchema(true) }),
      ),
    );
    // The victim starts once hostile answers have run into the deadline.
    await waitFor(() => hostile.some((handle) => pool!.usedMs(handle.workflowId) >= 1_000));
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
