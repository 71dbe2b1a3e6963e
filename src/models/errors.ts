/**
 * Classifies anything a model call throws into the one failure Temporal should see. This is the
 * only place that decides retryability (docs/failure-semantics.md); providers and activities just rethrow its
 * result.
 *
 * - HTTP errors map by status (400/401/402/403/404/413/422 non-retryable; 408/409/429/5xx retryable),
 *   with `nextRetryDelay` taken from `retry-after-ms` / `retry-after`, and `x-should-retry`
 *   overriding retryability either way, as the API intends.
 * - Spend limits: a 429 is a spend limit, hence non-retryable `ModelError.BillingLimit`, when the
 *   body's `error.details.error_code` (SDK: `err.errorCode`) names a spend limit
 *   (`contract_spend_limit_reached`, `enforced_spend_limit_reached`, or any `*spend_limit*` code),
 *   when `error.type` is `billing_error`, or, only when the body carries no error code at all, when
 *   the message speaks of a spend limit, usage limit or credit balance. `ramp_limit_exceeded`
 *   stays a retryable rate limit: the API asks for a retry after `retry-after`.
 * - Mid-stream `event: error` (the SDK raises an `APIError` without a status) maps by `error.type`.
 * - Cancellation (the activity's AbortSignal fired, so the SDK threw `APIUserAbortError`) becomes
 *   the signal's own `CancelledFailure` (Temporal aborts with one as the reason), or a new one; the
 *   Temporal worker reports an activity that throws it while cancelled as cancelled, not failed.
 *   The SDK's `APIUserAbortError` itself would be reported as a failure: its name is not `AbortError`.
 */
import {
  AnthropicError,
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from '@anthropic-ai/sdk';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { ErrorTypes } from '../shared/constants';
import { boundedMessage } from './error-body';
import {
  classifyStatus,
  classifyStreamError,
  STATUS_CLASSES,
  type Classification,
  type ErrorType,
} from './error-classes';

/** Plain-JSON facts about a failed call, attached as the failure's single detail. */
export interface ModelErrorDetails {
  /** HTTP status, or `null` for connection failures and mid-stream errors. */
  status: number | null;
  /** The body's `error.type`, e.g. `rate_limit_error`. */
  apiErrorType: string | null;
  /** The body's `error.details.error_code`, e.g. `enforced_spend_limit_reached`. */
  errorCode: string | null;
  requestId: string | null;
  /** The delay the server asked for, in milliseconds, when it asked for one. */
  retryAfterMs: number | null;
}

/**
 * A server-requested delay longer than this is treated as a mistake and capped, so one bad header
 * cannot park a run for days. Real rate-limit delays are seconds to a few minutes.
 */
export const MAX_RETRY_AFTER_MS = 60 * 60 * 1000;

/** Anthropic's stream error types beyond the shared ones (error-classes.ts). */
const ANTHROPIC_STREAM_CLASSES: Record<string, Classification> = {
  billing_error: STATUS_CLASSES[402]!,
  request_too_large: STATUS_CLASSES[413]!,
  timeout_error: { type: ErrorTypes.Timeout, retryable: true },
};

const SPEND_LIMIT_CODES = new Set(['contract_spend_limit_reached', 'enforced_spend_limit_reached']);
const SPEND_LIMIT_MESSAGE = /spend(ing)? limit|usage limit|credit balance/i;

/**
 * Turn anything a model call threw into the failure Temporal should see. Already-classified
 * Temporal failures pass through unchanged, so calling this twice is harmless.
 *
 * @param signal the call's AbortSignal: when it has fired, the error is a cancellation whatever
 *   its shape (an abort can surface as a connection error when it races the socket).
 */
export function classifyModelError(err: unknown, signal?: AbortSignal): ApplicationFailure | CancelledFailure {
  if (err instanceof ApplicationFailure || err instanceof CancelledFailure) return err;
  if (signal?.aborted || err instanceof APIUserAbortError || isAbortError(err)) return cancellationFailure(signal);
  if (err instanceof APIConnectionTimeoutError) {
    return failure(ErrorTypes.Timeout, true, `Anthropic API request timed out: ${describeCause(err)}`, emptyDetails());
  }
  if (err instanceof APIConnectionError) {
    return failure(
      ErrorTypes.Connection,
      true,
      `Anthropic API connection error: ${describeCause(err)}`,
      emptyDetails(),
    );
  }
  if (err instanceof APIError) return classifyApiError(err);
  return classifyOther(err);
}

/**
 * The failure that reports a cancelled call: the activity's own `CancelledFailure` when the
 * signal carries one (it does in a Temporal activity), else a new one.
 */
export function cancellationFailure(signal?: AbortSignal): CancelledFailure {
  const reason: unknown = signal?.reason;
  if (reason instanceof CancelledFailure) return reason;
  const why = reason instanceof Error ? reason.message : typeof reason === 'string' ? reason : undefined;
  return new CancelledFailure(why ? `Model call cancelled: ${why}` : 'Model call cancelled');
}

/**
 * The delay a response asks for before retrying, in ms: `retry-after-ms` (milliseconds), else
 * `retry-after` (seconds, or an HTTP date). `undefined` when absent, unparseable or not positive.
 */
export function retryDelayFromHeaders(headers: HeaderSource | null | undefined, now = Date.now()): number | undefined {
  const ms = headerValue(headers, 'retry-after-ms');
  if (ms !== undefined) {
    const value = Number.parseFloat(ms);
    if (Number.isFinite(value) && value > 0) return Math.min(Math.ceil(value), MAX_RETRY_AFTER_MS);
  }
  const after = headerValue(headers, 'retry-after');
  if (after !== undefined) {
    const seconds = Number(after.trim());
    const value = Number.isFinite(seconds) && after.trim() !== '' ? seconds * 1000 : Date.parse(after) - now;
    if (Number.isFinite(value) && value > 0) return Math.min(Math.ceil(value), MAX_RETRY_AFTER_MS);
  }
  return undefined;
}

/** `Headers`, or a plain record (case-insensitive lookup). */
export type HeaderSource = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

function headerValue(headers: HeaderSource | null | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof headers.get === 'function')
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}

function classifyApiError(err: APIError): ApplicationFailure {
  const status = typeof err.status === 'number' ? err.status : null;
  const apiErrorType = typeof err.type === 'string' ? err.type : null;
  const errorCode = typeof err.errorCode === 'string' ? err.errorCode : null;
  const apiMessage = typeof err.apiMessage === 'string' ? err.apiMessage : null;
  const headers = err.headers ?? undefined;
  const requestId = (typeof err.requestID === 'string' && err.requestID) || headerValue(headers, 'request-id') || null;
  const retryAfterMs = retryDelayFromHeaders(headers) ?? null;

  let cls: Classification;
  cls = status === null ? classifyStreamError(ANTHROPIC_STREAM_CLASSES, apiErrorType) : classifyStatus(status);
  if (apiErrorType === 'billing_error' || (status === 429 && isSpendLimit(errorCode, apiMessage))) {
    cls = { type: ErrorTypes.BillingLimit, retryable: false };
  }
  // The server knows best whether this attempt is worth repeating (the SDK obeys the same header).
  const shouldRetry = headerValue(headers, 'x-should-retry');
  if (shouldRetry === 'true') cls = { ...cls, retryable: true };
  if (shouldRetry === 'false') cls = { ...cls, retryable: false };

  const what = [status === null ? 'stream error' : String(status), apiErrorType].filter(Boolean).join(' ');
  const code = errorCode ? ` (${errorCode})` : '';
  const text = apiMessage ?? stripStatus(err.message, status);
  const request = requestId ? ` (request ${requestId})` : '';
  const message = `Anthropic API ${what}${code}: ${text}${request}`;
  return failure(cls.type, cls.retryable, message, { status, apiErrorType, errorCode, requestId, retryAfterMs });
}

function isSpendLimit(errorCode: string | null, apiMessage: string | null): boolean {
  if (errorCode !== null) return SPEND_LIMIT_CODES.has(errorCode) || /spend_limit/.test(errorCode);
  return apiMessage !== null && SPEND_LIMIT_MESSAGE.test(apiMessage);
}

/** Errors that are not API responses: broken streams, transport failures mid-body, local setup. */
function classifyOther(err: unknown): ApplicationFailure {
  const chain = causeChain(err);
  const summary = describeCause(err);
  if (chain.some((e) => nameOf(e) === 'SyntaxError' || STREAM_PROTOCOL_ERROR.test(messageOf(e)))) {
    return failure(
      ErrorTypes.MalformedResponse,
      true,
      `Anthropic API returned a malformed response: ${summary}`,
      emptyDetails(),
    );
  }
  if (chain.some(isConnectionFailure)) {
    return failure(ErrorTypes.Connection, true, `Anthropic API connection lost: ${summary}`, emptyDetails());
  }
  if (chain.some((e) => /Could not resolve authentication method/.test(messageOf(e)))) {
    return failure(
      ErrorTypes.Authentication,
      false,
      'No Anthropic credentials: set ANTHROPIC_API_KEY, or use the offline model (--model offline-demo).',
      emptyDetails(),
    );
  }
  const origin = err instanceof AnthropicError ? 'Anthropic SDK error' : 'Model call failed';
  return failure(ErrorTypes.Unknown, true, `${origin}: ${summary}`, emptyDetails());
}

/** What the SDK's MessageStream says when the event sequence is broken or ends early. */
const STREAM_PROTOCOL_ERROR =
  /stream ended without producing|request ended without sending any chunks|Unexpected event order|^SyntaxError: /;

const CONNECTION_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_ABORTED',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_CONNECT_TIMEOUT',
]);

function isConnectionFailure(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
  // undici ends a body whose socket died with TypeError('terminated'), caused by 'other side closed'.
  // The SDK keeps that as the cause, or, for an error from another realm (jest), as "TypeError: terminated".
  return /^(TypeError: )?terminated$|other side closed|socket hang up|fetch failed/i.test(messageOf(e));
}

function failure(type: ErrorType, retryable: boolean, message: string, details: ModelErrorDetails): ApplicationFailure {
  const nextRetryDelay = retryable && details.retryAfterMs !== null ? details.retryAfterMs : undefined;
  return ApplicationFailure.create({
    type,
    // A provider's error text is cut: it ends up in the run's history and result.
    message: boundedMessage(message),
    nonRetryable: !retryable,
    details: [details],
    ...(nextRetryDelay !== undefined ? { nextRetryDelay } : {}),
  });
}

function emptyDetails(): ModelErrorDetails {
  return { status: null, apiErrorType: null, errorCode: null, requestId: null, retryAfterMs: null };
}

/** The error's message followed by the distinct messages of its causes: `Connection error. <- other side closed`. */
function describeCause(err: unknown): string {
  const parts: string[] = [];
  for (const e of causeChain(err)) {
    const code = (e as { code?: unknown } | null)?.code;
    const text = messageOf(e) + (typeof code === 'string' && !messageOf(e).includes(code) ? ` (${code})` : '');
    if (text && !parts.includes(text)) parts.push(text);
  }
  return parts.join(' <- ') || String(err);
}

function causeChain(err: unknown): unknown[] {
  const chain: unknown[] = [];
  let current: unknown = err;
  while (current !== undefined && current !== null && !chain.includes(current) && chain.length < 10) {
    chain.push(current);
    current = typeof current === 'object' ? (current as { cause?: unknown }).cause : undefined;
  }
  return chain;
}

// Duck-typed: errors from undici live in Node's realm, so `instanceof Error` fails for them under jest.
function messageOf(e: unknown): string {
  const message = (e as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : typeof e === 'string' ? e : '';
}

function nameOf(e: unknown): string {
  const name = (e as { name?: unknown } | null)?.name;
  return typeof name === 'string' ? name : '';
}

function isAbortError(e: unknown): boolean {
  return nameOf(e) === 'AbortError';
}

function stripStatus(message: string, status: number | null): string {
  return status !== null && message.startsWith(`${status} `) ? message.slice(String(status).length + 1) : message;
}
