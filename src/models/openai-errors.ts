/**
 * Classifies what an OpenAI-compatible call throws into the failures of docs/failure-semantics.md, as
 * `errors.ts` does for Anthropic (same `ErrorTypes`, same retryability, same `Retry-After`
 * handling through `retryDelayFromHeaders`, same cancellation through `cancellationFailure`).
 *
 * OpenAI's own conventions on top of the status table:
 * - a 429 whose code or type is `insufficient_quota` is a spend limit (no retry helps): non-retryable
 *   `ModelError.BillingLimit`; any other 429 is a retryable rate limit;
 * - an error sent inside the stream (the SDK raises an `APIError` without a status) maps by its
 *   `type`/`code` (`server_error` retryable, `invalid_request_error` not, …), unknown → retryable;
 * - `x-should-retry` overrides retryability either way, as the SDK itself obeys it.
 */
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { ErrorTypes } from '../shared/constants';
import { boundedMessage } from './error-body';
import {
  classifyStatus,
  classifyStreamError,
  STATUS_CLASSES,
  type Classification,
  type ErrorType,
} from './error-classes';
import { cancellationFailure, retryDelayFromHeaders, type ModelErrorDetails } from './errors';

const c = (type: ErrorType, retryable: boolean): Classification => ({ type, retryable });

/** OpenAI's stream error types and codes beyond the shared ones (error-classes.ts). */
const OPENAI_STREAM_CLASSES: Record<string, Classification> = {
  insufficient_quota: STATUS_CLASSES[402]!,
  rate_limit_exceeded: STATUS_CLASSES[429]!,
  tokens: STATUS_CLASSES[429]!,
  requests: STATUS_CLASSES[429]!,
  timeout: c(ErrorTypes.Timeout, true),
  server_error: c(ErrorTypes.ServerError, true),
};

const PROVIDER = 'OpenAI-compatible API';

/**
 * Turn anything an OpenAI-compatible call threw into the failure Temporal should see. Already
 * classified Temporal failures pass through. When `signal` has fired the error is a cancellation.
 */
export function classifyOpenAIError(err: unknown, signal?: AbortSignal): ApplicationFailure | CancelledFailure {
  if (err instanceof ApplicationFailure || err instanceof CancelledFailure) return err;
  if (signal?.aborted || err instanceof APIUserAbortError || nameOf(err) === 'AbortError') {
    return cancellationFailure(signal);
  }
  if (err instanceof APIConnectionTimeoutError) {
    return failure(c(ErrorTypes.Timeout, true), `${PROVIDER} request timed out: ${describe(err)}`, emptyDetails());
  }
  if (err instanceof APIConnectionError) {
    return failure(c(ErrorTypes.Connection, true), `${PROVIDER} connection error: ${describe(err)}`, emptyDetails());
  }
  if (err instanceof APIError) return classifyApiError(err);
  return classifyOther(err);
}

function classifyApiError(err: APIError): ApplicationFailure {
  const status = typeof err.status === 'number' ? err.status : null;
  const body = (typeof err.error === 'object' && err.error !== null ? err.error : {}) as Record<string, unknown>;
  const apiErrorType = typeof err.type === 'string' ? err.type : typeof body.type === 'string' ? body.type : null;
  const errorCode =
    typeof err.code === 'string' ? err.code : typeof body.code === 'string' ? (body.code as string) : null;
  const headers = err.headers ?? undefined;
  const requestId = (typeof err.requestID === 'string' && err.requestID) || headers?.get('x-request-id') || null;
  const retryAfterMs = retryDelayFromHeaders(headers) ?? null;

  let cls: Classification;
  cls = status === null ? classifyStreamError(OPENAI_STREAM_CLASSES, apiErrorType, errorCode) : classifyStatus(status);
  if (errorCode === 'insufficient_quota' || apiErrorType === 'insufficient_quota') {
    cls = c(ErrorTypes.BillingLimit, false);
  }
  const shouldRetry = headers?.get('x-should-retry');
  if (shouldRetry === 'true') cls = { ...cls, retryable: true };
  if (shouldRetry === 'false') cls = { ...cls, retryable: false };

  const what = [status === null ? 'stream error' : String(status), apiErrorType].filter(Boolean).join(' ');
  const code = errorCode && errorCode !== apiErrorType ? ` (${errorCode})` : '';
  const text = typeof body.message === 'string' && body.message ? body.message : stripStatus(err.message, status);
  const request = requestId ? ` (request ${requestId})` : '';
  return failure(cls, `${PROVIDER} ${what}${code}: ${text}${request}`, {
    status,
    apiErrorType,
    errorCode,
    requestId,
    retryAfterMs,
  });
}

/** Not an API response: a body that broke mid-stream, unparseable events, local setup. */
function classifyOther(err: unknown): ApplicationFailure {
  const chain = causeChain(err);
  const summary = describe(err);
  if (chain.some((e) => nameOf(e) === 'SyntaxError' || /malformed server-sent event/i.test(messageOf(e)))) {
    return failure(c(ErrorTypes.MalformedResponse, true), `${PROVIDER} returned a malformed response: ${summary}`);
  }
  if (chain.some(isConnectionFailure)) {
    return failure(c(ErrorTypes.Connection, true), `${PROVIDER} connection lost: ${summary}`);
  }
  return failure(c(ErrorTypes.Unknown, true), `${PROVIDER} call failed: ${summary}`);
}

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
  return /^(TypeError: )?terminated$|other side closed|socket hang up|fetch failed/i.test(messageOf(e));
}

function failure(
  cls: Classification,
  message: string,
  details: ModelErrorDetails = emptyDetails(),
): ApplicationFailure {
  const nextRetryDelay = cls.retryable && details.retryAfterMs !== null ? details.retryAfterMs : undefined;
  return ApplicationFailure.create({
    type: cls.type,
    // A hostile server's error text is cut: it ends up in the run's history and result.
    message: boundedMessage(message),
    nonRetryable: !cls.retryable,
    details: [details],
    ...(nextRetryDelay !== undefined ? { nextRetryDelay } : {}),
  });
}

function emptyDetails(): ModelErrorDetails {
  return { status: null, apiErrorType: null, errorCode: null, requestId: null, retryAfterMs: null };
}

/** The error's message, then its causes' distinct messages: `Connection error. <- other side closed`. */
function describe(err: unknown): string {
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

function stripStatus(message: string, status: number | null): string {
  return status !== null && message.startsWith(`${status} `) ? message.slice(String(status).length + 1) : message;
}
