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
  return cutChars(text.slice(0, lo), lo, '') + marker;
}

/**
 * A tool call's arguments for display: each string field cut to `maxChars`, at most 20 fields,
 * anything else as short JSON. Bounded whatever the model sent, so events, approvals and
 * heartbeat details stay small.
 */
export function previewInput(input: unknown, maxChars: number): unknown {
  if (typeof input === 'string') return cutChars(input, maxChars);
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    return cutChars(JSON.stringify(input ?? null) ?? 'null', maxChars);
  }
  const out: Record<string, unknown> = {};
  const entries = Object.entries(input as Record<string, unknown>);
  for (const [key, value] of entries.slice(0, 20)) {
    const name = cutChars(key, 100);
    if (typeof value === 'string') out[name] = cutChars(value, maxChars);
    else if (typeof value === 'number' || typeof value === 'boolean' || value === null) out[name] = value;
    else out[name] = cutChars(JSON.stringify(value) ?? 'null', maxChars);
  }
  if (entries.length > 20) out['…'] = `${entries.length - 20} more fields`;
  return out;
}
