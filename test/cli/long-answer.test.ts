import { randomUUID } from 'node:crypto';
import { ScriptedModel, delayed, text } from '../../src/models/scripted';
import { EVENT_ANSWER_CHARS } from '../../src/shared';
import { waitForState } from '../support/run-helpers';
import { connectTestEnv, tempWorkspace, withWorker, type TestEnv } from '../support/temporal';
import { durableAgent } from './cli-helpers';

/**
 * A 1 MB final answer: progress events carry only its first EVENT_ANSWER_CHARS characters
 * (`truncated: true`), so `run` and `follow` must print the whole answer from the run's result,
 * once, and say where the events cut it. A short answer is printed once too, not by the event and
 * again with the result.
 */

let env: TestEnv;
let workspace: string;
const tag = randomUUID().slice(0, 8);
beforeAll(async () => {
  env = await connectTestEnv();
  workspace = await tempWorkspace('long-answer');
});
afterAll(async () => {
  await env?.close();
});

/** About 1 MB of numbered lines (just under MAX_MODEL_RESPONSE_BYTES as JSON), so a cut, a gap or a repeat anywhere shows. */
const LONG_ANSWER = Array.from({ length: 19_000 }, (_, i) => `line ${String(i).padStart(6, '0')} ${'ab'.repeat(20)}`)
  .join('\n')
  .concat('\nTHE END');

/** Lines that start with `start`; progress lines quote an answer's first line indented, so they do not count. */
const linesStarting = (output: string, start: string) => output.split('\n').filter((l) => l.startsWith(start)).length;

const runArgs = (workflowId: string, ...extra: string[]) => [
  'run',
  'write a long answer',
  '--model',
  'scripted-long',
  '--workspace',
  workspace,
  '--id',
  workflowId,
  '--no-inline-worker',
  ...extra,
];

test('run prints a 1 MB final answer whole and once; the cut answer event is marked', async () => {
  expect(LONG_ANSWER.length).toBeGreaterThan(1_000_000);
  const model = new ScriptedModel([text(LONG_ANSWER)]);
  await withWorker(env, { model }, async (taskQueue) => {
    const out = await durableAgent(runArgs(`long-${tag}-run`), { taskQueue });
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(LONG_ANSWER);
    // Every line once: the event's first 16,000 characters are not printed a second time.
    expect(linesStarting(out.stdout, 'line 000000 ')).toBe(1);
    expect(linesStarting(out.stdout, 'THE END')).toBe(1);
    expect(out.stdout).toMatch(/exit reason completed/);
  });
}, 120_000);

test('follow prints a 1 MB final answer whole and once', async () => {
  const workflowId = `long-${tag}-follow`;
  const model = new ScriptedModel([delayed(1_500, text(LONG_ANSWER))]);
  await withWorker(env, { model }, async (taskQueue) => {
    const started = await durableAgent(runArgs(workflowId, '--detach'), { taskQueue });
    expect(started.code).toBe(0);
    const out = await durableAgent(['follow', workflowId], { taskQueue });
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(LONG_ANSWER);
    expect(linesStarting(out.stdout, 'line 000000 ')).toBe(1);
    expect(linesStarting(out.stdout, 'THE END')).toBe(1);
  });
}, 120_000);

test('follow of a session prints a long intermediate answer cut, with a marker, and the last answer once', async () => {
  const workflowId = `long-${tag}-session`;
  // The 1 MB answer puts the conversation over the compaction threshold: the next message first
  // gets a compaction call (the summary), then the model's answer.
  const model = new ScriptedModel([
    text(LONG_ANSWER),
    text('Summary of the work so far.'),
    text('Short second answer.'),
  ]);
  await withWorker(env, { model }, async (taskQueue) => {
    const run = durableAgent(runArgs(workflowId, '--session'), { taskQueue });
    const handle = env.client.workflow.getHandle(workflowId);
    await waitForState(handle, (s) => s.status === 'awaiting_input');
    expect((await durableAgent(['send', workflowId, 'and now short'])).code).toBe(0);
    await waitForState(handle, (s) => s.status === 'awaiting_input' && s.iteration === 2, 30_000);
    expect((await durableAgent(['end', workflowId])).code).toBe(0);
    const out = await run;
    expect(out.code).toBe(0);
    // The first answer lives only in the events: its first 16,000 characters, and a note that it was cut.
    const kept = LONG_ANSWER.slice(0, EVENT_ANSWER_CHARS - 1);
    expect(out.stdout).toContain(`${kept}…\n[answer cut at 16,000 characters: progress events carry no more of it]`);
    expect(out.stdout).not.toContain(LONG_ANSWER.slice(0, EVENT_ANSWER_CHARS));
    expect(linesStarting(out.stdout, 'Short second answer.')).toBe(1);
  });
}, 120_000);

test('a short final answer is printed once', async () => {
  const model = new ScriptedModel([text('Just this, once.')]);
  await withWorker(env, { model }, async (taskQueue) => {
    const out = await durableAgent(runArgs(`long-${tag}-short`), { taskQueue });
    expect(out.code).toBe(0);
    expect(linesStarting(out.stdout, 'Just this, once.')).toBe(1);
  });
}, 60_000);
