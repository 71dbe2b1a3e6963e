/**
 * What a model call's heartbeat details say about its streamed answer, for followers (`run`,
 * `follow`, any client reading `describe()`'s pending activities). Heartbeat details live in the
 * server's mutable state, not in history: they cost history nothing while the call runs, and at
 * most one bounded copy when an attempt times out or fails.
 */

/**
 * Characters of each stream (thinking, text) a heartbeat carries: the newest ones. Bounds the
 * details at ~2 × 4 Ki characters (≤ 24 KiB UTF-8) whatever the answer's length; a follower
 * polling every second keeps up with any model short of ~4,000 characters a second.
 */
export const PROGRESS_TAIL_CHARS = 4096;

/** The newest part of one stream: `tail` holds characters `[chars - tail.length, chars)` of it. */
export interface StreamTail {
  /** Characters (UTF-16 units) streamed so far: a follower prints `tail` past what it printed already. */
  chars: number;
  tail: string;
}

/**
 * Heartbeat details of a model call. `model call` (or `closing summary`) and `elapsedSeconds` are
 * what the Web UI's Pending Activities has shown since before streaming; the rest is new.
 */
export interface ModelProgressDetails {
  [label: string]: unknown;
  elapsedSeconds: number;
  /** `waiting` until the first delta, then the kind of the latest one. */
  phase: 'waiting' | 'thinking' | 'text';
  thinking?: StreamTail;
  text?: StreamTail;
}

/** Reads a tail from untrusted JSON (another worker's details): undefined unless well formed. */
export function parseStreamTail(raw: unknown): StreamTail | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const { chars, tail } = raw as { chars?: unknown; tail?: unknown };
  if (typeof tail !== 'string' || typeof chars !== 'number' || !Number.isSafeInteger(chars)) return undefined;
  if (chars < tail.length) return undefined;
  return { chars, tail };
}

/** The streams in a model call's heartbeat details, or undefined when the details carry none. */
export function parseModelProgress(raw: unknown): { thinking?: StreamTail; text?: StreamTail } | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const details = raw as { thinking?: unknown; text?: unknown };
  const thinking = parseStreamTail(details.thinking);
  const text = parseStreamTail(details.text);
  if (!thinking && !text) return undefined;
  return { ...(thinking ? { thinking } : {}), ...(text ? { text } : {}) };
}

/**
 * In-process delivery: a model call's streams as a worker in this very process has them, for a
 * follower in the same process (`run` with its inline worker). No server round trip and no billable
 * action; the heartbeat details stay the channel for followers elsewhere.
 */
export interface LocalProgress {
  /** As followers name a call from `describe()`: `<runId>/<activityId>`. */
  call: string;
  attempt: number;
  thinking?: StreamTail;
  text?: StreamTail;
}

type LocalListener = (progress: LocalProgress) => void;
// eslint-disable-next-line no-restricted-syntax -- the process's listeners: activities and the CLI use this module, workflow code does not.
const localListeners = new Map<string, Set<LocalListener>>();

/** Calls `listener` with every progress of the run's model calls that a worker in this process makes; returns the unwatch. */
export function watchLocalProgress(workflowId: string, listener: LocalListener): () => void {
  let set = localListeners.get(workflowId);
  if (!set) localListeners.set(workflowId, (set = new Set()));
  set.add(listener);
  return () => {
    set.delete(listener);
    if (set.size === 0 && localListeners.get(workflowId) === set) localListeners.delete(workflowId);
  };
}

export function hasLocalWatchers(workflowId: string): boolean {
  return localListeners.has(workflowId);
}

/** A listener that throws is the follower's problem, never the model call's. */
export function publishLocalProgress(workflowId: string, progress: LocalProgress): void {
  for (const listener of localListeners.get(workflowId) ?? []) {
    try {
      listener(progress);
    } catch {
      // ignored: see above
    }
  }
}

/**
 * `includePartial`: what the in-flight model call has streamed so far, next to a page of events.
 * Bounded: at most PROGRESS_TAIL_CHARS of each stream (the newest), whatever the answer's length.
 * Not a logged event (no `seq`): it is read from the call's heartbeat details each time, never
 * stored in the run, so it costs history nothing; `text.chars` says how far the stream has got.
 */
export interface PartialOutput {
  kind: 'partial';
  /** `<runId>/<activityId>` of the model call: a new value is a new call (or a new execution). */
  call: string;
  /** The call's attempt: a retried call starts its stream over. */
  attempt: number;
  thinking?: StreamTail;
  text?: StreamTail;
}
