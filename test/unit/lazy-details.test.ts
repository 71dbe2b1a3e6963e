import { defaultPayloadConverter, type RawValue } from '@temporalio/common';
import { getCurrentDetails, setCurrentDetails } from '@temporalio/workflow';
import { Activator } from '@temporalio/workflow/lib/internals';
import { lazyDetails } from '../../src/workflows/run/status';

/**
 * Current Details rendered when read (src/workflows/run/status.ts), on the SDK's real activator: the
 * metadata query (what the Web UI and `temporal workflow metadata` read) and `getCurrentDetails` see
 * a fresh render after each change, and nothing is rendered until one of them reads it.
 */
type Global = { __TEMPORAL_ACTIVATOR__?: unknown };

function activator(): Activator {
  const made = new Activator({
    info: { workflowType: 'agentWorkflow' } as never,
    now: Date.now(),
    showStackTraceSources: false,
    sourceMap: undefined as never,
    getTimeOfDay: () => 0n,
    randomnessSeed: [1],
    registeredActivityNames: new Set(),
    stackTracesEnabled: false,
  } as never);
  (globalThis as Global).__TEMPORAL_ACTIVATOR__ = made;
  return made;
}

/** What the SDK's metadata query answers with as Current Details (decoded from the payload it sends). */
function queried(made: Activator): unknown {
  const handler = made.queryHandlers.get('__temporal_workflow_metadata')!.handler as () => RawValue;
  return defaultPayloadConverter.fromPayload<{ currentDetails: unknown }>(handler().payload).currentDetails;
}

afterEach(() => {
  delete (globalThis as Global).__TEMPORAL_ACTIVATOR__;
});

test('renders only when read, once per batch of changes, and the query sees the latest state', () => {
  const made = activator();
  let state = 1;
  let renders = 0;
  const lazy = lazyDetails(() => {
    renders += 1;
    return `iteration ${state}`;
  });
  expect(lazy).toBeDefined();
  expect(queried(made)).toBe('');
  for (const next of [2, 3, 4, 5]) {
    state = next;
    lazy!.changed();
  }
  expect(renders).toBe(0);
  expect(queried(made)).toBe('iteration 5');
  expect(getCurrentDetails()).toBe('iteration 5');
  expect(renders).toBe(1);
  state = 6;
  lazy!.changed();
  expect(getCurrentDetails()).toBe('iteration 6');
  expect(renders).toBe(2);
});

test('setCurrentDetails still sets a value, kept until the next change', () => {
  const made = activator();
  const lazy = lazyDetails(() => 'rendered')!;
  lazy.changed();
  setCurrentDetails('set by hand');
  expect(queried(made)).toBe('set by hand');
  lazy.changed();
  expect(queried(made)).toBe('rendered');
});

test('without the field the SDK is expected to have, nothing is changed and the caller renders eagerly', () => {
  expect(lazyDetails(() => 'x')).toBeUndefined();
  const frozen = Object.freeze({ currentDetails: '' });
  (globalThis as Global).__TEMPORAL_ACTIVATOR__ = frozen;
  expect(lazyDetails(() => 'x')).toBeUndefined();
  expect(frozen.currentDetails).toBe('');
});

test('a render that throws answers with the last good value and why, so the metadata query still answers', () => {
  const made = activator();
  let broken = false;
  const lazy = lazyDetails(() => {
    if (broken) throw new Error('no state');
    return 'fine';
  })!;
  lazy.changed();
  expect(queried(made)).toBe('fine');
  broken = true;
  lazy.changed();
  expect(queried(made)).toBe('fine  \n(not up to date: no state)');
  lazy.changed();
  expect(queried(made)).toBe('fine  \n(not up to date: no state)');
  broken = false;
  lazy.changed();
  expect(queried(made)).toBe('fine');
});
