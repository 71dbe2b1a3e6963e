/**
 * glob and grep hold whatever the model asks (issue 11, item 3): hostile patterns end at once or are
 * refused, huge files and lines are streamed with bounded memory, and a heavy search is stopped by
 * its deadline or by cancellation with an is_error result. Runs without a Temporal server
 * (`DA_SKIP_TEMPORAL=1` is enough); search-worker.test.ts proves the same inside real runs.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { createGlobTool, createGrepTool, ToolRegistry } from '../../src/tools';
import { GREP_MAX_LINE_BYTES } from '../../src/tools/search/limits';
import { searchPool } from '../../src/tools/search/pool';
import { makeContext, makeTempDir, writeTree } from '../tools/helpers';

const MiB = 1024 * 1024;
/**
 * A pattern RE2 accepts whose DFA would blow up on varied text, so RE2 runs it as an NFA: about
 * 2-3 MB/s on randomText, so 40 MiB would take 15 s or more.
 */
const HEAVY = '[a-p].{20}[a-p].{20}[a-p].{20}Z';

/** Lowercase words and spaces at random, a newline every 200 bytes. */
function randomText(bytes: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz     ';
  const random = randomBytes(bytes);
  for (let i = 0; i < bytes; i++) {
    random[i] = i % 200 === 199 ? 0x0a : alphabet.charCodeAt((random[i] as number) % alphabet.length);
  }
  return random.toString('latin1');
}

/** Resolves once no search thread is running or stopping (a terminated one has really exited). */
async function threadsStopped(): Promise<void> {
  for (const deadline = Date.now() + 30_000; searchPool().busy > 0;) {
    if (Date.now() > deadline) throw new Error(`${searchPool().busy} search threads still running`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
const HOSTILE_GLOB = '*a*a*a*a*a*a*a*a*a*a*a*a*b';

/**
 * Writes at least `totalBytes` of `lines` repeated, then `tail`, in blocks of about 8 MiB (never all
 * in memory). Returns how many times `lines` was written.
 */
async function writeBigFile(file: string, lines: string, totalBytes: number, tail: string): Promise<number> {
  const perBlock = Math.max(1, Math.floor((8 * MiB) / lines.length));
  const block = Buffer.from(lines.repeat(perBlock));
  const out = createWriteStream(file);
  let repeats = 0;
  for (let written = 0; written < totalBytes; written += block.length) {
    if (!out.write(block)) await new Promise<void>((r) => out.once('drain', () => r()));
    repeats += perBlock;
  }
  await new Promise<void>((resolve, reject) => out.end(tail, () => resolve()).once('error', reject));
  return repeats;
}

describe('hostile patterns', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);
  const registry = new ToolRegistry([createGlobTool(), createGrepTool()]);
  beforeAll(() => writeTree(dir, { [`${'a'.repeat(200)}.txt`]: `${'a'.repeat(40)}!\n`, 'b/ab': '' }));

  test('the exponential glob over a 200-character name answers (no match) instead of backtracking forever', async () => {
    const result = await registry.run('glob', { pattern: HOSTILE_GLOB }, makeContext(dir));
    expect(result).toEqual({ content: `No files match '${HOSTILE_GLOB}' in the workspace root.`, isError: false });
    expect(await registry.run('glob', { pattern: `**/${HOSTILE_GLOB.slice(0, -1)}` }, makeContext(dir))).toEqual({
      content: `${'a'.repeat(200)}.txt`,
      isError: false,
    });
  });

  test('a back-reference pattern that freezes JavaScript is refused with a message naming it', async () => {
    const result = await registry.run('grep', { pattern: '(a+)+\\1$' }, makeContext(dir));
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(
      /^Error: The pattern '\(a\+\)\+\\1\$' was refused: back-references \(\\1\) are not supported\. grep uses RE2/,
    );
  });

  test('nested quantifiers RE2 accepts run in linear time: (a+)+$ over 40 a and !', async () => {
    const result = await registry.run('grep', { pattern: '(a+)+$', output_mode: 'count' }, makeContext(dir));
    expect(result).toEqual({ content: "No matches found for pattern '(a+)+$' in the workspace root.", isError: false });
  });
});

describe('memory stays bounded', () => {
  const { dir, cleanup } = makeTempDir('da-search-big-');
  afterAll(cleanup);
  const registry = new ToolRegistry([createGrepTool()]);
  const grep = (input: Record<string, unknown>) => registry.run('grep', input, makeContext(dir));

  test('a 520 MiB file (more characters than a V8 string holds) is streamed: the needle on its last line is found', async () => {
    const line = `${'lorem ipsum dolor sit amet '.repeat(37)}\n`; // ~1 KB lines
    const total = 520 * MiB;
    const lines = await writeBigFile(path.join(dir, 'big.txt'), line, total, 'the NEEDLE is here\n');
    const rssBefore = process.memoryUsage().rss;
    const result = await grep({ pattern: 'NEEDLE', output_mode: 'content', path: 'big.txt' });
    const rssGrowth = process.memoryUsage().rss - rssBefore;
    expect(result.isError).toBe(false);
    expect(result.content).toMatch(/^big\.txt:\d+:the NEEDLE is here$/);
    const lineNumber = Number(result.content.split(':')[1]);
    expect(lineNumber).toBe(lines + 1);
    // Reading it whole would need 520 MiB for the bytes and twice that for the string.
    expect(rssGrowth).toBeLessThan(200 * MiB);
  }, 120_000);

  test('a 10 MB single line is searched whole and shown cut, with its real length', async () => {
    writeFileSync(path.join(dir, 'line.min.js'), `${'x'.repeat(10 * 1000 * 1000)}NEEDLE\n`);
    const result = await grep({ pattern: 'NEEDLE', output_mode: 'content', path: 'line.min.js' });
    expect(result).toEqual({
      content: `line.min.js:1:${'x'.repeat(500)}… [line truncated: ${10 * 1000 * 1000 + 6 - 500} more characters]`,
      isError: false,
    });
  });

  test(`a line longer than ${GREP_MAX_LINE_BYTES / MiB} MiB is searched up to the cap, with a note`, async () => {
    const head = 'x'.repeat(GREP_MAX_LINE_BYTES - 10);
    writeFileSync(path.join(dir, 'huge.txt'), `${head}EARLY${'y'.repeat(4 * MiB)}LATE\nsecond LATE line\n`);
    const early = await grep({ pattern: 'EARLY', output_mode: 'count', path: 'huge.txt' });
    expect(early).toEqual({
      content: 'huge.txt:1\n[Line 1 of huge.txt is longer than 16 MiB: only its first 16 MiB were searched.]',
      isError: false,
    });
    const late = await grep({ pattern: 'LATE', output_mode: 'content', path: 'huge.txt' });
    expect(late).toEqual({
      content:
        'huge.txt:2:second LATE line\n[Line 1 of huge.txt is longer than 16 MiB: only its first 16 MiB were searched.]',
      isError: false,
    });
  });
});

describe('deadline and cancellation stop the search thread', () => {
  const { dir, cleanup } = makeTempDir('da-search-slow-');
  afterAll(cleanup);
  beforeAll(async () => {
    await writeBigFile(path.join(dir, 'slow.txt'), randomText(4 * MiB), 40 * MiB, '');
  }, 60_000);

  test('past its deadline grep returns an is_error result saying it was stopped and why', async () => {
    const registry = new ToolRegistry([createGrepTool({ deadlineMs: 500 })]);
    const startedAt = Date.now();
    const result = await registry.run('grep', { pattern: HEAVY, output_mode: 'count' }, makeContext(dir));
    expect(result).toEqual({
      content:
        'Error: grep was stopped after 500 ms, its time limit, before it finished. Search a smaller part of the ' +
        'workspace (path, glob) or use a more specific pattern.',
      isError: true,
    });
    // The answer does not wait for the thread: it comes at the deadline, not when the scan would end.
    expect(Date.now() - startedAt).toBeLessThan(10_000);
    await threadsStopped();
  });

  test('a cancelled call ends at once and its thread is terminated', async () => {
    const registry = new ToolRegistry([createGrepTool()]);
    const controller = new AbortController();
    const pending = registry.run(
      'grep',
      { pattern: HEAVY, output_mode: 'count' },
      makeContext(dir, { signal: controller.signal }),
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(searchPool().busy).toBe(1);
    controller.abort();
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/cancelled/);
    await threadsStopped();
  });

  test('the glob deadline works the same way', async () => {
    for (let i = 0; i < 300; i++) writeTree(dir, { [`tree/d${i % 30}/e${i % 7}/f${i}.txt`]: '' });
    const registry = new ToolRegistry([createGlobTool({ deadlineMs: 1 })]);
    const result = await registry.run('glob', { pattern: '**/*.txt' }, makeContext(dir));
    expect(result).toEqual({
      content:
        'Error: glob was stopped after 1 ms, its time limit, before it finished. Search a smaller part of the ' +
        'workspace (path, glob) or use a more specific pattern.',
      isError: true,
    });
  });
});
