import { WorkflowFailedError } from '@temporalio/client';
import { CancelledFailure, defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { eventsQuery, interruptSignal, stateQuery, statusSearchAttribute } from '../../src/shared';
import { eventually, waitForState } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

/**
 * The status of a run is never stale or contradictory: a Temporal cancel stops the run the way an
 * interrupt does and says so everywhere, a continued-as-new execution stops saying `running`, and
 * what runs now is readable in Pending Activities and Current Details.
 */
const { suite, start } = useWorkflowSuite('status');

const EventType = temporal.api.enums.v1.EventType;

const statusOf = (sa: unknown) => (sa as Record<string, unknown[]> | undefined)?.[statusSearchAttribute.name]?.[0];

test('a Temporal cancel during a tool ends the run Canceled, records the tool call ending, and says cancelled everywhere', async () => {
  const model = new ScriptedModel([toolUse([{ name: 'bash', input: { command: 'sleep 30' } }]), text('never')]);
  await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, {});
    await waitForState(handle, (s) => s.activeTools.length === 1);
    const sentAt = Date.now();
    await handle.cancel();
    const err = await handle.result().catch((e: unknown) => e);
    expect(Date.now() - sentAt).toBeLessThan(10_000);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect((err as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);

    const description = await handle.describe();
    expect(description.status.name).toBe('CANCELLED');
    expect(statusOf(description.searchAttributes)).toBe('cancelled');
    // No activity is left drawn as pending: its cancellation is in history before the run closed.
    expect(description.raw.pendingActivities ?? []).toHaveLength(0);
    const types = ((await handle.fetchHistory()).events ?? []).map((e) => EventType[e.eventType ?? 0]);
    const closed = types.filter((t) =>
      /^EVENT_TYPE_ACTIVITY_TASK_(COMPLETED|FAILED|CANCELED|TIMED_OUT)$/.test(t ?? ''),
    );
    expect(types.filter((t) => t === 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED')).toHaveLength(closed.length);
    expect(types).toContain('EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED');
    expect(types).not.toContain('EVENT_TYPE_WORKFLOW_TASK_FAILED');

    expect((await handle.query(stateQuery)).status).toBe('cancelled');
    const last = (await handle.query(eventsQuery, {})).events.pop();
    expect(last).toMatchObject({ kind: 'run_finished', exitReason: 'cancelled' });
  });
});

test('a continued-as-new execution stops saying running; the new one says running', async () => {
  const steps = Array.from({ length: 8 }, () => toolUse([{ name: 'read_file', input: { path: 'nothing.txt' } }]));
  const model = new ScriptedModel([...steps, text('done')]);
  await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, { continueAsNewAfter: { events: 50 } });
    const result = await handle.result();
    expect(result.exitReason).toBe('completed');
    const first = suite.env.client.workflow.getHandle(handle.workflowId, handle.firstExecutionRunId);
    const description = await first.describe();
    expect(description.status.name).toBe('CONTINUED_AS_NEW');
    await eventually(
      async () => statusOf((await first.describe()).searchAttributes),
      (status) => expect(status).toBe('continued'),
    );
    const latest = await suite.env.client.workflow.getHandle(handle.workflowId).describe();
    expect(statusOf(latest.searchAttributes)).toBe('completed');
  });
});

test('Pending Activities shows what a tool call runs, and Current Details has no math and puts approvals first', async () => {
  const model = new ScriptedModel([
    toolUse([{ id: 'slow', name: 'bash', input: { command: 'sleep 4; echo finished' } }]),
    toolUse([{ id: 'ask_me', name: 'write_file', input: { path: 'a.txt', content: 'a' } }]),
    text('done'),
  ]);
  await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, { model: 'claude-haiku-4-5', maxBudgetUsd: 2, permissions: { write_file: 'ask' } });
    const details = await eventually(
      async () => (await handle.describe()).raw.pendingActivities?.[0]?.heartbeatDetails?.payloads ?? [],
      (payloads) => expect(payloads.length).toBeGreaterThan(0),
    );
    const beat = defaultPayloadConverter.fromPayload(details[0]!) as Record<string, unknown>;
    expect(beat).toMatchObject({ tool: 'bash', call: 'bash: sleep 4; echo finished' });
    expect(typeof beat.elapsedSeconds).toBe('number');

    await waitForState(handle, (s) => s.pendingApprovals.length === 1, 30_000);
    const metadata = (await handle.query('__temporal_workflow_metadata')) as { currentDetails?: string };
    const current = metadata.currentDetails ?? '';
    expect(current).not.toContain('$');
    expect(current.split('\n')[0]).toContain('awaiting approval');
    expect(current).toContain('ask_me');
    expect(current).toMatch(/cost [\d.]+ USD of 2 USD/);
    await handle.terminate('test over');
  });
}, 60_000);

test('an interrupt and a Temporal cancel that reach a waiting session together end it Canceled', async () => {
  // Both arrive while no worker runs, so the next worker sees them in one activation: the interrupt
  // ends the loop, and the cancel must still end the workflow Canceled (the run's closing steps wait
  // for its handlers in the cancelled root scope, where that wait rejects at once).
  const taskQueue = `status-both-${Date.now()}`;
  const model = new ScriptedModel([text('hello'), text('never')]);
  const handle = await withWorker(suite.env, { model, taskQueue }, async (tq) => {
    const started = await start(tq, { session: true });
    await waitForState(started, (s) => s.status === 'awaiting_input');
    return started;
  });
  await handle.signal(interruptSignal, { reason: 'stop' });
  await handle.cancel();
  await withWorker(suite.env, { model, taskQueue }, async () => {
    const err = await handle.result().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect((err as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
  });
  expect((await handle.describe()).status.name).toBe('CANCELLED');
});
