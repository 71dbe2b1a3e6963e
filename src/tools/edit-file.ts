import type { Stats } from 'node:fs';
import { z } from 'zod';
import { defineTool } from './define-tool';
import { openRegularFile, replaceFile, withLocated, type Located } from '../safe-fs';
import { describeTextProblem, textProblem } from '../safe-fs/text-check';
import { numberedLine, plural, truncateLine } from './text';

/** Lines of unchanged context shown above and below an edit in the confirmation snippet. */
const SNIPPET_CONTEXT_LINES = 3;
/** The snippet never exceeds this many lines, however large the replacement. */
const SNIPPET_MAX_LINES = 20;
const SNIPPET_MAX_LINE_CHARS = 300;
/**
 * An edit holds the file in memory several times over (bytes, text, result), on the worker's main
 * thread: larger files are refused, before the edit and after it.
 */
export const MAX_EDIT_FILE_BYTES = 32 * 1024 * 1024;
/**
 * replace_all replaces at most this many occurrences. Without a bound, replacing a one-character
 * string in a 32 MiB file held the worker's main thread for seconds and took gigabytes.
 */
export const MAX_EDIT_REPLACEMENTS = 100_000;

const editFileInput = z.strictObject({
  path: z.string().min(1).describe('Path of the file to edit, relative to the workspace (or absolute inside it).'),
  old_string: z
    .string()
    .min(1, 'old_string must not be empty; use write_file to create a file')
    .describe(
      'The exact text to replace, including whitespace and indentation, without read_file line-number prefixes. ' +
        'It must occur exactly once in the file unless replace_all is true; include surrounding lines to make it unique.',
    ),
  new_string: z.string().describe('The text to put in its place (must differ from old_string).'),
  replace_all: z
    .boolean()
    .optional()
    .describe('Replace every occurrence of old_string instead of requiring exactly one (default false).'),
});

/** Start offsets of the non-overlapping occurrences of `needle` in `haystack`, at most `max` of them. */
function occurrences(haystack: string, needle: string, max: number): number[] {
  const found: number[] = [];
  for (
    let i = haystack.indexOf(needle);
    i !== -1 && found.length < max;
    i = haystack.indexOf(needle, i + needle.length)
  ) {
    found.push(i);
  }
  return found;
}

/** Replace at known offsets by slicing: `String.replace` would interpret `$&`, `$1`… in new_string. */
function replaceAt(text: string, at: number[], oldLength: number, replacement: string): string {
  let out = '';
  let last = 0;
  for (const start of at) {
    out += text.slice(last, start) + replacement;
    last = start + oldLength;
  }
  return out + text.slice(last);
}

/** 1-based line numbers of ascending character offsets, in one pass over the text. */
function linesOf(text: string, offsets: readonly number[]): number[] {
  const out: number[] = [];
  let line = 1;
  let nl = text.indexOf('\n');
  for (const offset of offsets) {
    for (; nl !== -1 && nl < offset; nl = text.indexOf('\n', nl + 1)) line += 1;
    out.push(line);
  }
  return out;
}

/**
 * A few numbered lines of the edited file around the first replacement, found from the replacement
 * outwards: the file is never split into lines whole (a 32 MiB file of newlines made 32 million strings).
 */
function snippet(updated: string, start: number, insertedLength: number): string {
  if (updated === '') return '(the file is now empty)';
  const end = start + Math.max(0, insertedLength - 1);
  const [firstChanged = 1, lastChanged = 1] = linesOf(updated, [start, end]);
  const from = Math.max(1, firstChanged - SNIPPET_CONTEXT_LINES);
  const to = Math.min(lastChanged + SNIPPET_CONTEXT_LINES, from + SNIPPET_MAX_LINES - 1);
  // Back from the first changed line to the start of line `from`.
  let at = start === 0 ? 0 : updated.lastIndexOf('\n', start - 1) + 1;
  for (let n = firstChanged; n > from; n--) at = at < 2 ? 0 : updated.lastIndexOf('\n', at - 2) + 1;
  const out: string[] = [];
  for (let n = from; n <= to && at < updated.length; n++) {
    const nl = updated.indexOf('\n', at);
    const lineEnd = nl === -1 ? updated.length : nl;
    // read_file shows CRLF lines without their `\r`; so does the snippet.
    const line = updated.slice(at, updated[lineEnd - 1] === '\r' && nl !== -1 ? lineEnd - 1 : lineEnd);
    out.push(numberedLine(n, truncateLine(line, SNIPPET_MAX_LINE_CHARS)));
    at = lineEnd + 1;
  }
  return out.join('\n');
}

/** Why old_string may not have matched, when we can tell. */
function notFoundHint(content: string, oldString: string): string {
  const trimmed = oldString.trim();
  if (trimmed !== oldString && trimmed && content.includes(trimmed)) {
    return ' The text matches when its leading/trailing whitespace is removed: check the indentation and blank lines.';
  }
  // Line by line, so that `\s*` cannot cross lines: `/^\s*\d+\t/m` backtracked quadratically (an
  // old_string of 40,000 blank lines held the worker's main thread for 2 s, 400,000 for minutes).
  if (oldString.split(/[\n\r\u2028\u2029]/).some((line) => /^\s*\d+\t/.test(line))) {
    return ' It looks like it includes read_file line-number prefixes; leave them out.';
  }
  return ' It must match the file exactly, including whitespace, indentation and line breaks; read the file again to copy it.';
}

/** Exact string replacement in a workspace file. */
export function createEditFileTool() {
  return defineTool({
    name: 'edit_file',
    description:
      'Replace an exact string in a workspace file. old_string must occur exactly once (add surrounding lines to ' +
      'make it unique) unless replace_all is true, in which case every occurrence is replaced. Read the file first ' +
      'and copy old_string exactly, without the line-number prefixes read_file adds. Returns the number of ' +
      'replacements and a numbered snippet of the result around the first edit.',
    inputSchema: editFileInput,
    sideEffect: 'mutating',
    async execute(input, ctx) {
      return withLocated(ctx.workspace, input.path, { followLinks: true }, async (located) => {
        const { content, stat } = await readEditableText(located);
        if (input.old_string === input.new_string) {
          throw new Error('old_string and new_string are identical; there is nothing to change.');
        }
        const shown = located.shown;
        let oldString = input.old_string;
        let newString = input.new_string;
        // One more than may be replaced, to tell "too many" apart.
        const max = MAX_EDIT_REPLACEMENTS + 1;
        let found = occurrences(content, oldString, max);
        // read_file shows CRLF files without their `\r`, so the model's strings have bare `\n`.
        if (found.length === 0 && content.includes('\r\n') && !oldString.includes('\r')) {
          const crlfOld = oldString.replace(/\n/g, '\r\n');
          const crlfFound = occurrences(content, crlfOld, max);
          if (crlfFound.length > 0) {
            oldString = crlfOld;
            newString = newString.replace(/\r?\n/g, '\r\n');
            found = crlfFound;
          }
        }

        if (found.length === 0) {
          throw new Error(`old_string was not found in '${shown}'.${notFoundHint(content, input.old_string)}`);
        }
        if (found.length === max) {
          throw new Error(
            `old_string occurs more than ${MAX_EDIT_REPLACEMENTS} times in '${shown}'; edit_file replaces at most ${MAX_EDIT_REPLACEMENTS} ` +
              'occurrences in one call. Use bash (for example sed) for a replacement this large.',
          );
        }
        if (found.length > 1 && input.replace_all !== true) {
          const lines = linesOf(content, found.slice(0, 10));
          throw new Error(
            `old_string occurs ${found.length} times in '${shown}' (at lines ${lines.join(', ')}` +
              `${found.length > lines.length ? ', …' : ''}). Include more surrounding context to make it unique, ` +
              'or set replace_all to true to replace every occurrence.',
          );
        }

        const growth = Buffer.byteLength(newString) - Buffer.byteLength(oldString);
        const newSize = Buffer.byteLength(content) + found.length * growth;
        if (newSize > MAX_EDIT_FILE_BYTES) {
          throw new Error(
            `The edit would make '${shown}' ${newSize} bytes; edit_file writes files up to ${MAX_EDIT_FILE_BYTES} ` +
              'bytes. Use bash for larger files.',
          );
        }
        const updated = replaceAt(content, found, oldString.length, newString);
        // A write by someone else between our read and our rename would be lost without a word.
        const now = await located.dir.lstatChild(located.name ?? '');
        if (!now || now.ino !== stat.ino || now.size !== stat.size || now.mtimeMs !== stat.mtimeMs) {
          throw new Error(`'${shown}' changed while it was being edited; read it again and retry the edit.`);
        }
        // A new file renamed over the old one: other hard links to the old file keep their content.
        await replaceFile({ ...located, stat }, Buffer.from(updated, 'utf8'));
        const firstStart = found[0] ?? 0;
        return (
          `Edited ${shown}: ${plural(found.length, 'replacement')}. ` +
          `Snippet of the result around the first edit:\n${snippet(updated, firstStart, newString.length)}`
        );
      });
    },
  });
}

/**
 * The located file's content as text, refused unless every byte of it is UTF-8 without NUL: only
 * then does decoding and re-encoding give back the very same bytes (CRLF and a BOM included).
 */
async function readEditableText(located: Located): Promise<{ content: string; stat: Stats }> {
  const { handle, stat } = await openRegularFile(located);
  let bytes: Buffer;
  try {
    if (stat.size > MAX_EDIT_FILE_BYTES) {
      throw new Error(
        `'${located.shown}' is ${stat.size} bytes; edit_file edits files up to ${MAX_EDIT_FILE_BYTES} bytes. ` +
          'Use bash (for example sed) for larger files.',
      );
    }
    bytes = await handle.readFile();
  } finally {
    await handle.close();
  }
  const problem = textProblem(bytes);
  if (problem) throw new Error(describeTextProblem(located.shown, problem, 'edit_file'));
  return { content: bytes.toString('utf8'), stat };
}
