/**
 * Text a model or a tool wrote (answers, commands, tool output, tool names, error messages) is
 * untrusted: printed raw, an escape sequence could move the cursor, rewrite what an approval line
 * says, set the window title or write the clipboard; a carriage return or a bidi override could
 * make a command read differently from what will run. Everything the CLI prints from such text
 * goes through here, which replaces each such character with a visible stand-in of its own and
 * leaves every other character as it is:
 *
 * - C0 controls (U+0000–U+001F) and DEL become their Unicode control pictures (ESC → `␛`,
 *   CR → `␍`, BEL → `␇`, DEL → `␡`). Newline and tab stay only in a multi-line body.
 * - C1 controls (U+0080–U+009F, among them the 8-bit CSI and OSC), the bidi embeddings, overrides
 *   and isolates (U+202A–U+202E, U+2066–U+2069), the directional marks (U+200E, U+200F, U+061C)
 *   and the line and paragraph separators (U+2028, U+2029) become `⟨U+XXXX⟩`.
 *
 * The mapping works one character at a time, so text printed in pieces (a streamed answer) comes
 * out the same as printed whole. `--json` output stays exact JSON: `inertJson` only writes as
 * `\uXXXX` escapes the few such characters JSON itself leaves raw.
 */

const UNSAFE_MULTILINE =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex
const UNSAFE_ONE_LINE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** The visible stand-in for one unsafe character. */
function standIn(char: string): string {
  const code = char.charCodeAt(0);
  if (code === 0x7f) return '\u2421';
  if (code < 0x20) return String.fromCharCode(0x2400 + code);
  return `⟨U+${code.toString(16).toUpperCase().padStart(4, '0')}⟩`;
}

/**
 * `text` with its control characters made visible, for a body of several lines: newlines and
 * tabs stay. A carriage return is shown too (`␍`): it would let a line overwrite itself.
 */
export function visibleText(text: string): string {
  return text.replace(UNSAFE_MULTILINE, standIn);
}

/** `text` with its control characters made visible, newlines and tabs included: for one line. */
export function visibleLine(text: string): string {
  return text.replace(UNSAFE_ONE_LINE, standIn);
}

const JSON_UNESCAPED = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * JSON text (from `JSON.stringify`) with the characters JSON leaves raw but a terminal obeys (DEL,
 * C1 controls, bidi controls, line separators) written as `\uXXXX` escapes: the same JSON value
 * when parsed, inert when printed. They can only occur inside strings, where the escape is valid.
 */
export function inertJson(json: string): string {
  return json.replace(JSON_UNESCAPED, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
