/** Context window sizes in tokens. Runs may override with `contextWindowTokens`. */
export const DEFAULT_CONTEXT_WINDOW_TOKENS = 200_000;

/** Compaction starts when a call's prompt plus output passes this share of the context window. */
export const COMPACT_AT_FRACTION = 0.8;

export function contextWindowOf(_model: string): number {
  // Every model in the price table serves at least 200K tokens; larger windows are opt-in per run.
  return DEFAULT_CONTEXT_WINDOW_TOKENS;
}
