import fc from 'fast-check';
import { KeyBudget, RESERVATION_GRACE_MS, SEND_LEASE_MS, type CallAsk } from '../../../src/admission/key-budget';
import type { RateLimitReading } from '../../../src/admission/headers';
import { simulate } from './simulation';

const ask = (id: string, tokens: number, priority = 3, fairnessKey = id): CallAsk => ({
  id,
  priority,
  fairnessKey,
  demand: { requests: 1, inputTokens: tokens },
});
const reading = (limit: number, remaining: number, retryAfterMs?: number): RateLimitReading => ({
  limits: { inputTokens: { limit, remaining } },
  ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
});

describe('the rate budget of a provider key', () => {
  test('a key that never sent headers and has no settings admits every call at once', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(1e9), fc.integer({ min: 1, max: 5 }), fc.nat(10_000)), { maxLength: 200 }),
        (calls) => {
          const budget = new KeyBudget(0);
          let now = 0;
          for (const [tokens, priority, dt] of calls) {
            now += dt;
            expect(budget.decide(ask(`c${now}`, tokens, priority), now).admitted).toBe(true);
          }
        },
      ),
    );
  });

  test('admits what the reading leaves room for, then tells the next call the refill time it needs', () => {
    const budget = new KeyBudget(0, { margin: 0 });
    const first = budget.decide(ask('a', 100), 0);
    if (!first.admitted) throw new Error('first call must go');
    budget.observe(reading(60_000, 1000), first.ticket, 10);
    expect(budget.decide(ask('b', 900), 10).admitted).toBe(true);
    const third = budget.decide(ask('c', 600), 10);
    // 100 left, 600 wanted: 500 tokens at 1 token/ms.
    expect(third).toEqual({ admitted: false, waitMs: 500 });
    expect(budget.decide(ask('c', 600), 510).admitted).toBe(true);
  });

  test('a limit lowered mid-run is followed on the next call', () => {
    const budget = new KeyBudget(0, { margin: 0 });
    const a = budget.decide(ask('a', 10), 0);
    if (!a.admitted) throw new Error('unexpected');
    budget.observe(reading(600_000, 600_000), a.ticket, 1);
    const b = budget.decide(ask('b', 10), 2);
    if (!b.admitted) throw new Error('unexpected');
    // The provider lowers the key's limit to 6,000 a minute: the next decision uses it.
    budget.observe(reading(6_000, 100), b.ticket, 3);
    const c = budget.decide(ask('c', 5_000), 3);
    expect(c.admitted).toBe(false);
    if (!c.admitted) expect(c.waitMs).toBeGreaterThan(40_000);
  });

  test('a 429 blocks the key for its retry-after, and a refused call is not counted as spent', () => {
    const budget = new KeyBudget(0, { margin: 0 });
    const a = budget.decide(ask('a', 10), 0);
    if (!a.admitted) throw new Error('unexpected');
    budget.observe(reading(60_000, 0, 3_000), a.ticket, 5, 429);
    const b = budget.decide(ask('b', 1), 5);
    expect(b.admitted).toBe(false);
    if (!b.admitted) expect(b.waitMs).toBeGreaterThanOrEqual(3_000);
    expect(budget.snapshot(5).pendingSends).toBe(0);
  });

  test('a higher priority call waits behind no lower priority reservation', () => {
    const budget = new KeyBudget(0, { margin: 0 });
    const a = budget.decide(ask('a', 1), 0);
    if (!a.admitted) throw new Error('unexpected');
    budget.observe(reading(60_000, 0), a.ticket, 0);
    const batch = [1, 2, 3, 4, 5].map((i) => budget.decide(ask(`batch${i}`, 1000, 5), 0));
    const session = budget.decide(ask('session', 1000, 1), 0);
    const waits = batch.map((d) => (d.admitted ? 0 : d.waitMs));
    expect(session).toEqual({ admitted: false, waitMs: 1000 });
    expect(Math.max(...waits)).toBe(5000);
    // The batch call that came back first now waits behind the session call.
    const again = budget.decide(ask('batch1', 1000, 5), 1000);
    expect(again.admitted).toBe(false);
  });

  test('equal priorities share by fairness key: a key with many calls queued does not hold back another', () => {
    const budget = new KeyBudget(0, { margin: 0 });
    const a = budget.decide(ask('a', 1), 0);
    if (!a.admitted) throw new Error('unexpected');
    budget.observe(reading(60_000, 0), a.ticket, 0);
    const fanOut = Array.from({ length: 16 }, (_, i) => budget.decide(ask(`sub${i}`, 1000, 3, 'tenant-a'), 0));
    const other = budget.decide(ask('other', 1000, 3, 'tenant-b'), 0);
    const last = fanOut[15]!;
    expect(other.admitted).toBe(false);
    if (!other.admitted && !last.admitted) expect(other.waitMs).toBeLessThanOrEqual(2000);
    if (!last.admitted) expect(last.waitMs).toBeGreaterThanOrEqual(16_000);
  });

  test('reservations and sends are leases: a worker that never comes back stops holding budget', () => {
    const budget = new KeyBudget(0, { margin: 0 });
    const a = budget.decide(ask('a', 1), 0);
    if (!a.admitted) throw new Error('unexpected');
    budget.observe(reading(60_000, 0), a.ticket, 0);
    const held = budget.decide(ask('gone', 30_000), 0);
    expect(held.admitted).toBe(false);
    const due = held.admitted ? 0 : held.waitMs;
    expect(budget.snapshot(due + RESERVATION_GRACE_MS + 1).waiting).toBe(0);
    // Sends with no answer stop counting after SEND_LEASE_MS.
    const fresh = new KeyBudget(0, { margin: 0, operator: { inputTokensPerMinute: 1000 } });
    expect(fresh.decide(ask('x', 1000), 0).admitted).toBe(true);
    expect(fresh.decide(ask('y', 1000), 1).admitted).toBe(false);
    expect(fresh.snapshot(SEND_LEASE_MS + 1).pendingSends).toBe(0);
  });

  // Before its first answer a worker knows nothing of the key: the first calls (one each per run) fit the bucket here.
  test('property: one worker with exact estimates never has a call refused', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 50_000, max: 500_000 }),
        fc.integer({ min: 50, max: 3000 }),
        fc.integer({ min: 1, max: 30 }),
        (limit, answerMs, runs) => {
          const r = simulate({
            workers: 1,
            runsPerWorker: runs,
            iterations: 4,
            inputTokensPerMinute: limit,
            requestsPerMinute: 100_000,
            tokens: (run, i) => 500 + 97 * ((run * 7 + i * 13) % 11),
            latencyMs: 20,
            answerMs,
          });
          expect(r.rejected).toBe(0);
        },
      ),
      { numRuns: 25 },
    );
  });

  test('three workers on one key: at most 1 % refused, wall within 1.15x the ideal, and a clock skew changes nothing', () => {
    const base = {
      workers: 3,
      runsPerWorker: 20,
      iterations: 10,
      inputTokensPerMinute: 200_000,
      requestsPerMinute: 1000,
      tokens: (run: number, i: number) => 1000 + 300 * i + (run % 7) * 50,
      latencyMs: 30,
      answerMs: 800,
    };
    const on = simulate(base);
    expect(on.rejected / on.requests).toBeLessThanOrEqual(0.01);
    expect(on.wallMs / on.idealMs).toBeLessThanOrEqual(1.15);
    const off = simulate({ ...base, off: true });
    expect(off.rejected / off.requests).toBeGreaterThan(0.5);
  });
});
