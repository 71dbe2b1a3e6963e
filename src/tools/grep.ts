import { promises as fs } from 'node:fs';
import { z } from 'zod';
import { MAX_TOOL_OUTPUT_CHARS } from '../shared/constants';
import { defineTool } from './define-tool';
import { runSearch, SEARCH_DEADLINE_MS, type GrepFileHits, type GrepQuery, type GrepResult } from './search';
import { FILE_TYPE_NAMES, fileTypeGlobs, unknownFileType } from './search/file-types';
import { GREP_MAX_LINE_CHARS, GREP_MULTILINE_MAX_FILE_BYTES, MAX_PATTERN_CHARS } from './search/limits';
import { describeLocation, plural, truncateLine } from './text';
import { comparePaths } from './walk';
import { realWorkspace, resolveInWorkspace, workspaceRelative } from '../safe-fs/workspace';

export { GREP_MAX_LINE_CHARS } from './search/limits';

/** Output lines (or files, or counts) shown when the model gives no head_limit. */
export const GREP_DEFAULT_HEAD_LIMIT = 1000;
const MAX_CONTEXT_LINES = 100;
/** Room kept free under the registry cap for the closing notes. */
const NOTE_RESERVE_CHARS = 600;

export interface GrepToolOptions {
  /** Stop a call after this long (default SEARCH_DEADLINE_MS). */
  deadlineMs?: number;
}

const grepInput = z.strictObject({
  pattern: z
    .string()
    .max(MAX_PATTERN_CHARS)
    .describe(
      'Regular expression (RE2 syntax, as in ripgrep: no back-references or look-around) to search for in file ' +
        'contents, matched line by line unless multiline is set (e.g. "function\\s+\\w+").',
    ),
  path: z
    .string()
    .min(1)
    .optional()
    .describe('File or directory to search, relative to the workspace (default: the workspace root).'),
  glob: z
    .string()
    .min(1)
    .max(MAX_PATTERN_CHARS)
    .optional()
    .describe(
      'Only search files matching this glob, e.g. "*.ts" or "*.{ts,tsx}" (matched against the file name at any depth) ' +
        'or "src/**/*.ts" (contains "/": matched against the path relative to `path`). A leading "!" excludes instead.',
    ),
  type: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe(
      'Only search files of this type, as ripgrep names them (e.g. "ts", "js", "py", "rust", "go", "java", "md", ' +
        `"json", "yaml", "sh"; all: ${FILE_TYPE_NAMES.join(', ')}). Combined with glob when both are given.`,
    ),
  multiline: z
    .boolean()
    .optional()
    .describe(
      'Let the pattern span lines, "." matching newlines too (like rg -U --multiline-dotall); each match is ' +
        `reported at the line where it starts. Files over ${GREP_MULTILINE_MAX_FILE_BYTES / (1024 * 1024)} MiB ` +
        'are skipped in this mode when the pattern can span lines. Default false.',
    ),
  output_mode: z
    .enum(['content', 'files_with_matches', 'count'])
    .optional()
    .describe(
      '"files_with_matches" (default): paths of files with at least one match. "content": the matching lines as ' +
        '"path:line:text" (context lines as "path-line-text", "--" between separate groups). "count": "path:N" ' +
        'matching lines per file.',
    ),
  case_insensitive: z.boolean().optional().describe('Match case-insensitively (like grep -i). Default false.'),
  line_numbers: z.boolean().optional().describe('Show line numbers in content mode (like grep -n). Default true.'),
  context_before: z
    .number()
    .int()
    .min(0)
    .max(MAX_CONTEXT_LINES)
    .optional()
    .describe('Lines of context to show before each match, content mode only (like grep -B).'),
  context_after: z
    .number()
    .int()
    .min(0)
    .max(MAX_CONTEXT_LINES)
    .optional()
    .describe('Lines of context to show after each match, content mode only (like grep -A).'),
  context: z
    .number()
    .int()
    .min(0)
    .max(MAX_CONTEXT_LINES)
    .optional()
    .describe('Lines of context before and after each match, content mode only (like grep -C).'),
  include_ignored: z
    .boolean()
    .optional()
    .describe(
      'Also search files that .gitignore excludes (build output, dependencies, caches). Default false: they are ' +
        'skipped, as ripgrep skips them.',
    ),
  head_limit: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(
      `Show at most this many output lines / files / counts (default ${GREP_DEFAULT_HEAD_LIMIT}). ` +
        'A note says how many more there are.',
    ),
});

/** Validated grep arguments. */
export type GrepInput = z.output<typeof grepInput>;

function formatContent(hits: GrepFileHits[], lineNumbers: boolean, withContext: boolean): string[] {
  const out: string[] = [];
  for (const file of hits) {
    let previous: number | undefined;
    for (const line of file.lines) {
      // `--` marks a gap, as grep and ripgrep print it, so separate groups are not read as adjacent.
      if (withContext && out.length > 0 && (previous === undefined || line.lineNumber !== previous + 1)) out.push('--');
      const sep = line.isMatch ? ':' : '-';
      const text = truncateLine(line.text, GREP_MAX_LINE_CHARS, line.length ?? line.text.length);
      out.push(lineNumbers ? `${file.path}${sep}${line.lineNumber}${sep}${text}` : `${file.path}${sep}${text}`);
      previous = line.lineNumber;
    }
  }
  return out;
}

/** Turn raw hits (and the search's notes) into the text the model sees. */
export function formatGrepResult(
  hits: GrepFileHits[],
  input: GrepInput,
  shownBase: string,
  withContext: boolean,
  notes: readonly string[] = [],
  filesNotKept = 0,
): string {
  const mode = input.output_mode ?? 'files_with_matches';
  const sorted = [...hits].sort((a, b) => comparePaths(a.path, b.path));
  const noteText = notes.length ? `\n[${notes.join(' ')}]` : '';
  if (sorted.length === 0) {
    return `No matches found for pattern '${input.pattern}' in ${describeLocation(shownBase)}.${noteText}`;
  }

  let lines: string[];
  let unit: string;
  if (mode === 'files_with_matches') {
    lines = sorted.map((f) => f.path);
    unit = 'file';
  } else if (mode === 'count') {
    lines = sorted.map((f) => `${f.path}:${f.matchCount}`);
    unit = 'file';
  } else {
    lines = formatContent(sorted, input.line_numbers ?? true, withContext);
    unit = 'line';
  }

  const limit = input.head_limit ?? GREP_DEFAULT_HEAD_LIMIT;
  const budget = MAX_TOOL_OUTPUT_CHARS - NOTE_RESERVE_CHARS;
  const shown: string[] = [];
  let used = 0;
  for (const line of lines) {
    if (shown.length >= limit || used + line.length + 1 > budget) break;
    shown.push(line);
    used += line.length + 1;
  }
  const total = lines.length + filesNotKept;
  if (shown.length < total) {
    const why = shown.length >= limit ? `head_limit ${limit}` : `the ${MAX_TOOL_OUTPUT_CHARS}-character output limit`;
    shown.push(
      `… ${plural(total - shown.length, `more ${unit}`)} not shown (${total} in total; stopped at ${why}). ` +
        'Narrow the search with path, glob or a more specific pattern.',
    );
  }
  return shown.join('\n') + noteText;
}

/** Search file contents by regular expression (RE2, in a search thread with a deadline). */
export function createGrepTool(options: GrepToolOptions = {}) {
  const deadlineMs = options.deadlineMs ?? SEARCH_DEADLINE_MS;
  return defineTool({
    name: 'grep',
    description:
      'Search file contents in the workspace with a regular expression, line by line. output_mode ' +
      '"files_with_matches" (default) lists matching files, "content" shows matching lines (with optional context), ' +
      '"count" gives matching lines per file. Results are sorted by path. Hidden files are searched; binary files, ' +
      'the .git and node_modules directories, and files that .gitignore (or .git/info/exclude) excludes are skipped ' +
      '(include_ignored: true searches those too; a path that names a file or directory is searched). Filter files with glob ' +
      '(e.g. "*.ts") or type (e.g. "py"); multiline lets a match span lines. Patterns use RE2 syntax and match in linear time; a call is stopped after a time limit. ' +
      'Use this rather than running grep or rg through bash.',
    inputSchema: grepInput,
    sideEffect: 'read_only',
    runsLocally: true,
    async execute(input, ctx) {
      const root = await realWorkspace(ctx.workspace);
      const base = await resolveInWorkspace(ctx.workspace, input.path ?? '.');
      const shownBase = workspaceRelative(root, base);
      const stat = await fs.stat(base).catch(() => undefined);
      if (!stat) throw new Error(`Path not found: '${shownBase}'.`);
      const baseIsFile = stat.isFile();
      if (!baseIsFile && !stat.isDirectory()) throw new Error(`'${shownBase}' is neither a file nor a directory.`);
      const typeGlobs = input.type === undefined ? undefined : fileTypeGlobs(input.type);
      if (input.type !== undefined && !typeGlobs) throw new Error(unknownFileType(input.type));
      const mode = input.output_mode ?? 'files_with_matches';
      const query: GrepQuery = {
        pattern: input.pattern,
        caseInsensitive: input.case_insensitive ?? false,
        mode,
        before: mode === 'content' ? (input.context_before ?? input.context ?? 0) : 0,
        after: mode === 'content' ? (input.context_after ?? input.context ?? 0) : 0,
        root,
        base,
        baseIsFile,
        glob: input.glob,
        ...(typeGlobs ? { typeGlobs: [...typeGlobs] } : {}),
        ...(input.multiline ? { multiline: true } : {}),
        ...(input.include_ignored ? {} : { gitignore: true }),
      };
      const result = await runSearch<GrepResult>('grep', { kind: 'grep', query }, ctx, deadlineMs);
      if (result.binaryBase) {
        return `No matches found for pattern '${input.pattern}' in '${shownBase}' (it is a binary file and was skipped).`;
      }
      const withContext = query.before > 0 || query.after > 0;
      return formatGrepResult(result.hits, input, shownBase, withContext, result.notes, result.filesNotKept);
    },
  });
}
