import { promises as fs } from 'node:fs';
import { z } from 'zod';
import { MAX_TOOL_OUTPUT_CHARS } from '../shared/constants';
import { defineTool } from './define-tool';
import {
  containsNul,
  findRipgrep,
  type GrepFileHits,
  type GrepQuery,
  RipgrepUnusableError,
  searchWithJs,
  searchWithRipgrep,
} from './grep-engines';
import { describeLocation, plural, truncateLine } from './text';
import type { ToolContext } from './types';
import { comparePaths } from './walk';
import { realWorkspace, resolveInWorkspace, workspaceRelative } from './workspace';

/** Output lines (or files, or counts) shown when the model gives no head_limit. */
export const GREP_DEFAULT_HEAD_LIMIT = 1000;
/** Matched lines longer than this are cut (minified files would otherwise fill the answer). */
export const GREP_MAX_LINE_CHARS = 500;
const MAX_CONTEXT_LINES = 100;
/** Room kept free under the registry cap for the closing note. */
const NOTE_RESERVE_CHARS = 300;

/** Which search engine grep uses: ripgrep when on PATH (`auto`), or forced. */
export type GrepEngine = 'auto' | 'rg' | 'js';

export interface GrepToolOptions {
  engine?: GrepEngine;
}

const grepInput = z.strictObject({
  pattern: z
    .string()
    .describe('Regular expression to search for in file contents, matched line by line (e.g. "function\\s+\\w+").'),
  path: z
    .string()
    .min(1)
    .optional()
    .describe('File or directory to search, relative to the workspace (default: the workspace root).'),
  glob: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Only search files matching this glob, e.g. "*.ts" or "*.{ts,tsx}" (matched against the file name at any depth) ' +
        'or "src/**/*.ts" (contains "/": matched against the path relative to `path`). A leading "!" excludes instead.',
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
      const text = truncateLine(line.text, GREP_MAX_LINE_CHARS);
      out.push(lineNumbers ? `${file.path}${sep}${line.lineNumber}${sep}${text}` : `${file.path}${sep}${text}`);
      previous = line.lineNumber;
    }
  }
  return out;
}

/**
 * Turn raw hits into the text the model sees. Kept separate from the engines so ripgrep and the
 * JavaScript scan can only differ in what they find, never in how it is shown.
 */
export function formatGrepResult(
  hits: GrepFileHits[],
  input: GrepInput,
  shownBase: string,
  withContext: boolean,
): string {
  const mode = input.output_mode ?? 'files_with_matches';
  const sorted = [...hits].sort((a, b) => comparePaths(a.path, b.path));
  if (sorted.length === 0) return `No matches found for pattern '${input.pattern}' in ${describeLocation(shownBase)}.`;

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
  if (shown.length < lines.length) {
    const why = shown.length >= limit ? `head_limit ${limit}` : `the ${MAX_TOOL_OUTPUT_CHARS}-character output limit`;
    shown.push(
      `… ${plural(lines.length - shown.length, `more ${unit}`)} not shown (${lines.length} in total; stopped at ${why}). ` +
        'Narrow the search with path, glob or a more specific pattern.',
    );
  }
  return shown.join('\n');
}

async function search(query: GrepQuery, ctx: ToolContext, engine: GrepEngine): Promise<GrepFileHits[]> {
  if (engine === 'js') return searchWithJs(query, ctx);
  const rg = await findRipgrep();
  if (!rg) {
    if (engine === 'rg') throw new Error('ripgrep (rg) is not installed on this worker.');
    return searchWithJs(query, ctx);
  }
  try {
    return await searchWithRipgrep(query, ctx, rg);
  } catch (error) {
    // A pattern rg rejects (look-around, say) may still be valid JavaScript; one engine's verdict
    // on syntax should not be the model's problem.
    if (error instanceof RipgrepUnusableError && engine === 'auto') return searchWithJs(query, ctx);
    throw error;
  }
}

/** Search file contents by regular expression, with ripgrep when available. */
export function createGrepTool(options: GrepToolOptions = {}) {
  const engine = options.engine ?? 'auto';
  return defineTool({
    name: 'grep',
    description:
      'Search file contents in the workspace with a regular expression, line by line. output_mode ' +
      '"files_with_matches" (default) lists matching files, "content" shows matching lines (with optional context), ' +
      '"count" gives matching lines per file. Results are sorted by path. Hidden files are searched; binary files ' +
      'and the .git and node_modules directories are skipped; .gitignore is not applied. Filter files with glob ' +
      '(e.g. "*.ts"). Use this rather than running grep or rg through bash.',
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
      // Both engines treat a file with a NUL byte as binary; rg would search one named explicitly.
      if (baseIsFile && (await containsNul(base))) {
        return `No matches found for pattern '${input.pattern}' in '${shownBase}' (it is a binary file and was skipped).`;
      }

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
      };
      const hits = await search(query, ctx, engine);
      return formatGrepResult(hits, input, shownBase, query.before > 0 || query.after > 0);
    },
  });
}
