import { KeyBudget, type CallAsk } from '../../../src/admission/key-budget';
import type { RateLimitReading } from '../../../src/admission/headers';

/**
 * A discrete-event simulation of workers sharing one provider key, on a virtual clock: the provider
 * is a token bucket as Anthropic documents it (capacity = limit, refilled continuously at limit per
 * minute; a request beyond what is left is answered 429 with retry-after), each worker a KeyBudget.
 */
export interface SimulationOptions {
  workers: number;
  runsPerWorker: number;
  iterations: number;
  inputTokensPerMinute: number;
  requestsPerMinute: number;
  /** Input tokens of each call (the run's i-th call), as the provider counts them. */
  tokens: (run: number, iteration: number) => number;
  /** What the worker estimates for that call (default: exact). */
  estimate?: (actual: number) => number;
  /** ms from send to the provider's receipt, and from receipt to the answer. */
  latencyMs: number;
  answerMs: number;
  priority?: (run: number) => number;
  /** Admission off: every call goes at once, a 429 waits its retry-after (today's behaviour). */
  off?: boolean;
  /** Clock offsets of workers (skew) do not matter: budgets use only durations. Kept for the test's claim. */
  skewMs?: number[];
  onReject?: (t: number, worker: number, budget: KeyBudget, actual: number, left: number) => void;
}

export interface SimulationResult {
  requests: number;
  rejected: number;
  wallMs: number;
  idealMs: number;
  runEndMs: number[];
  waitsByRun: number[];
  rejectedAt: number[];
}

export function simulate(o: SimulationOptions): SimulationResult {
  const capacity = { tokens: o.inputTokensPerMinute, requests: o.requestsPerMinute };
  const bucket = { tokens: capacity.tokens, requests: capacity.requests, at: 0 };
  const refill = (t: number) => {
    const dt = t - bucket.at;
    bucket.tokens = Math.min(capacity.tokens, bucket.tokens + (capacity.tokens * dt) / 60_000);
    bucket.requests = Math.min(capacity.requests, bucket.requests + (capacity.requests * dt) / 60_000);
    bucket.at = t;
  };
  const budgets = Array.from({ length: o.workers }, () => new KeyBudget(0));
  type Ev = { t: number; seq: number; run: () => void };
  const queue: Ev[] = [];
  let seq = 0;
  const at = (t: number, run: () => void) => {
    queue.push({ t, seq: seq++, run });
  };
  let requests = 0;
  let rejected = 0;
  const rejectedAt: number[] = [];
  let totalTokens = 0;
  const runs = o.workers * o.runsPerWorker;
  const runEnd: number[] = new Array(runs).fill(0);
  const waits: number[] = new Array(runs).fill(0);
  for (let run = 0; run < runs; run++) {
    const worker = run % o.workers;
    const budget = budgets[worker]!;
    const priority = o.priority?.(run) ?? 3;
    let iteration = 0;
    let attempt = 0;
    const step = (t: number) => {
      if (iteration >= o.iterations) {
        runEnd[run] = t;
        return;
      }
      const actual = o.tokens(run, iteration);
      const ask: CallAsk = {
        id: `${run}/${iteration}`,
        priority,
        fairnessKey: String(run),
        demand: { requests: 1, inputTokens: (o.estimate ?? ((a) => a))(actual) },
      };
      let ticket = 0;
      if (!o.off) {
        const decision = budget.decide(ask, t);
        if (!decision.admitted) {
          waits[run]! += decision.waitMs;
          at(t + decision.waitMs, () => step(t + decision.waitMs));
          return;
        }
        ticket = decision.ticket;
      }
      requests++;
      const receipt = t + o.latencyMs;
      at(receipt, () => {
        refill(receipt);
        const ok = bucket.tokens >= actual && bucket.requests >= 1;
        if (ok) {
          bucket.tokens -= actual;
          bucket.requests -= 1;
          totalTokens += actual;
        } else {
          rejected++;
          rejectedAt.push(Math.round(receipt));
          o.onReject?.(receipt, worker, budget, actual, bucket.tokens);
        }
        const reading: RateLimitReading = {
          limits: {
            inputTokens: { limit: capacity.tokens, remaining: Math.floor(bucket.tokens) },
            requests: { limit: capacity.requests, remaining: Math.floor(bucket.requests) },
          },
        };
        const retryAfterMs = ok
          ? undefined
          : Math.ceil(((actual - bucket.tokens) * 60_000) / capacity.tokens / 1000) * 1000;
        if (retryAfterMs !== undefined) reading.retryAfterMs = Math.max(1000, retryAfterMs);
        const answered = receipt + (ok ? o.answerMs : 5);
        at(answered, () => {
          if (!o.off) budget.observe(reading, ticket, answered, ok ? 200 : 429);
          if (ok) {
            iteration++;
            attempt = 0;
            step(answered);
          } else {
            attempt++;
            // Temporal's retry: the server's retry-after, else exponential backoff from 1 s.
            const delay = reading.retryAfterMs ?? Math.min(60_000, 1000 * 2 ** (attempt - 1));
            waits[run]! += delay;
            at(answered + delay, () => step(answered + delay));
          }
        });
      });
    };
    at(0, () => step(0));
  }
  let now = 0;
  while (queue.length) {
    queue.sort((a, b) => a.t - b.t || a.seq - b.seq);
    const ev = queue.shift()!;
    now = ev.t;
    ev.run();
  }
  // The bucket starts full: the ideal is what the tokens beyond the first full bucket take to refill.
  const idealMs = Math.max(0, ((totalTokens - capacity.tokens) * 60_000) / capacity.tokens);
  return { rejectedAt, requests, rejected, wallMs: now, idealMs, runEndMs: runEnd, waitsByRun: waits };
}
