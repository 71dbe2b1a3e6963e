import type { Context } from '@temporalio/activity';
import type { ModelCallContext, ModelProgressEvent } from '../models/types';
import { cutChars } from '../shared/bounds';
import { PROGRESS_TAIL_CHARS, type ModelProgressDetails, type StreamTail } from '../shared/live-progress';

/**
 * Least gap between two heartbeats sent because text arrived, ms. Temporal's worker throttles
 * further (to its `maxHeartbeatThrottleInterval`, 1 s here) and sends the newest details it was
 * given at the end of each interval; this only keeps a fast stream from serializing its details
 * hundreds of times a second.
 */
export const PROGRESS_HEARTBEAT_MIN_GAP_MS = 250;

export interface ModelProgressOptions {
  /** Key naming the call in the details (`model call`, `closing summary`). */
  label?: string;
  tailChars?: number;
  minGapMs?: number;
  now?: () => number;
}

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
 * the answer as it streams (see `live-progress.ts`). Heartbeats on deltas are spaced at least
 * `minGapMs`; the provider's keep-alive heartbeat (every second) carries the newest tails too.
 */
export function modelProgress(
  ctx: Pick<Context, 'heartbeat'>,
  model: string,
  options: ModelProgressOptions = {},
): Pick<ModelCallContext, 'heartbeat' | 'progress'> {
  const now = options.now ?? Date.now;
  const label = options.label ?? 'model call';
  const keep = options.tailChars ?? PROGRESS_TAIL_CHARS;
  const minGap = options.minGapMs ?? PROGRESS_HEARTBEAT_MIN_GAP_MS;
  const started = now();
  const shownModel = cutChars(model, 200);
  const streams: { thinking?: Tail; text?: Tail } = {};
  let phase: ModelProgressDetails['phase'] = 'waiting';
  let lastSent = -Infinity;

  const details = (): ModelProgressDetails => ({
    [label]: shownModel,
    elapsedSeconds: Math.round((now() - started) / 1000),
    phase,
    ...(streams.thinking ? { thinking: streams.thinking.snapshot() } : {}),
    ...(streams.text ? { text: streams.text.snapshot() } : {}),
  });
  const heartbeat = () => {
    lastSent = now();
    ctx.heartbeat(details());
  };
  const progress = (event: ModelProgressEvent) => {
    // Providers pass what the model streamed: take only what has the promised shape.
    const kind = (event as Partial<ModelProgressEvent> | null)?.kind;
    const delta = (event as Partial<ModelProgressEvent> | null)?.delta;
    if ((kind !== 'text' && kind !== 'thinking') || typeof delta !== 'string' || delta.length === 0) return;
    (streams[kind] ??= new Tail(keep)).add(delta);
    phase = kind;
    if (now() - lastSent >= minGap) heartbeat();
  };
  return { heartbeat, progress };
}
