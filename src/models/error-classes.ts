import { ErrorTypes } from '../shared/constants';

export type ErrorType = (typeof ErrorTypes)[keyof typeof ErrorTypes];

/** What a provider's failure is: its `ErrorTypes` type and whether a retry may help. */
export interface Classification {
  type: ErrorType;
  retryable: boolean;
}

const c = (type: ErrorType, retryable: boolean): Classification => ({ type, retryable });

/**
 * docs/failure-semantics.md's status table, the one every provider applies (Anthropic: errors.ts,
 * OpenAI-compatible: openai-errors.ts); each adds only its own conventions on top (spend limits,
 * stream error types, `x-should-retry`).
 */
export const STATUS_CLASSES: Readonly<Record<number, Classification>> = {
  400: c(ErrorTypes.BadRequest, false),
  401: c(ErrorTypes.Authentication, false),
  402: c(ErrorTypes.BillingLimit, false),
  403: c(ErrorTypes.PermissionDenied, false),
  404: c(ErrorTypes.NotFound, false),
  408: c(ErrorTypes.Timeout, true),
  // A conflict is a server-side lock timeout: the SDKs retry it, so do we. ErrorTypes has no Conflict.
  409: c(ErrorTypes.ServerError, true),
  413: c(ErrorTypes.RequestTooLarge, false),
  422: c(ErrorTypes.Unprocessable, false),
  429: c(ErrorTypes.RateLimited, true),
  529: c(ErrorTypes.Overloaded, true),
};

/** Mid-stream error types both providers send (no status, only the body's type): classed as their status. */
export const STREAM_ERROR_CLASSES: Readonly<Record<string, Classification>> = {
  invalid_request_error: STATUS_CLASSES[400]!,
  authentication_error: STATUS_CLASSES[401]!,
  permission_error: STATUS_CLASSES[403]!,
  not_found_error: STATUS_CLASSES[404]!,
  rate_limit_error: STATUS_CLASSES[429]!,
  api_error: c(ErrorTypes.ServerError, true),
  overloaded_error: STATUS_CLASSES[529]!,
};

/** The class of an HTTP status: the table's, else any 5xx is a retryable server error, else unknown (retryable). */
export function classifyStatus(status: number): Classification {
  return STATUS_CLASSES[status] ?? (status >= 500 ? c(ErrorTypes.ServerError, true) : c(ErrorTypes.Unknown, true));
}

/** The class of a mid-stream error's type or code among `extra` and the shared types, else unknown (retryable). */
export function classifyStreamError(
  extra: Readonly<Record<string, Classification>>,
  ...names: (string | null | undefined)[]
): Classification {
  for (const name of names) {
    if (!name) continue;
    const cls = extra[name] ?? STREAM_ERROR_CLASSES[name];
    if (cls) return cls;
  }
  return c(ErrorTypes.Unknown, true);
}
