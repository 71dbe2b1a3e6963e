import type { Context } from '@temporalio/activity';
import type { ModelCallContext, ModelProgressEvent } from '../models/types';
import { cutChars } from '../shared/bounds';
import {
  PROGRESS_TAIL_CHARS,
  hasLocalWatchers,
  publishLocalProgress,
  type ModelProgressDetails,
  type StreamTail,
} from '../shared/live-progress';

/**
 * Longest gap between two heartbeats a model call sends: 40 % of its heartbeat timeout, between 1 s
 * and 10 s (8 s at the default 20 s timeout). Each heartbeat is a billable action; the timeout still
 * has 2½ gaps of room before Temporal declares the worker lost. A cancel (an interrupt) does not
 * wait for the next heartbeat: the call watches for it with unbilled describes and heartbeats at
 * once when it comes (`withCancelWatch`). The price: a follower elsewhere sees the streamed text in
 * bursts (docs/live-output.md).
 */
export const HEARTBEAT_GAP_SHARE = 0.4;
export const HEARTBEAT_GAP_MIN_MS = 1_000;
export const HEARTBEAT_GAP_MAX_MS = 10_000;

export function heartbeatGapMs(heartbeatTimeoutMs: number | undefined): number {
  if (heartbeatTimeoutMs === undefined || !(heartbeatTimeoutMs > 0)) return HEARTBEAT_GAP_MAX_MS;
  return Math.min(HEARTBEAT_GAP_MAX_MS, Math.max(HEARTBEAT_GAP_MIN_MS, heartbeatTimeoutMs * HEARTBEAT_GAP_SHARE));
}

/**
 * Once text streams, the first heartbeat goes this long after the first delta (a follower elsewhere
 * sees the answer begin), and each gap after it doubles up to the longest: +1, +3, +7, +15 s…
 */
export const FIRST_STREAM_HEARTBEAT_MS = 1_000;

/** Least gap between two in-process deliveries of a stream (a follower in this process), ms. */
export const LOCAL_PROGRESS_GAP_MS = 50;

export interface ModelProgressOptions {
  /** Key naming the call in the details (`model call`, `closing summary`). */
  label?: string;
  tailChars?: number;
  /** Longest gap between heartbeats; default from the activity's heartbeat timeout (`heartbeatGapMs`). */
  gapMs?: number;
  now?: () => number;
}

/** A model call's progress reporter: the `ModelCallContext` parts, and a heartbeat that skips the gap. */
export interface ModelProgress extends Pick<ModelCallContext, 'heartbeat' | 'progress'> {
  /** Sends a heartbeat now, whatever the gap (a cancel is waiting for its response). */
  beatNow(): void;
}

/** What of the activity's context the progress reporter uses: heartbeats, and who it is (in-process delivery). */
export type ProgressContext = Pick<Context, 'heartbeat'> & {
  info?: Pick<Context['info'], 'activityId' | 'attempt' | 'heartbeatTimeoutMs'> & {
    workflowExecution?: { workflowId: string; runId: string };
  };
};

/** One stream's bounded state: the total length and the newest `tailChars` characters. */
class Tail {
  chars = 0;
  private text = '';

  constructor(private readonly keep: number) {}

  add(delta: string): void {
    this.chars += delta.length;
    this.text += delta;
    // Trim only once the buffer is twice the bound: amortized O(1) per character.
    if (this.text.length > 2 * this.keep) this.text = this.trimmed();
  }

  snapshot(): StreamTail {
    return { chars: this.chars, tail: this.trimmed() };
  }

  private trimmed(): string {
    if (this.text.length <= this.keep) return this.text;
    let start = this.text.length - this.keep;
    // Never start on the second half of a surrogate pair: the offset stays exact (chars - tail.length).
    const code = this.text.charCodeAt(start);
    if (code >= 0xdc00 && code <= 0xdfff) start += 1;
    return this.text.slice(start);
  }
}

/**
 * The `heartbeat` and `progress` of a model call's `ModelCallContext`: deltas are accumulated
 * into bounded tails, and every heartbeat carries them, so `describe()`'s pending activities show
 * the answer as it streams (see `live-progress.ts`). The provider asks for a heartbeat every second
 * (and on bytes); one goes to the server only when the gap is over: the longest gap
 * (`heartbeatGapMs`) while the call waits for its first delta, then 1 s after it and doubling
 * (FIRST_STREAM_HEARTBEAT_MS), so a 20 s stream sends four (+1, +3, +7, +15 s). A follower in this
 * process gets the tails at once, at most every LOCAL_PROGRESS_GAP_MS (`watchLocalProgress`).
 */
export function modelProgress(ctx: ProgressContext, model: string, options: ModelProgressOptions = {}): ModelProgress {
  const now = options.now ?? Date.now;
  const label = options.label ?? 'model call';
  const keep = options.tailChars ?? PROGRESS_TAIL_CHARS;
  const longest = options.gapMs ?? heartbeatGapMs(ctx.info?.heartbeatTimeoutMs);
  let gap = longest;
  let streaming = false;
  const started = now();
  const shownModel = cutChars(model, 200);
  const streams: { thinking?: Tail; text?: Tail } = {};
  let phase: ModelProgressDetails['phase'] = 'waiting';
  let lastSent = started;
  const local = localDelivery(ctx, streams);

  const details = (): ModelProgressDetails => ({
    [label]: shownModel,
    elapsedSeconds: Math.round((now() - started) / 1000),
    phase,
    ...(streams.thinking ? { thinking: streams.thinking.snapshot() } : {}),
    ...(streams.text ? { text: streams.text.snapshot() } : {}),
  });
  const beatNow = () => {
    lastSent = now();
    ctx.heartbeat(details());
  };
  const heartbeat = () => {
    if (now() - lastSent < gap) return;
    if (streaming) gap = Math.min(longest, 2 * gap);
    beatNow();
  };
  const progress = (event: ModelProgressEvent) => {
    // Providers pass what the model streamed: take only what has the promised shape.
    const kind = (event as Partial<ModelProgressEvent> | null)?.kind;
    const delta = (event as Partial<ModelProgressEvent> | null)?.delta;
    if ((kind !== 'text' && kind !== 'thinking') || typeof delta !== 'string' || delta.length === 0) return;
    (streams[kind] ??= new Tail(keep)).add(delta);
    phase = kind;
    if (!streaming) {
      streaming = true;
      lastSent = now();
      gap = Math.min(longest, FIRST_STREAM_HEARTBEAT_MS);
    }
    local?.();
    heartbeat();
  };
  return { heartbeat, progress, beatNow };
}

/**
 * Delivers the streams to followers in this process (when there are any), at most every
 * LOCAL_PROGRESS_GAP_MS, the last delta of a burst included (a trailing delivery).
 */
function localDelivery(ctx: ProgressContext, streams: { thinking?: Tail; text?: Tail }): (() => void) | undefined {
  const info = ctx.info;
  const run = info?.workflowExecution;
  if (!info || !run) return undefined;
  const call = `${run.runId}/${info.activityId}`;
  let last = -Infinity;
  let trailing: NodeJS.Timeout | undefined;
  const deliver = () => {
    trailing = undefined;
    last = Date.now();
    publishLocalProgress(run.workflowId, {
      call,
      attempt: info.attempt,
      ...(streams.thinking ? { thinking: streams.thinking.snapshot() } : {}),
      ...(streams.text ? { text: streams.text.snapshot() } : {}),
    });
  };
  return () => {
    if (!hasLocalWatchers(run.workflowId) || trailing) return;
    const wait = LOCAL_PROGRESS_GAP_MS - (Date.now() - last);
    if (wait <= 0) deliver();
    else trailing = setTimeout(deliver, wait);
  };
}
