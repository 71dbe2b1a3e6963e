import { z } from 'zod';
import { MAX_HEADER_LIMIT } from './headers';

/** Providers whose keys admission knows by name (docs/models.md, "Rate limits"). */
export const ADMISSION_PROVIDERS = ['anthropic', 'openai'] as const;
export type AdmissionProvider = (typeof ADMISSION_PROVIDERS)[number];

/** Per-minute limits an operator sets for a provider that sends no rate-limit headers. */
export interface OperatorLimits {
  requestsPerMinute?: number;
  inputTokensPerMinute?: number;
  outputTokensPerMinute?: number;
}

export type RateLimitSettings = Partial<Record<AdmissionProvider, OperatorLimits>>;

const perMinute = (field: string) =>
  z
    .number({ error: `${field} must be a number per minute` })
    .int(`${field} must be a whole number`)
    .min(1, `${field} must be at least 1`)
    .max(MAX_HEADER_LIMIT, `${field} must be at most ${MAX_HEADER_LIMIT}`)
    .optional();

const limitsSchema = z.strictObject({
  requestsPerMinute: perMinute('requestsPerMinute'),
  inputTokensPerMinute: perMinute('inputTokensPerMinute'),
  outputTokensPerMinute: perMinute('outputTokensPerMinute'),
});

const settingsSchema = z.record(z.string(), limitsSchema).superRefine((value, ctx) => {
  for (const key of Object.keys(value)) {
    if (!(ADMISSION_PROVIDERS as readonly string[]).includes(key))
      ctx.addIssue({
        code: 'custom',
        path: [key],
        message: `a provider must be one of: ${ADMISSION_PROVIDERS.join(', ')}`,
      });
  }
});

/**
 * `DURABLE_AGENT_RATE_LIMITS`: JSON `{ "<provider>": { requestsPerMinute, inputTokensPerMinute,
 * outputTokensPerMinute } }`. Throws a message naming the variable and what it accepts.
 */
export function parseRateLimits(text: string | undefined): RateLimitSettings {
  if (text === undefined || text.trim() === '') return {};
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(
      'DURABLE_AGENT_RATE_LIMITS must be JSON, e.g. {"anthropic": {"requestsPerMinute": 50, "inputTokensPerMinute": 30000}}',
    );
  }
  const parsed = settingsSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length ? ` (at ${issue.path.join('.')})` : '';
    throw new Error(`DURABLE_AGENT_RATE_LIMITS${where}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data as RateLimitSettings;
}

/** `DURABLE_AGENT_ADMISSION`: `on` (default) or `off` (calls go out at once; 429s retry after `retry-after`). */
export function parseAdmissionSwitch(text: string | undefined): boolean {
  const value = (text ?? '').trim().toLowerCase();
  if (value === '' || value === 'on' || value === '1' || value === 'true') return true;
  if (value === 'off' || value === '0' || value === 'false') return false;
  throw new Error(`DURABLE_AGENT_ADMISSION must be 'on' or 'off', not ${JSON.stringify(text)}`);
}
