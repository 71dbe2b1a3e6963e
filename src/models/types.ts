import type { ModelRequest, ModelResponse } from '../shared/messages';

export interface ModelCallContext {
  /** Aborted when the activity is cancelled; providers pass it to their HTTP request. */
  signal: AbortSignal;
  /** Report liveness; streaming providers call it on every event. */
  heartbeat: (details?: unknown) => void;
  /**
   * Streamed output as it arrives: each text or thinking delta, in order. The activity turns it
   * into bounded heartbeat details that `run`/`follow` print live. Optional: non-streaming providers skip it.
   */
  progress?: (event: ModelProgressEvent) => void;
}

/** One streamed piece of a model's answer. */
export interface ModelProgressEvent {
  kind: 'text' | 'thinking';
  delta: string;
}

/**
 * A model provider. Implementations make exactly one attempt: Temporal alone owns retries.
 * Failures are thrown as `ApplicationFailure`s typed with `ErrorTypes` (retryable or not).
 */
export interface ModelProvider {
  readonly name: string;
  call(request: ModelRequest, ctx: ModelCallContext): Promise<ModelResponse>;
}

/** Picks the provider for a model id (e.g. `offline-*` → offline, anything else → Anthropic). */
export type ModelResolver = (model: string) => ModelProvider;
