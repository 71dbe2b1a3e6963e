import { readRateLimitHeaders, type HeaderBag } from './headers';
import { KeyBudget, type CallAsk, type Decision } from './key-budget';
import { ADMISSION_PROVIDERS, type AdmissionProvider, type RateLimitSettings } from './settings';

export interface AdmissionOptions {
  /** DURABLE_AGENT_RATE_LIMITS: limits for providers that send no headers. */
  limits?: RateLimitSettings;
  /** Share of each limit kept free (default 0.03): what the picture cannot see (other workers' calls in flight). */
  margin?: number;
  /** Monotonic ms clock (tests drive their own). */
  now?: () => number;
  /** Where warnings about broken headers go; each distinct warning at most once a minute. */
  warn?: (message: string) => void;
}

/** Most provider keys one worker keeps budgets for. */
const MAX_KEYS = 64;
const WARN_EVERY_MS = 60_000;

/**
 * Admission of model calls by a provider key's rate budget, on one worker: a `KeyBudget` per key
 * (provider, endpoint and a fingerprint of the key: never the key itself). Every worker on the same key
 * reads the same provider headers, which describe the key's global state, so the workers share one
 * picture without talking to each other (docs/models.md, "Rate limits").
 */
export class Admission {
  private readonly keys = new Map<string, KeyBudget>();
  private readonly warned = new Map<string, number>();
  readonly now: () => number;

  constructor(private readonly options: AdmissionOptions = {}) {
    this.now = options.now ?? (() => performance.now());
  }

  /** Admit a call now, or say how long it should wait (its place in the queue is kept meanwhile). */
  decide(key: string, provider: string, ask: CallAsk): Decision {
    return this.budget(key, provider).decide(ask, this.now());
  }

  /** An answer's headers (any status) for the call admitted with `ticket`. */
  observe(key: string, provider: string, headers: HeaderBag | null | undefined, status: number, ticket: number): void {
    const reading = readRateLimitHeaders(headers, (m) => this.warn(`${provider}: ${m}`));
    this.budget(key, provider).observe(reading, ticket, this.now(), status);
  }

  withdraw(key: string, id: string): void {
    this.keys.get(key)?.withdraw(id);
  }

  /** Every key's picture, for `status`-like reports and tests. */
  snapshot(): Record<string, ReturnType<KeyBudget['snapshot']>> {
    const now = this.now();
    const out: Record<string, ReturnType<KeyBudget['snapshot']>> = {};
    for (const [key, budget] of this.keys) out[key] = budget.snapshot(now);
    return out;
  }

  private budget(key: string, provider: string): KeyBudget {
    let budget = this.keys.get(key);
    if (!budget) {
      if (this.keys.size >= MAX_KEYS) this.keys.delete(this.keys.keys().next().value as string);
      const operator = isKnown(provider) ? this.options.limits?.[provider] : undefined;
      budget = new KeyBudget(this.now(), {
        ...(operator ? { operator } : {}),
        ...(this.options.margin !== undefined ? { margin: this.options.margin } : {}),
      });
      this.keys.set(key, budget);
    }
    return budget;
  }

  private warn(message: string): void {
    const now = this.now();
    const last = this.warned.get(message);
    if (last !== undefined && now - last < WARN_EVERY_MS) return;
    if (this.warned.size > 256) this.warned.clear();
    this.warned.set(message, now);
    (this.options.warn ?? ((m: string) => process.stderr.write(`durable-agent: ${m}\n`)))(message);
  }
}

function isKnown(provider: string): provider is AdmissionProvider {
  return (ADMISSION_PROVIDERS as readonly string[]).includes(provider);
}
