import { closeSync } from 'node:fs';
import * as path from 'node:path';
import { compilePathFilter, globToRegExp } from '../glob-pattern';
import { DEFAULT_SKIPPED_NAMES } from '../walk';
import { GREP_CHUNK_BYTES, GREP_MAX_FILE_HITS } from './limits';
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
function pathFilter(glob: string | undefined): (relFromBase: string) => boolean {
  if (!glob) return () => true;
  if (glob.startsWith('!')) {
    const excluded = compilePathFilter(glob.slice(1));
    return (p) => !excluded(p);
  }
  return compilePathFilter(glob);
}

let chunkBuffer: Buffer | undefined;

/** Search file contents. Throws PatternRefused for a pattern RE2 cannot run or too many hits. */
export function runGrep(query: GrepQuery): GrepResult {
  const regexes = compileGrepRegexes(query.pattern, query.caseInsensitive);
  const keep = pathFilter(query.glob);
  const collector = new GrepCollector();
  const buffer = (chunkBuffer ??= Buffer.allocUnsafe(GREP_CHUNK_BYTES));
  const result: GrepResult = { hits: [], notes: collector.notes };

  const searchFile = (absolute: string, relFromBase: string) => {
    if (!keep(relFromBase)) return;
    const fd = openInside(query.root, absolute, false);
    if (fd === undefined) return;
    try {
      const rel = toPosix(path.relative(query.root, absolute));
      const hits = scanFile(fd, rel, regexes, query, collector, buffer);
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
  for (const rel of walkSorted(query.root, query.base, new Set(DEFAULT_SKIPPED_NAMES))) {
    searchFile(path.join(query.base, rel), rel);
  }
  return result;
}

/** List files by glob. Throws PatternRefused for a pattern that cannot be compiled. */
export function runGlob(query: GlobQuery): GlobResult {
  const matcher = globToRegExp(query.pattern);
  const result: GlobResult = { matches: [], total: 0 };
  for (const rel of walkSorted(query.root, query.base, new Set(query.skipNames))) {
    if (!matcher.test(rel)) continue;
    result.total++;
    if (result.matches.length < query.maxResults) result.matches.push(rel);
  }
  return result;
}

export function runJob(job: SearchJob): GrepResult | GlobResult {
  return job.kind === 'grep' ? runGrep(job.query) : runGlob(job.query);
}
