/**
 * Small text helpers shared by the tools: every tool reports to a model through a bounded amount
 * of text, so truncation and line numbering are done the same way everywhere. Every cut falls on a
 * code point boundary: half an emoji would be a lone surrogate, which providers refuse.
 */
import { cutPrefix } from '../shared/well-formed';

/** Width of the line-number column in `cat -n` style output (as `cat -n` itself uses). */
const LINE_NUMBER_WIDTH = 6;

/** One `cat -n` style line: right-aligned number, a tab, the text. */
export function numberedLine(lineNumber: number, text: string): string {
  return `${String(lineNumber).padStart(LINE_NUMBER_WIDTH)}\t${text}`;
}

/**
 * Cut one long line to `max` characters with a marker saying how much was dropped. `fullLength`
 * is the line's real length when the caller only kept its start (streamed reads).
 */
export function truncateLine(line: string, max: number, fullLength = line.length): string {
  if (fullLength <= max) return line;
  const kept = cutPrefix(line, max);
  return `${kept}… [line truncated: ${fullLength - kept.length} more characters]`;
}

/**
 * Keep the start of `text` so that the result, note included, is at most `max` characters.
 * The note says how much was cut, so the model knows the output is incomplete.
 */
export function truncateTail(text: string, max: number): string {
  if (text.length <= max) return text;
  const note = (omitted: number) => `\n\n[Output truncated: ${omitted} of ${text.length} characters omitted.]`;
  // The note's length depends on the number it prints; size it with the worst case first.
  const kept = cutPrefix(text, Math.max(0, max - note(text.length).length));
  return kept + note(text.length - kept.length);
}

/** Split text into lines the way `cat` counts them: a trailing newline does not start a new line. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** `1 line`, `2 lines`. */
export function plural(n: number, word: string, pluralWord = `${word}s`): string {
  return `${n} ${n === 1 ? word : pluralWord}`;
}

/** A workspace-relative location in a sentence: `the workspace root` or `'src/app'`. */
export function describeLocation(shown: string): string {
  return shown === '.' ? 'the workspace root' : `'${shown}'`;
}

/** Control characters (C0, DEL, C1): a newline in a file name would otherwise start a line of its own. */
// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * A path as one unambiguous line of a listing: as it is, or, when it holds a control character
 * (or starts with `"`, so that no plain name reads as a quoted one), in double quotes with JSON
 * escapes (`"a\nb.txt"`), which is also how it is passed back in a tool call's JSON input.
 */
export function listedPath(p: string): string {
  return CONTROL_CHARS.test(p) || p.startsWith('"') ? JSON.stringify(p) : p;
}

/** Said after a listing that holds a quoted path. */
export const QUOTED_PATHS_NOTE =
  '(Paths in double quotes hold control characters, written as JSON escapes such as \\n; pass them with ' +
  'those characters, e.g. "a\\nb.txt" in the JSON input.)';
