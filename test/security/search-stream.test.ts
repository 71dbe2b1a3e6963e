/**
 * grep streams files in chunks (search/grep-scan.ts): lines cross chunk boundaries, candidate lines
 * are found by a block search and confirmed one by one, and context is kept across chunks. This
 * checks, with chunks as small as one byte, that the streamed scan finds exactly what a plain
 * line-by-line scan of the whole text finds.
 */
import fc from 'fast-check';
import { closeSync, openSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import RE2 from 're2';
import { GrepCollector, scanFile } from '../../src/tools/search/grep-scan';
import type { GrepFileHits, GrepMode, GrepQuery } from '../../src/tools/search/protocol';
import { compileGrepRegexes } from '../../src/tools/search/regex';
import { makeTempDir } from '../tools/helpers';

/** The obvious implementation: split, test each line, merge context windows. */
function reference(text: string, query: GrepQuery): GrepFileHits | 'binary' | undefined {
  if (text.includes('\0')) return 'binary';
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const re = new RE2(query.pattern, query.caseInsensitive ? 'i' : '');
  const matches = lines.flatMap((line, i) => (re.test(line) ? [i] : []));
  if (matches.length === 0) return undefined;
  if (query.mode === 'files_with_matches') return { path: 'f', matchCount: 1, lines: [] };
  const hits: GrepFileHits = { path: 'f', matchCount: matches.length, lines: [] };
  if (query.mode === 'count') return hits;
  const isMatch = new Set(matches);
  let next = 0;
  for (const m of matches) {
    const from = Math.max(next, m - query.before);
    const to = Math.min(lines.length - 1, m + query.after);
    for (let i = from; i <= to; i++) {
      hits.lines.push({ lineNumber: i + 1, text: (lines[i] as string).replace(/\r$/, ''), isMatch: isMatch.has(i) });
    }
    next = Math.max(next, to + 1);
  }
  return hits;
}

const { dir, cleanup } = makeTempDir('da-search-stream-');
afterAll(cleanup);

function streamed(text: string, query: GrepQuery, chunkBytes: number): GrepFileHits | 'binary' | undefined {
  const file = path.join(dir, 'f');
  writeFileSync(file, text);
  const fd = openSync(file, 'r');
  try {
    const regexes = compileGrepRegexes(query.pattern, query.caseInsensitive);
    return scanFile(fd, 'f', regexes, query, new GrepCollector(), Buffer.alloc(chunkBytes));
  } finally {
    closeSync(fd);
  }
}

const PATTERNS = ['a', 'ab', '^a', 'b$', 'a\\sb', '', '^$', 'x|^b', '\\Aa', 'a\\z', '(?-m)^b', 'b\\r$', 'é', '[^a]{3}'];

test('the streamed scan equals a whole-text line-by-line scan, whatever the chunk size', () => {
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom('a', 'b', 'x', ' ', '\n', '\n', '\r', 'é'), { maxLength: 80 }).map((cs) => cs.join('')),
      fc.constantFrom(...PATTERNS),
      fc.constantFrom<GrepMode>('content', 'count', 'files_with_matches'),
      fc.integer({ min: 0, max: 3 }),
      fc.integer({ min: 0, max: 3 }),
      fc.boolean(),
      fc.integer({ min: 1, max: 17 }),
      (text, pattern, mode, before, after, caseInsensitive, chunkBytes) => {
        const query: GrepQuery = {
          pattern,
          caseInsensitive,
          mode,
          before,
          after,
          root: dir,
          base: dir,
          baseIsFile: false,
        };
        expect(streamed(text, query, chunkBytes)).toEqual(reference(text, query));
      },
    ),
    { numRuns: 3000 },
  );
});

test('a NUL anywhere makes the file binary, even after matches', () => {
  const query: GrepQuery = {
    pattern: 'a',
    caseInsensitive: false,
    mode: 'content',
    before: 0,
    after: 0,
    root: dir,
    base: dir,
    baseIsFile: false,
  };
  expect(streamed(`a\n${'b\n'.repeat(100)}\0`, query, 8)).toBe('binary');
});
