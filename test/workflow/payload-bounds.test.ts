import { WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { AnthropicProvider } from '../../src/models/anthropic';
import { ScriptedModel, delayed, text, toolUse, type ScriptStep } from '../../src/models/scripted';
import type { ModelRequest } from '../../src/shared';
import {
  ErrorTypes,
  MAX_EVENTS_PAGE_BYTES,
  MAX_PROMPT_BYTES,
  eventsQuery,
  jsonBytes,
  sendMessageUpdate,
} from '../../src/shared';
import { message, startFakeAnthropic } from '../support/fake-anthropic';
import { runResult, waitForState } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

/**
 * Every payload a run produces stays inside Temporal's limits whatever the model and the users
 * send (constants.ts names each bound). Each case here was terminated by the server, or made the
 * run or its queries fail, before the bounds.
 */
const { suite, start } = useWorkflowSuite('bounds');

const EventType = temporal.api.enums.v1.EventType;

/** Event types of every execution of the chain that starts at `workflowId`. */
async function chainEvents(workflowId: string, firstRunId: string): Promise<temporal.api.enums.v1.EventType[]> {
  const types: temporal.api.enums.v1.EventType[] = [];
  let runId: string | undefined = firstRunId;
  while (runId) {
    const history: temporal.api.history.v1.IHistory = await suite.env.client.workflow
      .getHandle(workflowId, runId)
      .fetchHistory();
    const events: temporal.api.history.v1.IHistoryEvent[] = history.events ?? [];
    types.push(...events.map((e) => e.eventType ?? EventType.EVENT_TYPE_UNSPECIFIED));
    const last: temporal.api.history.v1.IHistoryEvent | undefined = events[events.length - 1];
    runId = last?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return types;
}

/** A model that writes a 30,000-character file every turn for `turns` turns, answers summaries, then finishes. */
function bigWriter(turns: number): ScriptStep[] {
  const content = 'x'.repeat(30_000);
  let calls = 0;
  const step = (request: ModelRequest) => {
    if (request.toolChoice?.type === 'none') return text(`Summary: wrote ${calls} files.`);
    calls += 1;
    if (calls > turns) return text('All files written.');
    return toolUse([{ name: 'write_file', input: { path: `f${calls % 5}.txt`, content } }]);
  };
  return Array.from({ length: turns * 3 }, () => step);
}

test('a 30,000-character write_file every turn for 150 turns completes across continue-as-new', async () => {
  const model = new ScriptedModel(bigWriter(150));
  const { result, types } = await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, { maxIterations: 400 });
    const result = await handle.result();
    return { result, types: await chainEvents(handle.workflowId, handle.firstExecutionRunId) };
  });
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'All files written.', iterations: 151 });
  expect(types.filter((t) => t === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW).length).toBeGreaterThan(0);
  expect(types).not.toContain(EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED);
  expect(types).not.toContain(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED);
}, 240_000);

test('25 sends of 100 KB during a slow tool: each accepted or refused with a reason, and the run completes', async () => {
  const model = new ScriptedModel([
    // The tool runs until every send has been answered (the test then creates `go`).
    toolUse([{ name: 'bash', input: { command: 'while [ ! -f go ]; do sleep 0.1; done' } }]),
    (request: ModelRequest) => text(`Got ${JSON.stringify(request.messages).length} characters.`),
  ]);
  const big = (i: number) => `<msg ${i}>`.padEnd(100_000, 'm');
  const { result, outcomes, types } = await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, {});
    await waitForState(handle, (s) => s.activeTools.length === 1);
    const outcomes = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        handle.executeUpdate(sendMessageUpdate, { args: [{ message: big(i) }] }).then(
          () => 'accepted',
          (err: unknown) => (err instanceof WorkflowUpdateFailedError ? String(err.cause?.message) : `other: ${err}`),
        ),
      ),
    );
    await fs.writeFile(path.join(suite.workspace, 'go'), '');
    const result = await handle.result();
    return { result, outcomes, types: await chainEvents(handle.workflowId, handle.firstExecutionRunId) };
  });
  const accepted = outcomes.filter((o) => o === 'accepted').length;
  expect(accepted).toBeGreaterThan(0);
  for (const refused of outcomes.filter((o) => o !== 'accepted')) {
    expect(refused).toContain("already wait for the run's next iteration");
  }
  expect(result.exitReason).toBe('completed');
  // Every accepted message reached the model in the request after the tool (checked as booleans:
  // printing a megabyte of request on failure helps nobody).
  const request = JSON.stringify(model.requests[1]?.messages);
  const reached = outcomes.map((o, i) => o === 'accepted' && request.includes(`<msg ${i}>`));
  expect(reached.filter(Boolean).length).toBe(accepted);
  expect(types).not.toContain(EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED);
}, 120_000);

test('a 1.5 MB prompt is refused at start with a message naming the limit', async () => {
  const model = new ScriptedModel([text('never')]);
  const err = await withWorker(suite.env, { model }, async (tq) =>
    (await start(tq, { prompt: 'p'.repeat(1_500_000) })).result().catch((e: unknown) => e),
  );
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const cause = (err as WorkflowFailedError).cause;
  expect(cause?.message).toContain(`the limit is ${MAX_PROMPT_BYTES} bytes`);
  expect(model.requests).toHaveLength(0);
});

test('a 5 MB answer from the provider: one request, then a clear non-retryable failure', async () => {
  const fake = await startFakeAnthropic();
  try {
    fake.enqueue(message('y'.repeat(5_000_000)), message('y'.repeat(5_000_000)));
    const model = new AnthropicProvider({ baseURL: fake.url, apiKey: 'sk-test' });
    const result = await withWorker(suite.env, { model }, async (tq) =>
      runResult(await start(tq, { model: 'claude-sonnet-5-5' })),
    );
    expect(result.exitReason).toBe('failed');
    expect(result.error?.type).toBe(ErrorTypes.ResponseTooLarge);
    expect(result.error?.message).toMatch(/answer is \d+ bytes, more than the \d+ bytes a run can record/);
    expect(fake.requests).toHaveLength(1);
  } finally {
    await fake.close();
  }
}, 60_000);

test('a 1 MB answer: the run completes with all of it, and every events page stays bounded', async () => {
  const answer = 'z'.repeat(1_000_000);
  const model = new ScriptedModel([delayed(200, text(answer))]);
  await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, {});
    const result = await handle.result();
    expect(result.finalText).toBe(answer);
    // What `follow` does: page through the events from the start.
    let after = 0;
    let kinds: string[] = [];
    for (let page = 0; page < 10; page++) {
      const got = await handle.query(eventsQuery, { after });
      expect(jsonBytes(got)).toBeLessThan(MAX_EVENTS_PAGE_BYTES + 1024);
      kinds = kinds.concat(got.events.map((e) => e.kind));
      if (got.events.length === 0) break;
      after = got.cursor;
    }
    expect(kinds).toContain('answer');
    expect(kinds[kinds.length - 1]).toBe('run_finished');
    const events = (await handle.query(eventsQuery, {})).events;
    expect(events.find((e) => e.kind === 'answer')).toMatchObject({ truncated: true });
  });
}, 60_000);
