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
  /**
   * The provider's answer arrived (any status): its headers, for the rate budget of the call's key
   * (src/admission/). Providers that know their key's rate limits call it once per call.
   */
  rateLimits?: (headers: { get(name: string): string | null }, status: number) => void;
  /** The run's priority and fairness key for the call's admission (src/admission/), as the run's input gave them. */
  admission?: { priority?: number; fairnessKey?: string };
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
  /**
   * Names the provider key whose rate limits this provider's calls count against (provider, endpoint,
   * a fingerprint of the key); calls are then admitted by its budget (src/admission/). Unset: never limited.
   */
  readonly rateLimitKey?: string;
  call(request: ModelRequest, ctx: ModelCallContext): Promise<ModelResponse>;
}

/** Picks the provider for a model id (e.g. `offline-*` → offline, anything else → Anthropic). */
export type ModelResolver = (model: string) => ModelProvider;
