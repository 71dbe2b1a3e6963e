import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { ModelCallContext, ModelProvider, ModelResolver } from '../models/types';
import { ErrorTypes } from '../shared/constants';
import type { ModelRequest } from '../shared/messages';
import type { Admission } from './admission';
import { rawTokenEstimate, TokenCalibration } from './estimate';
import type { Demand } from './key-budget';

/** Priority of a call whose run names none (docs/models.md: 1 first, 5 last). */
export const DEFAULT_PRIORITY = 3;
/**
 * A wait up to this long is spent inside the attempt (holding its slot, heartbeating); a longer one
 * ends the attempt at once with `DurableAgent.RateLimited` and Temporal starts the next attempt
 * after the wait: no slot held, no workflow task. Measured in bench/admission.ts.
 */
export const DEFAULT_INLINE_WAIT_MS = 2_000;
/** Heartbeat cadence while waiting inside an attempt (the SDK throttles what reaches the server). */
const WAIT_HEARTBEAT_MS = 1_000;

export interface AdmitOptions {
  inlineWaitMs?: number;
  /** Told of every wait: metrics. */
  onWait?: (wait: { provider: string; waitMs: number; priority: number; inline: boolean }) => void;
}

/** What a call waited for its key's budget in all, reported with its answer (the `rate_limited` event). */
export interface RateLimitedWait {
  provider: string;
  waitMs: number;
}

/**
 * The resolver's providers, each call admitted by its key's rate budget first (see `Admission`).
 * Outside an activity (a test calling a provider directly), and for providers without a
 * `rateLimitKey` (offline, scripted), calls go straight through.
 */
export function admitModels(models: ModelResolver, admission: Admission, options: AdmitOptions = {}): ModelResolver {
  const calibration = new TokenCalibration();
  const told = new Map<string, number>();
  const inlineWaitMs = options.inlineWaitMs ?? DEFAULT_INLINE_WAIT_MS;
  const wrapped = new WeakMap<ModelProvider, ModelProvider>();
  return (model) => {
    const provider = models(model);
    const key = provider.rateLimitKey;
    if (key === undefined) return provider;
    let admitted = wrapped.get(provider);
    if (!admitted) {
      admitted = {
        name: provider.name,
        rateLimitKey: key,
        call: async (request, ctx) => {
          let activity: Context;
          try {
            activity = Context.current();
          } catch {
            return provider.call(request, ctx);
          }
          const info = activity.info;
          const run = info.workflowExecution?.workflowId ?? info.activityId;
          const id = `${run}/${info.workflowExecution?.runId ?? ''}/${info.activityId}`;
          // From the run's input (checked again: activity input is hostile), else Temporal's priority.
          const tags = ctx.admission ?? {};
          const priority =
            validPriority(tags.priority) ?? validPriority(info.priority?.priorityKey) ?? DEFAULT_PRIORITY;
          const fairnessKey = validKey(tags.fairnessKey) ?? validKey(info.priority?.fairnessKey) ?? run;
          const raw = rawTokenEstimate(request);
          const ask = {
            id,
            priority,
            fairnessKey,
            demand: demandOf(calibration, run, raw, request),
          };
          const lastAttempt = info.attempt >= (info.retryPolicy?.maximumAttempts || Number.POSITIVE_INFINITY);
          let inline = 0;
          let ticket: number;
          for (;;) {
            const decision = admission.decide(key, provider.name, ask);
            if (decision.admitted) {
              ticket = decision.ticket;
              break;
            }
            // The last attempt waits here: failing it would fail the run.
            if (decision.waitMs > inlineWaitMs && !lastAttempt) {
              told.set(id, (told.get(id) ?? 0) + decision.waitMs);
              if (told.size > 10_000) told.delete(told.keys().next().value as string);
              options.onWait?.({ provider: provider.name, waitMs: decision.waitMs, priority, inline: false });
              throw waitFailure(provider.name, decision.waitMs);
            }
            options.onWait?.({ provider: provider.name, waitMs: decision.waitMs, priority, inline: true });
            await pause(decision.waitMs, activity, ctx.signal);
            inline += decision.waitMs;
          }
          const waited = inline + (told.get(id) ?? 0);
          told.delete(id);
          const observed: ModelCallContext = {
            ...ctx,
            rateLimits: (headers, status) => admission.observe(key, provider.name, headers, status, ticket),
          };
          const response = await provider.call(request, observed);
          calibration.learn(run, raw, response.usage);
          return waited > 0 ? { ...response, rateLimited: { provider: provider.name, waitMs: waited } } : response;
        },
      };
      wrapped.set(provider, admitted);
    }
    return admitted;
  };
}

function validPriority(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 5 ? value : undefined;
}

function validKey(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= 256 ? value : undefined;
}

function demandOf(calibration: TokenCalibration, run: string, raw: number, request: ModelRequest): Demand {
  const input = calibration.input(run, raw);
  const output = calibration.output(run, request.maxTokens);
  return { requests: 1, inputTokens: input, outputTokens: output, tokens: input + output };
}

/**
 * The attempt ends so that the call waits outside any worker: retryable, `nextRetryDelay` the wait.
 * Typed `DurableAgent.RateLimited`; the details say which provider and how long.
 */
export function waitFailure(provider: string, waitMs: number): ApplicationFailure {
  return ApplicationFailure.create({
    type: ErrorTypes.AdmissionWait,
    message: `waiting ${Math.ceil(waitMs / 1000)} s for the ${provider} rate budget`,
    nonRetryable: false,
    nextRetryDelay: waitMs,
    details: [{ provider, waitMs } satisfies RateLimitedWait],
  });
}

/** Sleeps `ms`, heartbeating, ended early by the activity's cancellation. */
function pause(ms: number, activity: Context, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(cancelled(signal));
    const beat = setInterval(() => activity.heartbeat(), WAIT_HEARTBEAT_MS);
    const done = setTimeout(finish, ms);
    function finish() {
      clearInterval(beat);
      clearTimeout(done);
      signal.removeEventListener('abort', onAbort);
      resolve();
    }
    function onAbort() {
      clearInterval(beat);
      clearTimeout(done);
      reject(cancelled(signal));
    }
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function cancelled(signal: AbortSignal): unknown {
  return signal.reason instanceof CancelledFailure ? signal.reason : new CancelledFailure('Model call cancelled');
}
