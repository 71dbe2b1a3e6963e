import { DimensionBudget } from './dimension';
import { DIMENSIONS, type Dimension, type RateLimitReading } from './headers';
import type { OperatorLimits } from './settings';

/** What one call takes of each limited quantity. */
export type Demand = Partial<Record<Dimension, number>>;

/** A model call asking to go out. */
export interface CallAsk {
  /** Stable across the call's attempts (workflow, run and activity id): a retry finds its place in the queue. */
  id: string;
  /** 1 (first) to 5; docs/models.md. */
  priority: number;
  /** Calls of one key share the budget fairly with other keys of their priority. */
  fairnessKey: string;
  demand: Demand;
}

/**
 * `ticket`: the send's place in this worker's order of sends; the answer's reading is filed under it
 * (what the reading includes is known by order, not by time: many calls go out in one millisecond).
 */
export type Decision = { admitted: true; ticket: number } | { admitted: false; waitMs: number };

/** A wait this long is how long a reservation is kept beyond its due time for its call to come back, ms. */
export const RESERVATION_GRACE_MS = 15_000;
/** A call sent this long ago no longer counts against the budget, answered or not (a lease), ms. */
export const SEND_LEASE_MS = 60_000;

interface Reservation {
  priority: number;
  tag: number;
  /** Order of arrival: breaks ties between equal tags. */
  seq: number;
  demand: Demand;
  expires: number;
}

interface Send {
  ticket: number;
  sentAt: number;
  demand: Demand;
}

export interface KeyBudgetOptions {
  /** Share of each limit kept free for what the picture cannot see (default 0.03). */
  margin?: number;
  /** DURABLE_AGENT_RATE_LIMITS for this key's provider, used where its answers state no limit. */
  operator?: OperatorLimits;
}

const OPERATOR_FIELDS: Record<Dimension, keyof OperatorLimits | undefined> = {
  requests: 'requestsPerMinute',
  inputTokens: 'inputTokensPerMinute',
  outputTokens: 'outputTokensPerMinute',
  tokens: undefined,
};

/**
 * The budget of one provider key on this worker: a `DimensionBudget` per limited quantity, this
 * worker's sends the readings cannot include yet (each a lease of SEND_LEASE_MS), the `retry-after` a
 * 429 asked for, and a queue of reservations of calls told to wait, ordered by priority, then by
 * fair share between fairness keys (start-time fair queueing: each key's calls are tagged with the
 * virtual time their demand would finish at). A call is admitted when every quantity has room for it
 * after the reservations ahead of it; otherwise it is told how long its share of the refill takes, and
 * its reservation (kept until its due time plus RESERVATION_GRACE_MS) holds its place. Nothing here is
 * kept for good: a worker that dies takes its reservations with it, and its sends run out.
 */
export class KeyBudget {
  private readonly dims = new Map<Dimension, DimensionBudget>();
  private sends: Send[] = [];
  private readonly reservations = new Map<string, Reservation>();
  private readonly lastTag = new Map<string, number>();
  private virtualTime = 0;
  private blockedUntil = 0;
  private tickets = 0;
  private arrivals = 0;
  private readonly margin: number;

  constructor(
    now: number,
    private readonly options: KeyBudgetOptions = {},
  ) {
    this.margin = options.margin ?? 0.03;
    for (const dim of DIMENSIONS) {
      const field = OPERATOR_FIELDS[dim];
      const limit = field ? options.operator?.[field] : undefined;
      if (limit !== undefined) this.dims.set(dim, new DimensionBudget(limit, 'settings', now));
    }
  }

  /** Whether anything limits this key yet (no headers and no settings: every call goes at once). */
  get limited(): boolean {
    return this.dims.size > 0 || this.blockedUntil > 0;
  }

  decide(ask: CallAsk, now: number): Decision {
    this.prune(now);
    const held = this.reservations.get(ask.id);
    const tag = held?.tag ?? this.tagFor(ask);
    const seq = held?.seq ?? ++this.arrivals;
    const me = { priority: ask.priority, tag, seq };
    const ahead = [...this.reservations.entries()]
      .filter(([id, r]) => id !== ask.id && precedes(r, me))
      .map(([, r]) => r);
    let waitMs = Math.max(0, this.blockedUntil - now);
    for (const [dim, budget] of this.dims) {
      const want = ask.demand[dim] ?? 0;
      if (want <= 0) continue;
      // The other workers' queues are believed like this one's (the fleet factor, see DimensionBudget).
      const queued = ahead.reduce((sum, r) => sum + (r.demand[dim] ?? 0), 0) * budget.fleet;
      const room = budget.available(now, this.pending(dim)) - queued;
      // A call larger than the whole limit goes when the bucket is full rather than never.
      const need = Math.min(want + budget.limit * this.margin, budget.limit);
      if (room < need) waitMs = Math.max(waitMs, (need - room) / budget.rate);
    }
    if (waitMs <= 0) {
      this.reservations.delete(ask.id);
      this.virtualTime = Math.max(this.virtualTime, tag);
      const ticket = ++this.tickets;
      this.sends.push({ ticket, sentAt: now, demand: ask.demand });
      return { admitted: true, ticket };
    }
    const wait = Math.ceil(waitMs);
    this.reservations.set(ask.id, {
      priority: ask.priority,
      tag,
      seq,
      demand: ask.demand,
      expires: now + wait + RESERVATION_GRACE_MS,
    });
    return { admitted: false, waitMs: wait };
  }

  /** An answer's reading (any status) for the call admitted with `ticket`; `status` 429 marks what it says is empty. */
  observe(reading: RateLimitReading, ticket: number, now: number, status?: number): void {
    // A refused call took nothing: it must count neither as pending nor as this worker's spending.
    if (status === 429) {
      const refused = this.sends.find((s) => s.ticket === ticket);
      if (refused) for (const [dim, budget] of this.dims) budget.refund(refused.demand[dim] ?? 0);
      this.sends = this.sends.filter((s) => s.ticket !== ticket);
    }
    for (const dim of DIMENSIONS) {
      const value = reading.limits[dim];
      if (!value) continue;
      let budget = this.dims.get(dim);
      if (!budget) {
        budget = new DimensionBudget(value.limit, 'header', now);
        this.dims.set(dim, budget);
      }
      budget.observe(value, ticket, now, this.sentBetween(dim, budget.ticket, ticket));
    }
    if (status === 429) {
      const after = reading.retryAfterMs ?? 1000;
      this.blockedUntil = Math.max(this.blockedUntil, now + after);
      // A 429 without readings: every known quantity may be the one exhausted.
      const told = DIMENSIONS.filter((d) => reading.limits[d]?.remaining === 0);
      for (const dim of told.length ? told : [...this.dims.keys()]) this.dims.get(dim)?.exhausted(now);
    }
    // Sends every reading includes are no longer pending anywhere.
    const oldest = Math.min(...[...this.dims.values()].map((d) => d.ticket));
    if (Number.isFinite(oldest)) this.sends = this.sends.filter((s) => s.ticket > oldest);
  }

  /** Forget a call's place in the queue (it failed for another reason, or was cancelled). */
  withdraw(id: string): void {
    this.reservations.delete(id);
  }

  /** What `status`, metrics and tests show of this key. */
  snapshot(now: number) {
    this.prune(now);
    const dims: Record<string, ReturnType<DimensionBudget['snapshot']>> = {};
    for (const [dim, budget] of this.dims) dims[dim] = budget.snapshot(now, this.pending(dim));
    return {
      dims,
      waiting: this.reservations.size,
      blockedMs: Math.max(0, this.blockedUntil - now),
      pendingSends: this.sends.length,
    };
  }

  private pending(dim: Dimension): number {
    const since = this.dims.get(dim)?.ticket ?? Number.NEGATIVE_INFINITY;
    let sum = 0;
    for (const s of this.sends) if (s.ticket > since) sum += s.demand[dim] ?? 0;
    return sum;
  }

  private sentBetween(dim: Dimension, after: number, upTo: number): number {
    let sum = 0;
    for (const s of this.sends) if (s.ticket > after && s.ticket <= upTo) sum += s.demand[dim] ?? 0;
    return sum;
  }

  /** Start-time fair queueing: a key's next call starts after its previous one, or now, whichever is later. */
  private tagFor(ask: CallAsk): number {
    const start = Math.max(this.virtualTime, this.lastTag.get(ask.fairnessKey) ?? 0);
    const cost = Math.max(1, ask.demand.inputTokens ?? ask.demand.tokens ?? ask.demand.requests ?? 1);
    const tag = start + cost;
    this.lastTag.set(ask.fairnessKey, tag);
    return tag;
  }

  private prune(now: number): void {
    for (const [id, r] of this.reservations) if (r.expires <= now) this.reservations.delete(id);
    if (this.sends.length && this.sends[0]!.sentAt <= now - SEND_LEASE_MS)
      this.sends = this.sends.filter((s) => s.sentAt > now - SEND_LEASE_MS);
    if (this.blockedUntil && this.blockedUntil <= now) this.blockedUntil = 0;
    // Keys whose calls all went are as fresh as any new key: their tags need not be kept.
    if (this.lastTag.size > 1000)
      for (const [key, tag] of this.lastTag) if (tag <= this.virtualTime) this.lastTag.delete(key);
  }
}

type Place = Pick<Reservation, 'priority' | 'tag' | 'seq'>;

function precedes(r: Place, me: Place): boolean {
  if (r.priority !== me.priority) return r.priority < me.priority;
  return r.tag !== me.tag ? r.tag < me.tag : r.seq < me.seq;
}
