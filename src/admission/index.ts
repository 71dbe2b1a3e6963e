/**
 * Admission of model calls by their provider key's rate budget (docs/models.md, "Rate limits"):
 * limits and what remains learned from the providers' headers (or DURABLE_AGENT_RATE_LIMITS), a call
 * admitted when its estimated tokens fit, otherwise told how long to wait, in priority and fair order.
 */
export { Admission, type AdmissionOptions } from './admission';
export { admitModels, waitFailure, DEFAULT_INLINE_WAIT_MS, DEFAULT_PRIORITY, type AdmitOptions } from './admit-models';
export type { RateLimitedWait } from './admit-models';
export { KeyBudget, RESERVATION_GRACE_MS, SEND_LEASE_MS, type CallAsk, type Decision, type Demand } from './key-budget';
export { DimensionBudget } from './dimension';
export { readRateLimitHeaders, readRetryAfter, type RateLimitReading, type Dimension } from './headers';
export { rawTokenEstimate, ratedInputTokens, TokenCalibration } from './estimate';
export { parseRateLimits, parseAdmissionSwitch, type RateLimitSettings, type OperatorLimits } from './settings';
