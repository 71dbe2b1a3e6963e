import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { defineTool } from './define-tool';
import { globToRegExp, hasMagic } from './glob-pattern';
import { describeLocation } from './text';
import { comparePaths, DEFAULT_SKIPPED_NAMES, progressReporter, walkFiles } from './walk';
import { realWorkspace, resolveInWorkspace, workspaceRelative } from './workspace';

/** At most this many paths are listed; the rest are counted. */
export const GLOB_MAX_RESULTS = 1000;

const globInput = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .describe(
      'Glob pattern matched against paths relative to `path`, e.g. "**/*.ts", "src/*.{js,jsx}", "test/**/[a-c]*.txt". ' +
        '`*` and `?` do not cross "/"; `**` matches any number of directories.',
    ),
  path: z
    .string()
    .min(1)
    .optional()
    .describe('Directory to search in, relative to the workspace (default: the workspace root).'),
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
export function createGlobTool() {
  return defineTool({
    name: 'glob',
    description:
      'Find files in the workspace whose paths match a glob pattern. Returns matching file paths (files only, not ' +
      `directories), relative to the workspace, one per line, sorted alphabetically by path; at most ${GLOB_MAX_RESULTS} ` +
      'are listed. Supports **, *, ?, {a,b} and [a-z] classes; hidden files are included. The .git and node_modules ' +
      'directories are skipped unless the pattern names them (e.g. "node_modules/foo/**"). Symbolic links are not followed.',
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

      const matcher = globToRegExp(rest);
      const patternSegments = new Set(input.pattern.split('/'));
      const skip = new Set(DEFAULT_SKIPPED_NAMES.filter((name) => !patternSegments.has(name)));
      const baseFromRoot = path.relative(root, base).split(path.sep).join('/');
      let seen = 0;
      const tick = progressReporter(ctx, () => ({ tool: 'glob', filesSeen: seen }));

      const matches: string[] = [];
      for await (const rel of walkFiles(base, skip, tick)) {
        seen++;
        if (matcher.test(rel)) matches.push(baseFromRoot ? `${baseFromRoot}/${rel}` : rel);
      }
      if (matches.length === 0) return `No files match '${input.pattern}' in ${describeLocation(shownBase)}.`;
      matches.sort(comparePaths);
      const shown = matches.slice(0, GLOB_MAX_RESULTS);
      if (matches.length > shown.length) {
        shown.push(
          `… and ${matches.length - shown.length} more files (${matches.length} matches in total; only the first ` +
            `${GLOB_MAX_RESULTS} in sorted order are listed). Use a narrower pattern or path.`,
        );
      }
      return shown.join('\n');
    },
  });
}
