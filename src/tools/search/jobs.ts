import { closeSync } from 'node:fs';
import * as path from 'node:path';
import { compilePathFilter, globToRegExp } from './glob-pattern';
import { DEFAULT_SKIPPED_NAMES } from '../walk';
import { GREP_CHUNK_BYTES, GREP_MAX_FILE_HITS, GREP_MAX_NOTES, GREP_MULTILINE_MAX_FILE_BYTES } from './limits';
import { IgnoreFilter } from './gitignore';
import { canSpanLines, compileMultiline, scanWholeFile } from './multiline-scan';
import type { GlobQuery, GlobResult, GrepQuery, GrepResult, SearchJob } from './protocol';
import { compileGrepRegexes } from './regex';
import { GrepCollector, scanFile } from './grep-scan';
import { openInside, walkSorted } from './tree';

/**
 * The work of one glob or grep call, run inside a search thread (see pool.ts). Synchronous and
 * self-contained: everything it needs arrives in the query, and it answers with plain data.
 */

function toPosix(p: string): string {
  return p.split(path.sep).join('/');
}

/** The glob filter as a predicate over paths relative to the search base; `!` excludes. */
function globFilter(glob: string | undefined): (relFromBase: string) => boolean {
  if (!glob) return () => true;
  if (glob.startsWith('!')) {
    const excluded = compilePathFilter(glob.slice(1));
    return (p) => !excluded(p);
  }
  return compilePathFilter(glob);
}

/** The `glob` and `type` filters together: a file is searched when it passes both. */
export function pathFilter(glob: string | undefined, typeGlobs?: readonly string[]): (relFromBase: string) => boolean {
  const byGlob = globFilter(glob);
  if (!typeGlobs) return byGlob;
  // Type globs have no `/`: each is matched against the base name, as ripgrep matches them.
  const byType = typeGlobs.map((g) => compilePathFilter(g));
  return (p) => byGlob(p) && byType.some((matches) => matches(p));
}

/** Which engine searches a file: the streaming line engine, or the whole-file multiline engine. */
function fileScanner(query: GrepQuery, collector: GrepCollector) {
  if (query.multiline && canSpanLines(query.pattern)) {
    const regex = compileMultiline(query.pattern, query.caseInsensitive);
    return (fd: number, rel: string) => {
      const hits = scanWholeFile(fd, rel, regex, query, collector, GREP_MULTILINE_MAX_FILE_BYTES);
      if (hits !== 'too_big') return hits;
      collector.noteLargeFile(rel, `${GREP_MULTILINE_MAX_FILE_BYTES / (1024 * 1024)} MiB`);
      return undefined;
    };
  }
  // A pattern that cannot match a newline finds the same lines either way: stream it.
  const regexes = compileGrepRegexes(query.pattern, query.caseInsensitive);
  const buffer = (chunkBuffer ??= Buffer.allocUnsafe(GREP_CHUNK_BYTES));
  return (fd: number, rel: string) => scanFile(fd, rel, regexes, query, collector, buffer);
}

let chunkBuffer: Buffer | undefined;

/** Search file contents. Throws PatternRefused for a pattern RE2 cannot run or too many hits. */
export function runGrep(query: GrepQuery): GrepResult {
  const collector = new GrepCollector();
  const scan = fileScanner(query, collector);
  const keep = pathFilter(query.glob, query.typeGlobs);
  const result: GrepResult = { hits: [], notes: collector.notes };

  const searchFile = (absolute: string, relFromBase: string) => {
    if (!keep(relFromBase)) return;
    const fd = openInside(query.root, absolute, false);
    if (fd === undefined) return;
    try {
      const rel = toPosix(path.relative(query.root, absolute));
      const hits = scan(fd, rel);
      if (hits === 'binary') {
        if (query.baseIsFile) result.binaryBase = true;
      } else if (hits && query.mode !== 'content' && result.hits.length >= GREP_MAX_FILE_HITS) {
        result.filesNotKept = (result.filesNotKept ?? 0) + 1;
      } else if (hits) {
        result.hits.push(hits);
      }
    } finally {
      closeSync(fd);
    }
  };

  if (query.baseIsFile) {
    searchFile(query.base, path.basename(query.base));
    return result;
  }
  const ignore = query.gitignore ? new IgnoreFilter(query.root) : undefined;
  for (const rel of walkSorted(query.root, query.base, new Set(DEFAULT_SKIPPED_NAMES), undefined, ignore)) {
    searchFile(path.join(query.base, rel), rel);
  }
  if (ignore) collectorNotes(collector, ignore.notes);
  return result;
}

/** List files by glob. Throws PatternRefused for a pattern that cannot be compiled. */
export function runGlob(query: GlobQuery): GlobResult {
  const matcher = globToRegExp(query.pattern);
  const result: GlobResult = { matches: [], total: 0 };
  const ignore = query.gitignore ? new IgnoreFilter(query.root) : undefined;
  for (const rel of walkSorted(query.root, query.base, new Set(query.skipNames), undefined, ignore)) {
    if (!matcher.test(rel)) continue;
    result.total++;
    if (result.matches.length < query.maxResults) result.matches.push(rel);
  }
  if (ignore?.notes.length) result.notes = ignore.notes.slice(0, GREP_MAX_NOTES);
  if (ignore?.excluded) result.ignored = ignore.excluded;
  return result;
}

/** Notes about ignore files join the search's own, within the same bound. */
function collectorNotes(collector: GrepCollector, notes: readonly string[]): void {
  for (const note of notes) if (collector.notes.length < GREP_MAX_NOTES) collector.notes.push(note);
}

export function runJob(job: SearchJob): GrepResult | GlobResult {
  return job.kind === 'grep' ? runGrep(job.query) : runGlob(job.query);
}
