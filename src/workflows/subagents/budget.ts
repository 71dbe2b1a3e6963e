import { condition, workflowInfo } from '@temporalio/workflow';
import { utf8Length } from '../../shared/bounds';
import { ZERO_USAGE } from '../../shared/messages';
import { costOf } from '../../shared/pricing';
import type { RunState } from '../run/run-state';

/** Bytes of a request besides the conversation and the system prompt (tool definitions, framing): a generous guess. */
const REQUEST_OVERHEAD_BYTES = 8_192;

/** What a call's admission holds until the call has ended and its spending is counted. */
export interface Reservation {
  id: string;
  /** The reservation this run holds at its parent for it (a subagent's). */
  up?: string;
}

/** A subagent's line to its parent's budget: a reservation asked for there, and released there. */
export interface UpstreamBudget {
  /** The parent's grant (its id) for `usd`, or undefined when the tree's budget has no room left. */
  reserve(usd: number): Promise<string | undefined>;
  release(id: string): void;
}

/**
 * A tree's budget, reserved before each model call is admitted (docs/subagents.md). A call of any
 * run in the tree reserves its expected cost ({@link expectedCallUsd}) at this run, and a subagent's
 * reservation also at its parent, up to the top: the run whose `maxBudgetUsd` the tree shares. A call
 * is admitted while what the tree has spent plus what is reserved stays below the budget; otherwise it
 * waits for a reservation to end, or, with none left, is refused (the run ends `max_budget`). Each
 * reservation ends when its call's spending is counted, so the tree ends within one call's cost of its
 * budget (when a call costs at most what was expected of it), whatever the number of parallel subagents.
 */
export class TreeBudget {
  private readonly held = new Map<string, number>();
  private count = 0;

  constructor(
    private readonly limit: number,
    private readonly state: RunState,
    private readonly upstream: UpstreamBudget | undefined,
  ) {}

  /** Admits a call expected to cost `usd`: its reservation, or undefined when the budget has no room. */
  async admit(usd: number): Promise<Reservation | undefined> {
    await condition(() => this.fits() || this.held.size === 0);
    if (!this.fits()) return undefined;
    const id = `${workflowInfo().runId}.${++this.count}`;
    this.held.set(id, usd);
    if (!this.upstream) return { id };
    const up = await this.upstream.reserve(usd);
    if (up === undefined) {
      this.held.delete(id);
      return undefined;
    }
    return { id, up };
  }

  /** The call has ended and its spending is counted (or it never will be: its run ended). */
  release(reservation: Reservation | undefined): void {
    if (!reservation || !this.held.delete(reservation.id)) return;
    if (reservation.up !== undefined) this.upstream?.release(reservation.up);
  }

  /** What reservations hold now, in USD. */
  get reservedUsd(): number {
    let sum = 0;
    for (const usd of this.held.values()) sum += usd;
    return sum;
  }

  private fits(): boolean {
    const spent = this.state.costUsd;
    // An unknown price somewhere in the tree: its spending cannot be bounded by a sum.
    return spent === null || spent + this.reservedUsd < this.limit;
  }
}

/**
 * What the next model call of a run may cost at most, as far as the workflow can tell: the request's
 * input (the conversation, the system prompt and some overhead, at about 4 bytes a token, and never
 * less than the previous call's input) at the dearer of the model's input and cache-write prices, plus
 * `maxTokens` of output. 0 for a model without a price (such a run has no budget).
 */
export function expectedCallUsd(state: RunState, model: string, maxTokens: number): number {
  const bytes = state.conversation.bytes + utf8Length(state.context?.system ?? '') + REQUEST_OVERHEAD_BYTES;
  const input = Math.max(Math.ceil(bytes / 4), state.lastCallInputTokens);
  const plain = costOf(model, { ...ZERO_USAGE, inputTokens: input, outputTokens: maxTokens });
  const written = costOf(model, { ...ZERO_USAGE, cacheCreationInputTokens: input, outputTokens: maxTokens });
  return Math.max(plain ?? 0, written ?? 0);
}
