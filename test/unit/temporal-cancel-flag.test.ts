import { Activator } from '@temporalio/workflow/lib/internals';
import { temporalCancelRequested } from '../../src/workflows/steps/ending';

/**
 * An interrupt and a Temporal cancel both cancel the workflow's root scope (src/workflows/run/run.ts);
 * the run tells a Temporal cancel by the SDK activator's `cancelled` flag, which only the SDK's cancel
 * job sets. If an SDK upgrade moved it, an interrupt and a cancel arriving together would end the run
 * Completed instead of Canceled: this test says so first.
 */
type Global = { __TEMPORAL_ACTIVATOR__?: unknown };

afterEach(() => {
  delete (globalThis as Global).__TEMPORAL_ACTIVATOR__;
});

test("the SDK's cancel job sets the flag; cancelling the root scope alone does not", () => {
  const activator = new Activator({
    info: { workflowType: 'agentWorkflow' } as never,
    now: Date.now(),
    showStackTraceSources: false,
    sourceMap: undefined as never,
    getTimeOfDay: () => 0n,
    randomnessSeed: [1],
    registeredActivityNames: new Set(),
    stackTracesEnabled: false,
  } as never);
  (globalThis as Global).__TEMPORAL_ACTIVATOR__ = activator;
  expect(temporalCancelRequested()).toBe(false);
  activator.rootScope.cancel();
  expect(activator.rootScope.consideredCancelled).toBe(true);
  expect(temporalCancelRequested()).toBe(false);
  activator.cancelWorkflow({});
  expect(temporalCancelRequested()).toBe(true);
});

test('outside a workflow it is false', () => {
  expect(temporalCancelRequested()).toBe(false);
});
