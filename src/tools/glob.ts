import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { defineTool } from './define-tool';
import { hasMagic } from './search/glob-pattern';
import { runSearch, SEARCH_DEADLINE_MS, type GlobResult } from './search';
import { GLOB_MAX_RESULTS, MAX_PATTERN_CHARS } from './search/limits';
import { describeLocation, listedPath, QUOTED_PATHS_NOTE } from './text';
import { comparePaths, DEFAULT_SKIPPED_NAMES } from './walk';
import { realWorkspace, resolveInWorkspace, workspaceRelative } from '../safe-fs/workspace';

export { GLOB_MAX_RESULTS } from './search/limits';

/** Said when nothing matched and .gitignore excluded something: the files may be there. */
const IGNORED_HINT =
  ' (Files that .gitignore excludes were not searched; set include_ignored to true to include them.)';

export interface GlobToolOptions {
  /** Stop a call after this long (default SEARCH_DEADLINE_MS). */
  deadlineMs?: number;
}

const globInput = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .max(MAX_PATTERN_CHARS)
    .describe(
      'Glob pattern matched against paths relative to `path`, e.g. "**/*.ts", "src/*.{js,jsx}", "test/**/[a-c]*.txt". ' +
        '`*` and `?` do not cross "/"; `**` matches any number of directories.',
    ),
  path: z
    .string()
    .min(1)
    .optional()
    .describe('Directory to search in, relative to the workspace (default: the workspace root).'),
  include_ignored: z
    .boolean()
    .optional()
    .describe(
      'Also list files that .gitignore excludes (build output, dependencies, caches). Default false: they are ' +
        'skipped, as git and ripgrep skip them.',
    ),
});

/**
 * Split a pattern into its literal leading directories and the part that needs matching, so
 * `src/**\/*.ts` only walks `src` and `../*.ts` is refused by the workspace check on `..`.
 */
function splitStaticPrefix(pattern: string): { prefix: string; rest: string } {
  const segments = pattern.split('/');
  let n = 0;
  // Keep at least the last segment as the pattern, even when it is a literal file name.
  while (n < segments.length - 1 && !hasMagic(segments[n] as string)) n++;
  const prefixSegments = segments.slice(0, n);
  const prefix = prefixSegments.join('/') || (pattern.startsWith('/') ? '/' : '');
  return { prefix, rest: segments.slice(n).join('/') };
}

/** Find files in the workspace by glob pattern. */
export function createGlobTool(options: GlobToolOptions = {}) {
  const deadlineMs = options.deadlineMs ?? SEARCH_DEADLINE_MS;
  return defineTool({
    name: 'glob',
    description:
      'Find files in the workspace whose paths match a glob pattern. Returns matching file paths (files only, not ' +
      `directories), relative to the workspace, one per line, sorted alphabetically by path; at most ${GLOB_MAX_RESULTS} ` +
      'are listed. Supports **, *, ?, {a,b} and [a-z] classes; hidden files are included. Files that .gitignore excludes ' +
      '(and .git/info/exclude) are skipped unless include_ignored is true or path (or the literal start of the pattern) ' +
      'names them; the .git and node_modules directories are skipped unless the pattern names them (e.g. ' +
      '"node_modules/foo/**"). Symbolic links are not followed. ' +
      'The pattern is matched in linear time; a call is stopped after a time limit.',
    inputSchema: globInput,
    sideEffect: 'read_only',
    runsLocally: true,
    async execute(input, ctx) {
      const root = await realWorkspace(ctx.workspace);
      const { prefix, rest } = splitStaticPrefix(input.pattern.replace(/^\.\//, ''));
      // An absolute pattern names its own directory; a relative one lives under `path`.
      const baseUserPath = path.isAbsolute(prefix) ? prefix : path.join(input.path ?? '.', prefix || '.');
      const base = await resolveInWorkspace(ctx.workspace, baseUserPath);
      const shownBase = workspaceRelative(root, base);
      const stat = await fs.stat(base).catch(() => undefined);
      if (!stat) throw new Error(`Directory not found: '${shownBase}'.`);
      if (!stat.isDirectory()) throw new Error(`'${shownBase}' is not a directory; path must name a directory.`);

      const patternSegments = new Set(input.pattern.split('/'));
      const skipNames = DEFAULT_SKIPPED_NAMES.filter((name) => !patternSegments.has(name));
      const baseFromRoot = path.relative(root, base).split(path.sep).join('/');
      const found = await runSearch<GlobResult>(
        'glob',
        {
          kind: 'glob',
          query: {
            root,
            base,
            pattern: rest,
            skipNames,
            maxResults: GLOB_MAX_RESULTS,
            gitignore: !input.include_ignored,
          },
        },
        ctx,
        deadlineMs,
      );
      const matches = found.matches.map((rel) => (baseFromRoot ? `${baseFromRoot}/${rel}` : rel));
      const notes = found.notes?.length ? `\n[${found.notes.join(' ')}]` : '';
      if (found.total === 0) {
        const hint = found.ignored ? IGNORED_HINT : '';
        return `No files match '${input.pattern}' in ${describeLocation(shownBase)}.${hint}${notes}`;
      }
      // The thread walks in this order already; sorting again keeps the contract explicit and is cheap.
      const shown = matches.sort(comparePaths).map(listedPath);
      const quoted = shown.some((line, i) => line !== matches[i]);
      if (found.total > shown.length) {
        shown.push(
          `… and ${found.total - shown.length} more files (${found.total} matches in total; only the first ` +
            `${GLOB_MAX_RESULTS} in sorted order are listed). Use a narrower pattern or path.`,
        );
      }
      if (quoted) shown.push(QUOTED_PATHS_NOTE);
      return shown.join('\n') + notes;
    },
  });
}
