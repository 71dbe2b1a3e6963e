/**
 * Well-formed UTF-16 text: no lone surrogate. A lone surrogate (half of a pair, left by a cut in the
 * middle of an emoji, or sent by a tool, a file, a hook or a client) becomes `\ud800` in the JSON of
 * a request, and the providers refuse such a body (400, "invalid JSON" / "invalid UTF-8"): the run
 * would end failed on a piece of data. Pure code: used by the worker and the workflow.
 */

/** What a lone surrogate becomes: U+FFFD REPLACEMENT CHARACTER, as `String.prototype.toWellFormed` does. */
export const REPLACEMENT_CHARACTER = '\ufffd';

type WellFormedString = string & { isWellFormed?: () => boolean; toWellFormed?: () => string };

/** Whether `text` holds no lone surrogate. */
export function isWellFormed(text: string): boolean {
  const s = text as WellFormedString;
  if (typeof s.isWellFormed === 'function') return s.isWellFormed();
  return !hasLoneSurrogate(text);
}

/** `text` with every lone surrogate replaced by U+FFFD; the same string when there is none. */
export function wellFormed(text: string): string {
  const s = text as WellFormedString;
  if (typeof s.toWellFormed === 'function') return s.isWellFormed!() ? text : s.toWellFormed();
  if (!hasLoneSurrogate(text)) return text;
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (isHigh(code) && i + 1 < text.length && isLow(text.charCodeAt(i + 1))) {
      out += text[i]! + text[i + 1]!;
      i += 1;
    } else out += isHigh(code) || isLow(code) ? REPLACEMENT_CHARACTER : text[i]!;
  }
  return out;
}

/**
 * A JSON value with every string (object keys included) made well-formed. Copy on write: a value
 * with nothing to replace is returned as it is, and so is every part of it that has nothing to
 * replace (a thinking block, its signature, stays the very same object).
 */
export function wellFormedJson<T>(value: T): T {
  return fix(value, 0) as T;
}

/** Deeper than this the value is passed as is: the providers' own bounds refuse far shallower values. */
const MAX_DEPTH = 256;

function fix(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return wellFormed(value);
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const fixed = fix(item, depth + 1);
      if (fixed !== item) (copy ??= value.slice())[i] = fixed;
    }
    return copy ?? value;
  }
  let copy: Record<string, unknown> | undefined;
  const entries = Object.entries(value as Record<string, unknown>);
  for (const [key, item] of entries) {
    const fixedKey = wellFormed(key);
    const fixed = fix(item, depth + 1);
    if (fixed === item && fixedKey === key) continue;
    if (!copy) copy = { ...(value as Record<string, unknown>) };
    if (fixedKey !== key) delete copy[key];
    // defineProperty, not assignment: a key `__proto__` (JSON.parse makes it an own key) stays a key.
    Object.defineProperty(copy, fixedKey, { value: fixed, enumerable: true, writable: true, configurable: true });
  }
  return copy ?? value;
}

/**
 * The first `end` UTF-16 units of `text`, one fewer when the cut would split a surrogate pair: a
 * prefix never ends with the high half of a pair (nor does a text already cut elsewhere).
 */
export function cutPrefix(text: string, end: number): string {
  const prefix = end >= text.length ? text : text.slice(0, Math.max(0, end));
  return prefix && isHigh(prefix.charCodeAt(prefix.length - 1)) ? prefix.slice(0, -1) : prefix;
}

/**
 * The last `count` UTF-16 units of `text`, one fewer when the cut would split a surrogate pair: a
 * suffix never starts with the low half of a pair.
 */
export function cutSuffix(text: string, count: number): string {
  const suffix = count >= text.length ? text : count <= 0 ? '' : text.slice(text.length - count);
  return suffix && isLow(suffix.charCodeAt(0)) ? suffix.slice(1) : suffix;
}

function hasLoneSurrogate(text: string): boolean {
  return /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
}

function isHigh(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLow(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
