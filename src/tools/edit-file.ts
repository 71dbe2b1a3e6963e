import type { Stats } from 'node:fs';
import { z } from 'zod';
import { defineTool } from './define-tool';
import { openRegularFile, replaceFile, withLocated, type Located } from './safe-fs';
import { describeTextProblem, textProblem } from './safe-fs/text-check';
import { numberedLine, plural, splitLines, truncateLine } from './text';

/** Lines of unchanged context shown above and below an edit in the confirmation snippet. */
const SNIPPET_CONTEXT_LINES = 3;
/** The snippet never exceeds this many lines, however large the replacement. */
const SNIPPET_MAX_LINES = 20;
const SNIPPET_MAX_LINE_CHARS = 300;
/** An edit holds the file in memory several times over (bytes, text, result); larger files are refused. */
export const MAX_EDIT_FILE_BYTES = 32 * 1024 * 1024;

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

/** Start offsets of the non-overlapping occurrences of `needle` in `haystack`. */
function occurrences(haystack: string, needle: string): number[] {
  const found: number[] = [];
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) found.push(i);
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

/** 1-based line number of a character offset. */
function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line += 1;
  return line;
}

/** A few numbered lines of the edited file around the first replacement. */
function snippet(updated: string, start: number, insertedLength: number): string {
  const lines = splitLines(updated.replace(/\r\n/g, '\n'));
  const firstChanged = lineOf(updated, start);
  const lastChanged = lineOf(updated, start + Math.max(0, insertedLength - 1));
  const from = Math.max(1, firstChanged - SNIPPET_CONTEXT_LINES);
  const to = Math.min(lines.length, lastChanged + SNIPPET_CONTEXT_LINES, from + SNIPPET_MAX_LINES - 1);
  const out: string[] = [];
  for (let n = from; n <= to; n++) out.push(numberedLine(n, truncateLine(lines[n - 1] ?? '', SNIPPET_MAX_LINE_CHARS)));
  if (out.length === 0) out.push('(the file is now empty)');
  return out.join('\n');
}

/** Why old_string may not have matched, when we can tell. */
function notFoundHint(content: string, oldString: string): string {
  const trimmed = oldString.trim();
  if (trimmed !== oldString && trimmed && content.includes(trimmed)) {
    return ' The text matches when its leading/trailing whitespace is removed: check the indentation and blank lines.';
  }
  if (/^\s*\d+\t/m.test(oldString)) {
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
        let found = occurrences(content, oldString);
        // read_file shows CRLF files without their `\r`, so the model's strings have bare `\n`.
        if (found.length === 0 && content.includes('\r\n') && !oldString.includes('\r')) {
          const crlfOld = oldString.replace(/\n/g, '\r\n');
          const crlfFound = occurrences(content, crlfOld);
          if (crlfFound.length > 0) {
            oldString = crlfOld;
            newString = newString.replace(/\r?\n/g, '\r\n');
            found = crlfFound;
          }
        }

        if (found.length === 0) {
          throw new Error(`old_string was not found in '${shown}'.${notFoundHint(content, input.old_string)}`);
        }
        if (found.length > 1 && input.replace_all !== true) {
          const lines = found.slice(0, 10).map((at) => lineOf(content, at));
          throw new Error(
            `old_string occurs ${found.length} times in '${shown}' (at lines ${lines.join(', ')}` +
              `${found.length > lines.length ? ', …' : ''}). Include more surrounding context to make it unique, ` +
              'or set replace_all to true to replace every occurrence.',
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
