/**
 * The model call's cancel watch on its own: what it does with each answer the server may give (the
 * end to end case, an interrupt reaching a streaming call, is test/workflow/streamed-interrupt.test.ts).
 */
import { temporal } from '@temporalio/proto';
import { withCancelWatch, type CancelWatchContext } from '../../src/activities/cancel-watch';

const { PENDING_ACTIVITY_STATE_STARTED: STARTED, PENDING_ACTIVITY_STATE_CANCEL_REQUESTED: CANCEL_REQUESTED } =
  temporal.api.enums.v1.PendingActivityState;
const EVERY_MS = 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Described = { pendingActivities?: Array<{ activityId: string; state: number }> };

function context(describe: () => Promise<Described>, options: { isLocal?: boolean; noClient?: boolean } = {}) {
  let asked = 0;
  const ctx = {
    cancellationSignal: new AbortController().signal,
    info: {
      activityId: '3',
      isLocal: options.isLocal ?? false,
      workflowNamespace: 'default',
      workflowExecution: { workflowId: 'wf', runId: 'run' },
    },
    get client() {
      if (options.noClient) throw new Error('no client in this environment');
      return {
        workflowService: {
          describeWorkflowExecution: () => {
            asked += 1;
            return describe();
          },
        },
      };
    },
  } as unknown as CancelWatchContext;
  return { ctx, asked: () => asked };
}

test('a cancel the server shows as requested for this call brings one heartbeat at once, another call’s does not', async () => {
  let state = STARTED;
  const { ctx } = context(async () => ({
    pendingActivities: [
      { activityId: '2', state: CANCEL_REQUESTED },
      { activityId: '3', state },
    ],
  }));
  let beats = 0;
  await withCancelWatch(
    ctx,
    () => void (beats += 1),
    async () => {
      await sleep(5 * EVERY_MS);
      expect(beats).toBe(0);
      state = CANCEL_REQUESTED;
      await sleep(5 * EVERY_MS);
    },
    EVERY_MS,
  );
  // Once, and again only after twice the watch interval if the cancel still has not come.
  expect(beats).toBeGreaterThanOrEqual(1);
  expect(beats).toBeLessThanOrEqual(3);
});

test('the watch stops when the call ends: no describe after it', async () => {
  const { ctx, asked } = context(async () => ({ pendingActivities: [] }));
  const value = await withCancelWatch(
    ctx,
    () => {},
    () => sleep(3 * EVERY_MS).then(() => 'answer'),
    EVERY_MS,
  );
  expect(value).toBe('answer');
  const after = asked();
  expect(after).toBeGreaterThan(0);
  await sleep(5 * EVERY_MS);
  expect(asked()).toBe(after);
});

test('a server that fails every describe leaves the call alone: it returns, no heartbeat is forced', async () => {
  const { ctx, asked } = context(() => Promise.reject(new Error('PERMISSION_DENIED')));
  let beats = 0;
  const value = await withCancelWatch(
    ctx,
    () => void (beats += 1),
    () => sleep(5 * EVERY_MS).then(() => 7),
    EVERY_MS,
  );
  expect(value).toBe(7);
  expect(asked()).toBeGreaterThan(1);
  expect(beats).toBe(0);
});

test('without a client, and for a local activity, the call runs unwatched', async () => {
  for (const options of [{ noClient: true }, { isLocal: true }]) {
    const { ctx, asked } = context(async () => ({}), options);
    await expect(
      withCancelWatch(
        ctx,
        () => {},
        () => sleep(3 * EVERY_MS).then(() => 'ok'),
        EVERY_MS,
      ),
    ).resolves.toBe('ok');
    expect(asked()).toBe(0);
  }
});

test('a call that fails fails the same way through the watch', async () => {
  const { ctx } = context(async () => ({}));
  await expect(
    withCancelWatch(
      ctx,
      () => {},
      () => Promise.reject(new Error('model said no')),
      EVERY_MS,
    ),
  ).rejects.toThrow('model said no');
});

test('an interval of 0 (DURABLE_AGENT_CANCEL_WATCH=off) never asks the server', async () => {
  const { ctx, asked } = context(async () => ({ pendingActivities: [{ activityId: '3', state: CANCEL_REQUESTED }] }));
  let beats = 0;
  await expect(
    withCancelWatch(
      ctx,
      () => (beats += 1),
      () => sleep(5 * EVERY_MS).then(() => 'ok'),
      0,
    ),
  ).resolves.toBe('ok');
  expect({ asked: asked(), beats }).toEqual({ asked: 0, beats: 0 });
});
