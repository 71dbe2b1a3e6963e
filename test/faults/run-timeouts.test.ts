import {
  MODEL_HEARTBEAT_TIMEOUT,
  MODEL_RETRY,
  TOOL_HEARTBEAT_TIMEOUT,
  TOOL_RETRY,
  parseRunInput,
} from '../../src/shared';
import { modelActivityOptions, toolActivityOptions } from '../../src/shared/run-timeouts';

test('without timeouts the activity options are exactly the defaults in constants.ts', () => {
  expect(modelActivityOptions()).toMatchObject({ heartbeatTimeout: MODEL_HEARTBEAT_TIMEOUT, retry: MODEL_RETRY });
  expect(toolActivityOptions()).toMatchObject({ heartbeatTimeout: TOOL_HEARTBEAT_TIMEOUT, retry: TOOL_RETRY });
  expect(modelActivityOptions({})).toEqual(modelActivityOptions());
});

test('timeouts override heartbeat timeouts and attempts, and keep the rest of the retry policy', () => {
  const timeouts = { modelHeartbeatSeconds: 3, toolHeartbeatSeconds: 2.5, modelMaxAttempts: 4, toolMaxAttempts: 1 };
  const parsed = parseRunInput({ prompt: 'p', timeouts });
  expect(parsed).toMatchObject({ ok: true, input: { timeouts } });
  expect(modelActivityOptions(timeouts)).toMatchObject({
    heartbeatTimeout: 3000,
    retry: { ...MODEL_RETRY, maximumAttempts: 4 },
  });
  expect(toolActivityOptions(timeouts)).toMatchObject({
    heartbeatTimeout: 2500,
    retry: { ...TOOL_RETRY, maximumAttempts: 1 },
  });
});

test.each([
  [
    { modelHeartbeatSeconds: 1 },
    'timeouts.modelHeartbeatSeconds: timeouts.modelHeartbeatSeconds must be at least 2 seconds',
  ],
  [
    { toolHeartbeatSeconds: 601 },
    'timeouts.toolHeartbeatSeconds: timeouts.toolHeartbeatSeconds must be at most 600 seconds',
  ],
  [{ modelMaxAttempts: 0 }, 'timeouts.modelMaxAttempts: timeouts.modelMaxAttempts must be at least 1'],
  [{ modelMaxAttempts: 1000 }, 'timeouts.modelMaxAttempts: timeouts.modelMaxAttempts must be at most 50'],
  [{ toolMaxAttempts: 1.5 }, 'timeouts.toolMaxAttempts: timeouts.toolMaxAttempts must be a whole number of attempts'],
  [
    { toolHeartbeatSeconds: '5' },
    'timeouts.toolHeartbeatSeconds: timeouts.toolHeartbeatSeconds must be a number of seconds',
  ],
  [{ toolHeartbeat: 5 }, 'timeouts: Unrecognized key: "toolHeartbeat"'],
])('invalid timeouts %j are rejected with a readable reason', (timeouts, reason) => {
  const parsed = parseRunInput({ prompt: 'p', timeouts });
  expect(parsed.ok).toBe(false);
  if (!parsed.ok) expect(parsed.error).toBe(`Invalid run input: ${reason}`);
});
