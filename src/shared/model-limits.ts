/**
 * Context window sizes in tokens. Runs may override with `contextWindowTokens`; the client may take
 * that from `DURABLE_AGENT_CONTEXT_WINDOW` (`contextWindowSetting`). Pure: workflow code calls
 * `contextWindowOf`, so it reads no environment.
 */
export const DEFAULT_CONTEXT_WINDOW_TOKENS = 200_000;

/**
 * The window assumed for an `openai:` model not listed below (a local or third-party model). Its
 * real size is whatever the server was started with (Ollama's `num_ctx`/`OLLAMA_CONTEXT_LENGTH`,
 * llama.cpp's `-c`, vLLM's `--max-model-len`), which no API reports: assume a modest one, so a run
 * compacts early rather than having its prompt cut by the server. Set the real size per run.
 */
export const DEFAULT_OPENAI_COMPATIBLE_CONTEXT_WINDOW_TOKENS = 32_768;

/** Compaction starts when a call's prompt plus output passes this share of the context window. */
export const COMPACT_AT_FRACTION = 0.8;

/**
 * A conversation larger than this is compacted whatever its token count: it must fit, in full, in
 * one activity input (a resend after a cache miss) and in the continue-as-new input, both capped
 * at Temporal's 2 MiB payload limit, with room left for the rest of the input.
 */
export const DEFAULT_COMPACT_AT_BYTES = 1_400_000;

/** Windows of OpenAI models, by model name after `openai:` (exact, or a dated snapshot `<name>-YYYY-MM-DD`). */
const OPENAI_CONTEXT_WINDOWS: Record<string, number> = {
  'gpt-4o': 128_000,
  'gpt-4o-mini': 128_000,
  'gpt-4.1': 1_047_576,
  'gpt-4.1-mini': 1_047_576,
  'gpt-4.1-nano': 1_047_576,
};

/** The context window of a model id, in tokens. */
export function contextWindowOf(model: string): number {
  if (!model.startsWith('openai:')) {
    // Every model in the price table serves at least 200K tokens; larger windows are opt-in per run.
    return DEFAULT_CONTEXT_WINDOW_TOKENS;
  }
  const name = model.slice('openai:'.length);
  const snapshot = /^(.*)-\d{4}-\d{2}-\d{2}$/.exec(name);
  const known = OPENAI_CONTEXT_WINDOWS[name] ?? (snapshot ? OPENAI_CONTEXT_WINDOWS[snapshot[1]!] : undefined);
  return known ?? DEFAULT_OPENAI_COMPATIBLE_CONTEXT_WINDOW_TOKENS;
}

/** The smallest window a run accepts (as `agentRunInputSchema` checks `contextWindowTokens`). */
const MIN_CONTEXT_WINDOW_TOKENS = 1_000;
const MAX_CONTEXT_WINDOW_TOKENS = 100_000_000;

/**
 * `DURABLE_AGENT_CONTEXT_WINDOW` as a run's `contextWindowTokens`: a whole number of tokens, or
 * with a `k` suffix (thousands: `32k`, `128k`). Undefined when unset or empty; anything else throws
 * an error that names the variable. For the client (the CLI), which passes its own environment.
 */
export function contextWindowSetting(env: Readonly<Record<string, string | undefined>>): number | undefined {
  const raw = env.DURABLE_AGENT_CONTEXT_WINDOW?.trim();
  if (!raw) return undefined;
  const match = /^(\d{1,9})(k?)$/i.exec(raw);
  const tokens = match ? Number(match[1]) * (match[2] ? 1000 : 1) : NaN;
  if (!Number.isSafeInteger(tokens) || tokens < MIN_CONTEXT_WINDOW_TOKENS || tokens > MAX_CONTEXT_WINDOW_TOKENS) {
    throw new Error(
      `DURABLE_AGENT_CONTEXT_WINDOW must be a whole number of tokens from ${MIN_CONTEXT_WINDOW_TOKENS} to ` +
        `${MAX_CONTEXT_WINDOW_TOKENS}, optionally with a k suffix (e.g. 32768 or 128k); got '${raw.slice(0, 40)}'.`,
    );
  }
  return tokens;
}
