/**
 * Sizes as Temporal counts them (UTF-8 bytes of the JSON) and cutting text to a bound. Pure code:
 * used by the workflow, the worker and the client.
 */

/** UTF-8 length of a string without encoding it (the workflow sandbox has no Buffer). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i += 1;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** UTF-8 bytes of a value's JSON (0 for undefined). */
export function jsonBytes(value: unknown): number {
  const json = JSON.stringify(value);
  return json === undefined ? 0 : utf8Length(json);
}

/** `text` cut to at most `maxChars` UTF-16 units (never inside a surrogate pair), with `marker` appended when cut. */
export function cutChars(text: string, maxChars: number, marker = '…'): string {
  if (text.length <= maxChars) return text;
  let end = Math.max(0, maxChars - marker.length);
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return text.slice(0, end) + marker;
}

/** `text` cut to at most `maxBytes` UTF-8 bytes, with `marker` appended when cut. */
export function cutBytes(text: string, maxBytes: number, marker = '…'): string {
  if (text.length * 3 <= maxBytes || utf8Length(text) <= maxBytes) return text;
  const budget = Math.max(0, maxBytes - utf8Length(marker));
  // Each UTF-16 unit is at most 3 bytes: start from a prefix that surely fits and grow by halves.
  let lo = Math.floor(budget / 3);
  let hi = Math.min(text.length, budget);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (utf8Length(text.slice(0, mid)) <= budget) lo = mid;
    else hi = mid - 1;
  }
  // Never half a surrogate pair: a prefix ending in a high surrogate loses it.
  const code = text.charCodeAt(lo - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? lo - 1 : lo) + marker;
}

/**
 * A tool call's arguments for display: each string field cut to `maxChars`, at most 20 fields,
 * anything else as short JSON. Bounded whatever the model sent, so events, approvals and
 * heartbeat details stay small.
 */
export function previewInput(input: unknown, maxChars: number): unknown {
  if (typeof input === 'string') return cutChars(input, maxChars);
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    return cutChars(shortJson(input ?? null), maxChars);
  }
  const out: Record<string, unknown> = {};
  const entries = Object.entries(input as Record<string, unknown>);
  for (const [key, value] of entries.slice(0, 20)) {
    const name = cutChars(key, 100);
    if (typeof value === 'string') out[name] = cutChars(value, maxChars);
    else if (typeof value === 'number' || typeof value === 'boolean' || value === null) out[name] = value;
    else out[name] = cutChars(shortJson(value), maxChars);
  }
  if (entries.length > 20) out['…'] = `${entries.length - 20} more fields`;
  return out;
}

/** JSON for a preview; a value nested too deep to serialize is named, not thrown. */
function shortJson(value: unknown): string {
  if (nestsDeeperThan(value, MAX_MODEL_VALUE_DEPTH)) return `(nested deeper than ${MAX_MODEL_VALUE_DEPTH} levels)`;
  return JSON.stringify(value) ?? 'null';
}

/**
 * How deep a value the model sends (a native tool call's input, text-protocol parameters) may nest.
 * Workflow code walks these values recursively (previews, sizes, payload conversion); far deeper
 * nesting overflows the stack in every workflow task that touches it. Real tool schemas nest a few
 * levels.
 */
export const MAX_MODEL_VALUE_DEPTH = 64;

/**
 * Key of the placeholder input that stands in for a native tool call's input the model activity
 * refused (too deep to record): `{ [REFUSED_INPUT_KEY]: "<why>" }`. The workflow answers such a
 * call with an `is_error` result carrying the reason instead of running it.
 */
export const REFUSED_INPUT_KEY = '_durable_agent_refused_input';

/**
 * Whether `value` nests deeper than `maxDepth` arrays/objects. Iterative (an explicit stack), so
 * it cannot itself overflow on the values it exists to catch; stops at the first level too deep.
 */
export function nestsDeeperThan(value: unknown, maxDepth: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length) {
    const [current, depth] = stack.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (depth + 1 > maxDepth) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** The `is_error` text for a tool call whose input nests deeper than the bound. */
export function tooDeepInputError(maxDepth: number = MAX_MODEL_VALUE_DEPTH): string {
  return (
    `Error: this tool call was not run: its input nests deeper than ${maxDepth} levels of arrays and objects, ` +
    'the bound on what a model may send. Call the tool again with a flatter input.'
  );
}

/** Why a tool call's input cannot be run (refused by the model activity, or too deep), else undefined. */
export function unrunnableInput(input: unknown): string | undefined {
  if (typeof input === 'object' && input !== null && !Array.isArray(input)) {
    const refused = (input as Record<string, unknown>)[REFUSED_INPUT_KEY];
    if (typeof refused === 'string') return refused;
  }
  return nestsDeeperThan(input, MAX_MODEL_VALUE_DEPTH) ? tooDeepInputError() : undefined;
}
