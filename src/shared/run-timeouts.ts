import type { ActivityOptions } from '@temporalio/common';
import { z } from 'zod';
import { onFirstUse } from './built-once';
import {
  MODEL_HEARTBEAT_TIMEOUT,
  MODEL_RETRY,
  MODEL_START_TO_CLOSE_TIMEOUT,
  TOOL_HEARTBEAT_TIMEOUT,
  TOOL_RETRY,
  TOOL_START_TO_CLOSE_TIMEOUT,
} from './constants';

/** Bounds of the per-run overrides: a heartbeat timeout must leave room for the 1 s heartbeat cadence. */
export const RUN_TIMEOUT_LIMITS = {
  heartbeatSeconds: { min: 2, max: 600 },
  modelMaxAttempts: { min: 1, max: 50 },
  toolMaxAttempts: { min: 1, max: 10 },
} as const;

const heartbeatSeconds = (field: string) =>
  z
    .number({ error: `timeouts.${field} must be a number of seconds` })
    .min(
      RUN_TIMEOUT_LIMITS.heartbeatSeconds.min,
      `timeouts.${field} must be at least ${RUN_TIMEOUT_LIMITS.heartbeatSeconds.min} seconds`,
    )
    .max(
      RUN_TIMEOUT_LIMITS.heartbeatSeconds.max,
      `timeouts.${field} must be at most ${RUN_TIMEOUT_LIMITS.heartbeatSeconds.max} seconds`,
    )
    .optional();

const attempts = (field: string, { min, max }: { min: number; max: number }) =>
  z
    .number({ error: `timeouts.${field} must be a whole number of attempts` })
    .int(`timeouts.${field} must be a whole number of attempts`)
    .min(min, `timeouts.${field} must be at least ${min}`)
    .max(max, `timeouts.${field} must be at most ${max}`)
    .optional();

/**
 * Per-run overrides of the model and tool activities' liveness timeouts and retry bounds
 * (docs/failure-semantics.md). A heartbeat timeout is how long Temporal waits for a lost worker before it retries
 * the call elsewhere; omitted fields keep the defaults in `constants.ts`.
 */
export const runTimeoutsSchema = onFirstUse('run-timeouts', () =>
  z.strictObject({
    /** Heartbeat timeout of model calls (default 60 s). */
    modelHeartbeatSeconds: heartbeatSeconds('modelHeartbeatSeconds'),
    /** Heartbeat timeout of tool calls (default 30 s). */
    toolHeartbeatSeconds: heartbeatSeconds('toolHeartbeatSeconds'),
    /** Attempts per model call, the first included (default 10). */
    modelMaxAttempts: attempts('modelMaxAttempts', RUN_TIMEOUT_LIMITS.modelMaxAttempts),
    /** Attempts per tool call, the first included (default 3). A mutating tool never runs past attempt 1. */
    toolMaxAttempts: attempts('toolMaxAttempts', RUN_TIMEOUT_LIMITS.toolMaxAttempts),
  }),
);

export type RunTimeouts = z.output<ReturnType<typeof runTimeoutsSchema>>;

/** Options of the model activities (`firstModelCall`, `callModel`, `summarizeRun`) for a run. */
export function modelActivityOptions(timeouts: RunTimeouts = {}): ActivityOptions {
  return {
    startToCloseTimeout: MODEL_START_TO_CLOSE_TIMEOUT,
    heartbeatTimeout:
      timeouts.modelHeartbeatSeconds !== undefined ? timeouts.modelHeartbeatSeconds * 1000 : MODEL_HEARTBEAT_TIMEOUT,
    retry: {
      ...MODEL_RETRY,
      ...(timeouts.modelMaxAttempts !== undefined ? { maximumAttempts: timeouts.modelMaxAttempts } : {}),
    },
  };
}

/** Options of the tool activity (`runTool`) for a run. */
export function toolActivityOptions(timeouts: RunTimeouts = {}): ActivityOptions {
  return {
    startToCloseTimeout: TOOL_START_TO_CLOSE_TIMEOUT,
    heartbeatTimeout:
      timeouts.toolHeartbeatSeconds !== undefined ? timeouts.toolHeartbeatSeconds * 1000 : TOOL_HEARTBEAT_TIMEOUT,
    retry: {
      ...TOOL_RETRY,
      ...(timeouts.toolMaxAttempts !== undefined ? { maximumAttempts: timeouts.toolMaxAttempts } : {}),
    },
  };
}
