import type { LimitReading } from './headers';

/** How long the evidence of the other workers' share stays, ms (an exponentially decayed sum). */
export const FLEET_TAU_MS = 20_000;
/** Most workers one key is believed shared with: a bound on what one odd reading can make of the picture. */
export const MAX_FLEET = 32;

/**
 * One limited quantity of a key (requests, input tokens, …) as this worker sees it: a mirror of the
 * provider's token bucket. Anthropic documents its limits as a bucket of `limit` that refills
 * continuously at `limit` per minute; OpenAI's behave alike. The picture is the last reading
 * (`remaining` when an answer arrived, on this worker's monotonic clock) plus the refill since, minus
 * what the fleet sent that the reading cannot include yet. This worker knows only its own sends; the
 * fleet's are its own times the fleet factor: how much the whole key spent per unit this worker spent,
 * learned from successive readings (each reading's drop beyond the refill is everyone's spending, the
 * sends between the two readings' calls are this worker's). Workers that send alike (Temporal spreads
 * runs over them) then each hold back the others' share without talking to each other. No absolute time
 * from a header is used, so a clock skew between workers changes nothing.
 */
export class DimensionBudget {
  limit: number;
  /** `header`: the provider stated the limit; `settings`: DURABLE_AGENT_RATE_LIMITS did. */
  source: 'header' | 'settings';
  private level: number;
  private at: number;
  /** The ticket (send order) of the call whose answer gave the reading (−∞ before any reading). */
  ticket = Number.NEGATIVE_INFINITY;
  /** Decayed sums of the key's spending and this worker's, between readings. */
  private spent = { all: 0, own: 0, at: 0 };
  private readings = 0;

  constructor(limit: number, source: 'header' | 'settings', now: number) {
    this.limit = limit;
    this.source = source;
    this.level = limit;
    this.at = now;
    this.spent.at = now;
  }

  /** Refill per ms. */
  get rate(): number {
    return this.limit / 60_000;
  }

  /** How much the key spends per unit this worker spends (1: alone). */
  get fleet(): number {
    if (this.spent.own <= 0) return 1;
    return Math.min(MAX_FLEET, Math.max(1, this.spent.all / this.spent.own));
  }

  /**
   * What is left of the bucket now once what the fleet sent since the reading is counted: this
   * worker's sends the reading cannot include, times the fleet factor (the other workers' sends are
   * believed in the proportion the readings showed).
   */
  available(now: number, pendingOwn: number): number {
    const dt = Math.max(0, now - this.at);
    return Math.min(this.limit, this.level + this.rate * dt) - pendingOwn * this.fleet;
  }

  /** A send that was refused (429) took nothing: it no longer counts as this worker's spending. */
  refund(amount: number): void {
    this.spent.own = Math.max(0, this.spent.own - amount);
    this.spent.all = Math.max(this.spent.own, this.spent.all - amount);
  }

  /**
   * A reading from an answer to the call sent with `ticket`. `ownBetween`: what this worker's own
   * calls sent after the previous reading's call and up to this one (this one included) took. A
   * reading older than the one held (answers arrive out of order) only updates the limit.
   */
  observe(reading: LimitReading, ticket: number, now: number, ownBetween: number): void {
    const lowered = reading.limit < this.limit;
    this.limit = reading.limit;
    this.source = 'header';
    if (ticket < this.ticket) {
      // A lowered limit is followed at once, whatever the reading's age.
      if (lowered) this.level = Math.min(this.level, reading.limit);
      return;
    }
    if (this.readings > 0) {
      const refilled = Math.min(this.limit, this.level + this.rate * Math.max(0, now - this.at));
      const all = refilled - reading.remaining;
      const decay = Math.exp(-Math.max(0, now - this.spent.at) / FLEET_TAU_MS);
      // A bucket that refilled to the top hides what was spent: such a reading says nothing of the fleet.
      const full = refilled >= this.limit && reading.remaining >= this.limit * 0.99;
      if (!full && ownBetween > 0) {
        this.spent = {
          all: this.spent.all * decay + Math.max(ownBetween, all),
          own: this.spent.own * decay + ownBetween,
          at: now,
        };
      }
    }
    this.readings += 1;
    this.level = reading.remaining;
    this.at = now;
    this.ticket = ticket;
  }
  /** A 429 on this quantity: nothing is left now, whatever was believed. */
  exhausted(now: number): void {
    this.level = 0;
    this.at = now;
  }

  /** The figures `status` and metrics show. */
  snapshot(now: number, pendingOwn: number) {
    return {
      limit: this.limit,
      source: this.source,
      available: Math.round(this.available(now, pendingOwn)),
      fleet: Math.round(this.fleet * 100) / 100,
    };
  }
}
