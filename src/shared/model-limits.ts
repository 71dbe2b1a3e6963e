/** Context window sizes in tokens. Runs may override with `contextWindowTokens`. */
export const DEFAULT_CONTEXT_WINDOW_TOKENS = 200_000;

/** Compaction starts when a call's prompt plus output passes this share of the context window. */
export const COMPACT_AT_FRACTION = 0.8;

/**
 * A conversation larger than this is compacted whatever its token count: it must fit, in full, in
 * one activity input (a resend after a cache miss) and in the continue-as-new input, both capped
 * at Temporal's 2 MiB payload limit, with room left for the rest of the input.
 */
export const DEFAULT_COMPACT_AT_BYTES = 1_400_000;

export function contextWindowOf(_model: string): number {
  // Every model in the price table serves at least 200K tokens; larger windows are opt-in per run.
  return DEFAULT_CONTEXT_WINDOW_TOKENS;
}
