import { spawn } from 'node:child_process';
import { constants as fsConstants, createReadStream, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { compilePathFilter } from './glob-pattern';
import type { ToolContext } from './types';
import { DEFAULT_SKIPPED_NAMES, progressReporter, walkFiles } from './walk';

/**
 * The two ways grep searches: ripgrep when it is installed, a JavaScript scan otherwise. Both return
 * the same raw hits, and the grep tool formats and sorts them, so the model sees identical output
 * whichever engine ran. The shared rules:
 * - hidden files are searched, `.gitignore` is not consulted, `.git` and `node_modules` are skipped;
 * - symlinks are not followed; unreadable files are skipped silently;
 * - a file containing a NUL byte anywhere is binary and skipped;
 * - lines split on `\n`; a `\r` before it is part of the line for matching (so `x$` does not match
 *   `x\r`, as in ripgrep) but not shown;
 * - the glob filter matches the base name when it has no `/`, else the path relative to `path`;
 *   a leading `!` excludes instead.
 * Known differences: JavaScript and Rust regex dialects differ at the edges (`\d`/`\w` are
 * Unicode-aware in ripgrep, lookaround works only in JavaScript). A pattern ripgrep rejects is
 * retried with the JavaScript engine.
 */

export type GrepMode = 'content' | 'files_with_matches' | 'count';

export interface GrepQuery {
  pattern: string;
  caseInsensitive: boolean;
  mode: GrepMode;
  /** Context lines (content mode only). */
  before: number;
  after: number;
  /** Real absolute workspace root: hit paths are made relative to it. */
  root: string;
  /** Real absolute file or directory to search. */
  base: string;
  baseIsFile: boolean;
  glob?: string;
}

export interface GrepLine {
  lineNumber: number;
  text: string;
  isMatch: boolean;
}

/** What one file contributed. `lines` is filled in content mode only, in line order. */
export interface GrepFileHits {
  /** `/`-separated, relative to the workspace root. */
  path: string;
  matchCount: number;
  lines: GrepLine[];
}

/** Content mode refuses to gather more lines than this (the tool shows far fewer anyway). */
export const GREP_MAX_COLLECTED_LINES = 200_000;

/** A search that cannot be done as asked (bad regex, too many hits): the model should change the call. */
export class GrepError extends Error {
  override readonly name = 'GrepError';
}

function tooMany(): GrepError {
  return new GrepError(
    `The search matched more than ${GREP_MAX_COLLECTED_LINES} lines. Narrow it with a more specific pattern, ` +
      'path or glob, or use output_mode "files_with_matches" or "count".',
  );
}

/** The glob filter as a predicate over paths relative to the search base. */
function pathFilter(glob: string | undefined): (relFromBase: string) => boolean {
  if (!glob) return () => true;
  if (glob.startsWith('!')) {
    const excluded = compilePathFilter(glob.slice(1));
    return (p) => !excluded(p);
  }
  return compilePathFilter(glob);
}

function toPosix(p: string): string {
  return p.split(path.sep).join('/');
}

/** Path relative to the base used for glob filtering: the file's own name when the base is a file. */
function relFromBase(query: GrepQuery, absolute: string): string {
  return query.baseIsFile ? path.basename(absolute) : toPosix(path.relative(query.base, absolute));
}

/** True when the file contains a NUL byte anywhere. Streams, and stops at the first one. */
export async function containsNul(absolute: string): Promise<boolean> {
  const stream = createReadStream(absolute, { highWaterMark: 64 * 1024 });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) if (chunk.includes(0)) return true;
    return false;
  } finally {
    stream.destroy();
  }
}

/** Strip the line terminator ripgrep includes and the `\r` of a CRLF line, for display. */
function displayText(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

// ---------------------------------------------------------------------------------------------
// JavaScript engine

/** Compile the pattern as ripgrep would accept it, as closely as JavaScript allows. */
export function compileJsRegex(pattern: string, caseInsensitive: boolean): RegExp {
  const flags = caseInsensitive ? 'i' : '';
  try {
    // Unicode mode first: it understands \p{…} and matches astral characters as one.
    return new RegExp(pattern, `${flags}u`);
  } catch {
    try {
      return new RegExp(pattern, flags);
    } catch (error) {
      throw new GrepError(`Invalid regular expression '${pattern}': ${(error as Error).message}`);
    }
  }
}

function searchText(text: string, file: string, regex: RegExp, query: GrepQuery): GrepFileHits | undefined {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const matchIndexes: number[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (regex.test(lines[i] as string)) {
      matchIndexes.push(i);
      if (query.mode === 'files_with_matches') break;
    }
  }
  if (matchIndexes.length === 0) return undefined;
  const hits: GrepFileHits = { path: file, matchCount: matchIndexes.length, lines: [] };
  if (query.mode !== 'content') return hits;

  const isMatch = new Set(matchIndexes);
  let next = 0; // first line index not yet emitted, so overlapping context windows merge
  for (const m of matchIndexes) {
    const from = Math.max(next, m - query.before);
    const to = Math.min(lines.length - 1, m + query.after);
    for (let i = from; i <= to; i++) {
      hits.lines.push({ lineNumber: i + 1, text: displayText(lines[i] as string), isMatch: isMatch.has(i) });
    }
    next = Math.max(next, to + 1);
  }
  return hits;
}

/** Search with JavaScript regular expressions, file by file. */
export async function searchWithJs(query: GrepQuery, ctx: ToolContext): Promise<GrepFileHits[]> {
  const regex = compileJsRegex(query.pattern, query.caseInsensitive);
  const keep = pathFilter(query.glob);
  let searched = 0;
  const tick = progressReporter(ctx, () => ({ tool: 'grep', engine: 'js', filesSearched: searched }));

  const files: string[] = [];
  if (query.baseIsFile) files.push(query.base);
  else
    for await (const rel of walkFiles(query.base, new Set(DEFAULT_SKIPPED_NAMES), tick))
      files.push(path.join(query.base, rel));

  const results: GrepFileHits[] = [];
  let collected = 0;
  for (const absolute of files) {
    tick();
    if (!keep(relFromBase(query, absolute))) continue;
    let buffer: Buffer;
    try {
      buffer = await fs.readFile(absolute);
    } catch {
      continue; // unreadable or vanished
    }
    searched++;
    if (buffer.includes(0)) continue;
    const hits = searchText(buffer.toString('utf8'), toPosix(path.relative(query.root, absolute)), regex, query);
    if (!hits) continue;
    collected += hits.lines.length;
    if (collected > GREP_MAX_COLLECTED_LINES) throw tooMany();
    results.push(hits);
  }
  return results;
}

// ---------------------------------------------------------------------------------------------
// ripgrep engine

let rgLookup: Promise<string | undefined> | undefined;

/** Absolute path of `rg` on PATH, or undefined. Looked up once per process. */
export function findRipgrep(): Promise<string | undefined> {
  rgLookup ??= (async () => {
    for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
      if (!dir) continue;
      const candidate = path.join(dir, 'rg');
      try {
        await fs.access(candidate, fsConstants.X_OK);
        if ((await fs.stat(candidate)).isFile()) return candidate;
      } catch {
        // not here
      }
    }
    return undefined;
  })();
  return rgLookup;
}

/** ripgrep could not run this query (a pattern or glob it rejects); the caller falls back to JS. */
export class RipgrepUnusableError extends Error {
  override readonly name = 'RipgrepUnusableError';
}

interface RgJsonMessage {
  type: string;
  data?: {
    path?: { text?: string; bytes?: string };
    lines?: { text?: string; bytes?: string };
    line_number?: number | null;
    binary_offset?: number | null;
  };
}

function rgText(value: { text?: string; bytes?: string } | undefined): string {
  if (!value) return '';
  return value.text ?? Buffer.from(value.bytes ?? '', 'base64').toString('utf8');
}

/** Run rg, call `onLine` for each stdout line; resolves with the exit code and stderr. */
function runRg(
  rg: string,
  args: string[],
  ctx: ToolContext,
  onLine: (line: string) => void,
  separator: string,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(rg, args, { cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] });
    let pending = '';
    let stderr = '';
    let failure: unknown;
    const tick = progressReporter(ctx, () => ({ tool: 'grep', engine: 'rg' }));
    const onAbort = () => child.kill('SIGKILL');
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      if (failure) return;
      pending += chunk;
      const parts = pending.split(separator);
      pending = parts.pop() ?? '';
      try {
        tick();
        for (const part of parts) onLine(part);
      } catch (error) {
        failure = error;
        child.kill('SIGKILL');
      }
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < 10_000) stderr += chunk;
    });
    child.once('error', (error) => {
      ctx.signal.removeEventListener('abort', onAbort);
      reject(error);
    });
    child.once('close', (code) => {
      ctx.signal.removeEventListener('abort', onAbort);
      if (!failure && pending) {
        try {
          onLine(pending);
        } catch (error) {
          failure = error;
        }
      }
      if (failure) reject(failure);
      else if (ctx.signal.aborted) reject(new Error('Cancelled.'));
      else resolve({ code, stderr });
    });
  });
}

/** Search with ripgrep. Throws {@link RipgrepUnusableError} when rg rejects the query. */
export async function searchWithRipgrep(query: GrepQuery, ctx: ToolContext, rg: string): Promise<GrepFileHits[]> {
  const args = [
    '--no-config',
    '--hidden',
    '--no-ignore',
    '--no-messages',
    '--glob',
    '!.git',
    '--glob',
    '!node_modules',
  ];
  if (query.caseInsensitive) args.push('--ignore-case');
  // Globs with a `/` are matched by us against paths relative to `path`; rg's anchoring rules for
  // them differ, so rg only pre-filters with the simple base-name kind. We filter again after.
  if (query.glob && !query.glob.includes('/')) args.push('--glob', query.glob);
  if (query.mode === 'files_with_matches') {
    args.push('--files-with-matches', '--null');
  } else {
    args.push('--json');
    if (query.mode === 'content')
      args.push('--before-context', String(query.before), '--after-context', String(query.after));
  }
  args.push('--regexp', query.pattern, '--', query.base);

  const keep = pathFilter(query.glob);
  const byPath = new Map<string, GrepFileHits & { binary: boolean }>();
  let collected = 0;
  const hitsFor = (absolute: string) => {
    let hits = byPath.get(absolute);
    if (!hits) {
      hits = { path: toPosix(path.relative(query.root, absolute)), matchCount: 0, lines: [], binary: false };
      byPath.set(absolute, hits);
    }
    return hits;
  };

  const onLine =
    query.mode === 'files_with_matches'
      ? (line: string) => {
          if (line) hitsFor(line).matchCount = 1;
        }
      : (line: string) => {
          if (!line) return;
          const message = JSON.parse(line) as RgJsonMessage;
          const data = message.data;
          if (!data?.path) return;
          const absolute = rgText(data.path);
          if (message.type === 'match' || message.type === 'context') {
            const hits = hitsFor(absolute);
            const isMatch = message.type === 'match';
            if (isMatch) hits.matchCount++;
            if (query.mode === 'content') {
              let text = rgText(data.lines);
              if (text.endsWith('\n')) text = text.slice(0, -1);
              hits.lines.push({ lineNumber: data.line_number ?? 0, text: displayText(text), isMatch });
              if (++collected > GREP_MAX_COLLECTED_LINES) throw tooMany();
            }
          } else if (message.type === 'end' && data.binary_offset != null) {
            hitsFor(absolute).binary = true;
          }
        };

  const { code, stderr } = await runRg(rg, args, ctx, onLine, query.mode === 'files_with_matches' ? '\0' : '\n');
  // 0: matches, 1: none, 2: an error — fatal (bad regex or glob) when nothing was found at all.
  if (code !== 0 && code !== 1 && byPath.size === 0) {
    throw new RipgrepUnusableError(stderr.trim() || `rg exited with code ${String(code)}`);
  }

  const results: GrepFileHits[] = [];
  for (const [absolute, hits] of byPath) {
    if (hits.binary || hits.matchCount === 0) continue;
    if (!keep(relFromBase(query, absolute))) continue;
    // rg stops looking for NUL bytes once it has what -l needs; check the whole file like the JS engine.
    if (query.mode === 'files_with_matches' && (await containsNul(absolute).catch(() => true))) continue;
    results.push({ path: hits.path, matchCount: hits.matchCount, lines: hits.lines });
  }
  return results;
}
