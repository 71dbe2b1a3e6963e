/**
 * Run start goes with the first model call (`firstModelCall`, 0.3.0; src/workflows/steps/start.ts):
 * what the history records for a plain run, for a run whose prompt UserPromptSubmit hooks screen
 * first, and for a run that must hand over before its first call; each history replays.
 */
import { Worker } from '@temporalio/worker';
import type { temporal } from '@temporalio/proto';
import { defaultPayloadConverter } from '@temporalio/common';
import * as os from 'node:os';
import * as path from 'node:path';
import type { FunctionHooks } from '../../src/hooks';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { eventsQuery } from '../../src/shared';
import { baseActivityName } from '../../src/shared/activity-names';
import type { FirstModelCallOutput } from '../../src/shared/activity-io';
import { runResult } from '../support/run-helpers';
import { inThreads, quietRuntime, testBundlePath, withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

jest.setTimeout(60_000);
const { suite, start } = useWorkflowSuite('run-start');
// No worker settings file: ~/.durable-agent is never read.
const settingsFile = path.join(os.tmpdir(), `durable-agent-run-start-${process.pid}-absent.json`);

type Event = temporal.api.history.v1.IHistoryEvent;

async function historyOf(workflowId: string, runId?: string): Promise<Event[]> {
  return (await suite.env.client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
}

/** The run's activities in order: scheduled ones by type, local ones as `local:<type>`. */
function activities(events: Event[]): string[] {
  return events.flatMap((e) => {
    const scheduled = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (scheduled) return [baseActivityName(scheduled)];
    const data = e.markerRecordedEventAttributes?.details?.['data']?.payloads?.[0];
    if (!data) return [];
    const { activity_type: type } = defaultPayloadConverter.fromPayload<{ activity_type?: string }>(data);
    return [`local:${baseActivityName(type ?? '')}`];
  });
}

/** The result of the run's `firstModelCall`. */
function firstCallResult(events: Event[]): FirstModelCallOutput {
  const scheduled = events.find(
    (e) => baseActivityName(e.activityTaskScheduledEventAttributes?.activityType?.name ?? '') === 'firstModelCall',
  );
  const completed = events.find(
    (e) => String(e.activityTaskCompletedEventAttributes?.scheduledEventId) === String(scheduled?.eventId),
  );
  const payload = completed?.activityTaskCompletedEventAttributes?.result?.payloads?.[0];
  if (!payload) throw new Error('no completed firstModelCall in this history');
  return defaultPayloadConverter.fromPayload<FirstModelCallOutput>(payload);
}

async function expectReplays(workflowId: string, runIds: string[]): Promise<void> {
  quietRuntime();
  const histories = await Promise.all(
    runIds.map(async (runId) => ({
      workflowId,
      history: await suite.env.client.workflow.getHandle(workflowId, runId).fetchHistory(),
    })),
  );
  for await (const result of Worker.runReplayHistories(
    inThreads({ workflowBundle: { codePath: testBundlePath() } }),
    histories,
  )) {
    expect(result.error).toBeUndefined();
  }
}

test('a plain run: one activity starts it and answers; the context comes back with the answer', async () => {
  const model = new ScriptedModel([text('Hello.')]);
  const handle = await withWorker(suite.env, { model, deps: { settingsFile } }, async (tq) => {
    const h = await start(tq, { prompt: 'Say hello' });
    await h.result();
    return h;
  });
  const events = await historyOf(handle.workflowId);
  expect(activities(events)).toEqual(['firstModelCall']);
  const first = firstCallResult(events);
  expect(first.prepared?.context.system).toContain('- Workspace: ');
  expect(first.prepared?.workspace).toBe(await realPath(suite.workspace));
  expect(first.response?.content).toEqual([{ type: 'text', text: 'Hello.' }]);
  // The model got the assembled prompt, and was called once.
  expect(model.requests).toHaveLength(1);
  expect(model.requests[0]?.system).toBe(first.prepared?.context.system);
  await expectReplays(handle.workflowId, [handle.firstExecutionRunId]);
});

test('UserPromptSubmit hooks: run start comes back without an answer, the hook screens the prompt, then the model is called once', async () => {
  const hooks: FunctionHooks = {
    UserPromptSubmit: [{ run: (e) => ({ hookSpecificOutput: { additionalContext: `ctx-for:${e.prompt}` } }) }],
  };
  const model = new ScriptedModel([text('Screened.')]);
  let announced: number[] = [];
  const handle = await withWorker(suite.env, { model, deps: { hooks, settingsFile } }, async (tq) => {
    const h = await start(tq, { prompt: 'hello' });
    expect((await runResult(h)).finalText).toBe('Screened.');
    // One model call, announced once (queried while a worker is up).
    const { events } = await h.query(eventsQuery, {});
    announced = events.flatMap((e) => (e.kind === 'model_call_started' ? [e.iteration] : []));
    return h;
  });
  expect(announced).toEqual([1]);
  const events = await historyOf(handle.workflowId);
  expect(activities(events)).toEqual(['firstModelCall', 'runHook', 'callModel']);
  const first = firstCallResult(events);
  expect(first.response).toBeUndefined();
  expect(first.prepared?.hooks.events).toContain('UserPromptSubmit');
  expect(model.requests).toHaveLength(1);
  expect(JSON.stringify(model.requests[0]?.messages[0])).toContain('ctx-for:hello');
  expect(model.requests[0]?.system).toBe(first.prepared?.context.system);
  await expectReplays(handle.workflowId, [handle.firstExecutionRunId]);
});

test('a UserPromptSubmit hook that stops the run on the first prompt: the model is never called', async () => {
  const hooks: FunctionHooks = { UserPromptSubmit: [{ run: () => ({ continue: false, stopReason: 'not today' }) }] };
  const model = new ScriptedModel([toolUse([{ id: 'toolu_1', name: 'read_file', input: { path: 'x' } }])]);
  const handle = await withWorker(suite.env, { model, deps: { hooks, settingsFile } }, async (tq) => {
    const h = await start(tq, { prompt: 'hello' });
    expect(await runResult(h)).toMatchObject({ exitReason: 'interrupted' });
    return h;
  });
  expect(model.requests).toHaveLength(0);
  // Run start, the hook, and (the run ends interrupted) its final messages kept: no model or tool call.
  expect(activities(await historyOf(handle.workflowId))).toEqual([
    'firstModelCall',
    'runHook',
    'local:keepFinalMessages',
  ]);
});

test('a run that must do something else before its first call (compact a long prompt) starts the other way first', async () => {
  const prompt = `Summarize this: ${'lorem ipsum '.repeat(1200)}`;
  const model = new ScriptedModel([text('Short version.'), text('Summarized.')]);
  const handle = await withWorker(suite.env, { model, deps: { settingsFile } }, async (tq) => {
    const h = await start(tq, { prompt, compactAtBytes: 10_000 });
    await runResult(h);
    return h;
  });
  const events = await historyOf(handle.workflowId);
  const done = activities(events);
  expect(done[0]).toBe('local:prepareRun');
  expect(done).not.toContain('firstModelCall');
  // Every model request had the assembled system prompt.
  expect(model.requests.length).toBeGreaterThan(0);
  for (const request of model.requests) expect(request.system).toContain('- Workspace: ');
  await expectReplays(handle.workflowId, [handle.firstExecutionRunId]);
});

async function realPath(p: string): Promise<string> {
  return (await import('node:fs/promises')).realpath(p);
}

test('a prompt larger than continueAsNewAfter.bytes: each execution calls the model before it hands over, and the run ends', async () => {
  const prompt = `Read this first: ${'lorem ipsum '.repeat(1200)}`;
  const model = new ScriptedModel([
    toolUse([{ id: 'toolu_1', name: 'read_file', input: { path: 'missing.txt' } }]),
    text('Read it.'),
  ]);
  const outcome = await withWorker(suite.env, { model, deps: { settingsFile } }, async (tq) => {
    const h = await start(tq, { prompt, continueAsNewAfter: { bytes: 10_000 } });
    // Before 0.3.0 every execution handed over at once, forever: bounded here so a regression fails, not hangs.
    const ended = await Promise.race([
      runResult(h),
      new Promise<'still handing over'>((r) => setTimeout(() => r('still handing over'), 20_000)),
    ]);
    if (ended === 'still handing over') await h.terminate('test: still handing over');
    return { ended, h };
  });
  expect(outcome.ended).toMatchObject({ exitReason: 'completed', finalText: 'Read it.' });
  expect(model.requests).toHaveLength(2);
  // One hand-over, after the first call: two executions.
  const firstExecution = await historyOf(outcome.h.workflowId, outcome.h.firstExecutionRunId);
  const next = firstExecution.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
  expect(next).toBeTruthy();
  const second = await historyOf(outcome.h.workflowId, next!);
  expect(second.at(-1)?.workflowExecutionCompletedEventAttributes).toBeTruthy();
  await expectReplays(outcome.h.workflowId, [outcome.h.firstExecutionRunId, next!]);
});
