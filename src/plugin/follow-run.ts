import type { WorkflowExecutionDescription } from '@temporalio/client';
import type { AgentHandle } from '../client';
import { eventsQuery } from '../shared/definitions';
import { watchLocalProgress, type PartialOutput } from '../shared/live-progress';
import type { RunEvent } from '../shared/run';
import { liveSnapshotOf, type LiveSnapshot } from '../client/live-snapshot';

export interface FollowOptions {
  /** Start after this event `seq` (default 0: from the first event). */
  after?: number;
  /** How often to look at the run (default 500 ms, at least 50 ms). */
  intervalMs?: number;
  /** Stops following (the iterator returns). */
  signal?: AbortSignal;
  /**
   * Also yield the in-flight model call's streamed text as `partial` events, as it grows: read from
   * the call's heartbeat details (at most the newest 4,096 characters of each stream), or straight
   * from a worker in this process (docs/live-output.md).
   */
  partial?: boolean;
}

/**
 * The in-flight model call's streams so far (`PartialOutput`), and what they gained since the
 * previous `partial` event of the same call and attempt (everything at a new call or attempt: a
 * retried call streams again from the start). `gap`: characters went by unseen (more than a tail
 * holds between two looks), so `delta` does not join the previous one. Not a logged event (no
 * `seq`): the `model_call_finished` and `answer` events and the result hold the text whole.
 */
export interface PartialEvent extends PartialOutput {
  delta: { text?: string; thinking?: string };
  gap?: true;
}

/** What `follow({ partial: true })` yields. */
export type FollowEvent = RunEvent | PartialEvent;

/** A workflow task pending this long no longer holds back the events query (a worker may be down: the query says so). */
const PENDING_TASK_PATIENCE_MS = 3_000;
const MIN_INTERVAL_MS = 50;

/**
 * The run's events as they happen, until `run_finished` (or the run closed without one, or `signal`
 * aborted). Each look is a `describe()`, which is not a billable action; the `events` query (an
 * action) runs only when the run's history moved, since every event the run logs comes with a
 * workflow task. With `partial`, the same `describe()` gives the streamed text.
 */
export async function* followRun(
  handle: AgentHandle,
  options: FollowOptions,
): AsyncGenerator<FollowEvent, void, undefined> {
  const intervalMs = Math.max(MIN_INTERVAL_MS, Number.isFinite(options.intervalMs) ? options.intervalMs! : 500);
  const signal = options.signal;
  const wake = new Wake(signal);
  const partials = new PartialTracker();
  let local: LiveSnapshot | undefined;
  /** The newest call whose streams arrive in-process: its heartbeat details add nothing. */
  let localCall: string | undefined;
  const unwatch = options.partial
    ? watchLocalProgress(handle.workflowId, (progress) => {
        localCall = progress.call;
        local = progress;
        wake.now();
      })
    : undefined;
  let after = options.after ?? 0;
  let queried: string | undefined;
  let pending: { key: string; since: number } | undefined;
  let nextLook = 0;
  try {
    while (!signal?.aborted) {
      if (local) {
        const event = partials.next(local);
        local = undefined;
        if (event) yield event;
      }
      if (Date.now() >= nextLook) {
        const d = await handle.describe();
        nextLook = Date.now() + intervalMs;
        const key = `${d.runId}:${d.historyLength}:${d.status.name}`;
        const open = d.status.name === 'RUNNING' || d.status.name === 'CONTINUED_AS_NEW';
        if (options.partial) {
          // Read before the events query: a partial never follows the events of its call's end.
          const snapshot = await liveSnapshotOf(d, handle.client.options.loadedDataConverter);
          const event = snapshot && snapshot.call !== localCall ? partials.next(snapshot) : undefined;
          if (event) yield event;
        }
        if (key !== queried && (!open || !taskHoldsEvents(d, key))) {
          for (;;) {
            const page = await handle.query(eventsQuery, { after });
            for (const event of page.events) {
              if (event.kind === 'model_call_finished' || event.kind === 'model_call_failed') partials.callEnded();
              yield event;
              if (event.kind === 'run_finished') return;
            }
            after = page.cursor;
            if (!page.events.length) break;
          }
          queried = key;
        }
        if (!open && queried === key) return;
      }
      await wake.until(nextLook);
    }
  } finally {
    unwatch?.();
    wake.dispose();
  }

  /** A workflow task is pending (its events follow when it completes), for less than the patience. */
  function taskHoldsEvents(d: WorkflowExecutionDescription, key: string): boolean {
    if (!d.raw.pendingWorkflowTask) return false;
    if (pending?.key !== key) pending = { key, since: Date.now() };
    return Date.now() - pending.since < PENDING_TASK_PATIENCE_MS;
  }
}

/** Turns snapshots of a call's streams into `partial` events: only when a stream grew, with what it gained. */
class PartialTracker {
  private last: { call: string; text: number; thinking: number } | undefined;
  /** The call of the last partial once its end was logged: a snapshot of it that arrives late is stale. */
  private ended: string | undefined;

  callEnded(): void {
    this.ended = this.last?.call.slice(0, this.last.call.lastIndexOf('#'));
  }

  next(snapshot: LiveSnapshot): PartialEvent | undefined {
    if (snapshot.call === this.ended) return undefined;
    const call = `${snapshot.call}#${snapshot.attempt}`;
    const seen = this.last?.call === call ? this.last : { call, text: 0, thinking: 0 };
    const delta: PartialEvent['delta'] = {};
    let gap = false;
    for (const kind of ['thinking', 'text'] as const) {
      const stream = snapshot[kind];
      const fresh = stream ? stream.chars - seen[kind] : 0;
      if (!stream || fresh <= 0) continue;
      if (fresh > stream.tail.length) gap = true;
      delta[kind] = stream.tail.slice(Math.max(0, stream.tail.length - fresh));
    }
    if (delta.text === undefined && delta.thinking === undefined) return undefined;
    this.last = {
      call,
      text: Math.max(seen.text, snapshot.text?.chars ?? 0),
      thinking: Math.max(seen.thinking, snapshot.thinking?.chars ?? 0),
    };
    return {
      kind: 'partial',
      call: snapshot.call,
      attempt: snapshot.attempt,
      ...(snapshot.thinking ? { thinking: snapshot.thinking } : {}),
      ...(snapshot.text ? { text: snapshot.text } : {}),
      delta,
      ...(gap ? { gap: true as const } : {}),
    };
  }
}

/** A pause that ends at a time, at `now()` (progress arrived in-process), or when `signal` aborts. */
class Wake {
  private resolve: (() => void) | undefined;
  private early = false;

  private readonly onAbort = () => this.now();

  constructor(private readonly signal: AbortSignal | undefined) {
    signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  dispose(): void {
    this.signal?.removeEventListener('abort', this.onAbort);
  }

  now(): void {
    this.early = true;
    this.resolve?.();
  }

  until(at: number): Promise<void> {
    if (this.early) {
      this.early = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.resolve = undefined;
        this.early = false;
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, at - Date.now()));
      this.resolve = done;
    });
  }
}
