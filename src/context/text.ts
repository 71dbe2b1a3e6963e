import { cutBytes, utf8Length } from '../shared/bounds';

/** Text helpers of the context assembly: sizes in UTF-8 bytes, as the payload limits count them. */

export { utf8Length };

/**
 * A file's text that was read only up to its cap: cut back to the last line end when one is near,
 * so the model does not see half a line, and marked with `note` where it was cut.
 */
export function markCut(text: string, note: string): string {
  const lineEnd = text.lastIndexOf('\n');
  const body = lineEnd >= text.length * 0.75 ? text.slice(0, lineEnd + 1) : text;
  return `${body.endsWith('\n') ? body : body + '\n'}[… ${note}]`;
}

/** `text` within `maxBytes`, marked with `note` when it had to be cut. */
export function fitBytes(text: string, maxBytes: number, note: string): { text: string; truncated: boolean } {
  if (utf8Length(text) <= maxBytes) return { text, truncated: false };
  const marker = `\n[… ${note}]`;
  return { text: cutBytes(text, Math.max(0, maxBytes), marker), truncated: true };
}

/** Human byte counts for notes: `12,345 bytes`. */
export function bytesText(bytes: number): string {
  return `${bytes.toLocaleString('en-US')} bytes`;
}
