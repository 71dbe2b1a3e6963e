import { ApplicationFailure } from '@temporalio/common';
import { randomUUID } from 'node:crypto';
import { ScriptedModel, delayed, fail, text } from '../../src/models/scripted';
import type { AgentRunResult } from '../../src/shared';
import { ErrorTypes } from '../../src/shared';
import { waitForState } from '../support/run-helpers';
import { connectTestEnv, tempWorkspace, withWorker, type TestEnv } from '../support/temporal';
import { durableAgent } from './cli-helpers';

/**
 * `durable-agent end` ends a waiting session `completed` (the endSession update) and prints the
 * run's own reason when it refuses; `run --json` prints the AgentRunResult of a failed run too.
 */

let env: TestEnv;
let workspace: string;
const tag = randomUUID().slice(0, 8);
beforeAll(async () => {
  env = await connectTestEnv();
  workspace = await tempWorkspace('end');
});
afterAll(async () => {
  await env?.close();
});

const runArgs = (workflowId: string, ...extra: string[]) => [
  'run',
  'answer, then wait',
  '--model',
  'scripted-end',
  '--workspace',
  workspace,
  '--id',
  workflowId,
  '--no-inline-worker',
  '--json',
  ...extra,
];

test('end completes a waiting session with its last answer; it is refused while the session works', async () => {
  const workflowId = `end-${tag}-session`;
  // The second answer waits until the test has tried `end` while the session works (a fixed delay
  // raced the CLI's start-up on a loaded machine).
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const model = new ScriptedModel([
    text('First answer.'),
    async () => {
      await gate;
      return text('Second answer.');
    },
  ]);
  await withWorker(env, { model }, async (taskQueue) => {
    const run = durableAgent(runArgs(workflowId, '--session'), { taskQueue });
    const handle = env.client.workflow.getHandle(workflowId);
    await waitForState(handle, (s) => s.status === 'awaiting_input');
    expect((await durableAgent(['send', workflowId, 'one more'])).code).toBe(0);

    const busy = await durableAgent(['end', workflowId]);
    expect(busy.code).toBe(1);
    expect(busy.stderr.trim()).toMatch(
      new RegExp(`^error: end of session refused by run ${workflowId}: .*(working on a message|not waiting)`),
    );
    release();

    await waitForState(handle, (s) => s.status === 'awaiting_input' && s.iteration === 2);
    const ended = await durableAgent(['end', workflowId]);
    expect(ended.code).toBe(0);
    expect(ended.stdout.trim()).toBe(
      `Session ${workflowId} ended: the run ends 'completed' with its last answer. See it with: durable-agent result ${workflowId}`,
    );
    const finished = await run;
    expect(finished.code).toBe(0);
    expect(JSON.parse(finished.stdout)).toMatchObject({
      exitReason: 'completed',
      finalText: 'Second answer.',
      iterations: 2,
    });
  });
});

test('end on a run that is not a session is refused with the reason, and the run goes on', async () => {
  const workflowId = `end-${tag}-plain`;
  const model = new ScriptedModel([delayed(60_000, text('never'))]);
  await withWorker(env, { model }, async (taskQueue) => {
    const run = durableAgent(runArgs(workflowId), { taskQueue });
    const handle = env.client.workflow.getHandle(workflowId);
    await waitForState(handle, (s) => s.status === 'running' && model.requests.length > 0);
    const refused = await durableAgent(['end', workflowId]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toMatch(
      new RegExp(`^error: end of session refused by run ${workflowId}: .*not a session`),
    );
    expect((await durableAgent(['interrupt', workflowId, '--reason', 'test over'])).code).toBe(0);
    const finished = await run;
    expect(finished.code).toBe(1);
    expect(JSON.parse(finished.stdout)).toMatchObject({ exitReason: 'interrupted' });
  });
});

test('run --json prints the AgentRunResult of a run whose agent failed, exit code 1 and the one-line reason', async () => {
  const workflowId = `end-${tag}-failed`;
  const model = new ScriptedModel([fail(ApplicationFailure.nonRetryable('no such model', ErrorTypes.NotFound))]);
  await withWorker(env, { model }, async (taskQueue) => {
    const finished = await durableAgent(runArgs(workflowId), { taskQueue });
    expect(finished.code).toBe(1);
    const result = JSON.parse(finished.stdout) as AgentRunResult;
    expect(result).toMatchObject({ exitReason: 'failed', iterations: 0, model: 'scripted-end' });
    expect(result.error?.message).toContain('no such model');
    const lastLine = finished.stderr.trim().split('\n').at(-1);
    expect(lastLine).toMatch(/^run ended 'failed': .*no such model/);
  });
  expect((await env.client.workflow.getHandle(workflowId).describe()).status.name).toBe('FAILED');
});
