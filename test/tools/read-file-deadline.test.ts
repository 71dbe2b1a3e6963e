/**
 * Finding: "read_file on a 1.1 GB file of newlines with a large offset runs past its own timeout
 * three times (~6 CPU-minutes on the worker's main thread) and the model gets 'Activity timed
 * out'". The lines before the offset are now counted a newline byte at a time, a chunk at a time
 * with the worker's thread free between chunks, and a call stops at its own deadline with an answer.
 */
import { openSync, closeSync, readFileSync, writeSync } from 'node:fs';
import * as path from 'node:path';
import { performance, PerformanceObserver } from 'node:perf_hooks';
import { createReadFileTool, ToolRegistry } from '../../src/tools';
import { makeContext, makeTempDir } from './helpers';

const MiB = 1024 * 1024;
/** Big enough that counting its lines takes far longer than the short deadline below. */
const NEWLINE_FILE_BYTES = 48 * MiB;
const { dir, cleanup } = makeTempDir('da-read-deadline-');
afterAll(cleanup);

beforeAll(() => {
  const fd = openSync(path.join(dir, 'newlines.txt'), 'w');
  const block = Buffer.alloc(MiB, '\n');
  for (let i = 0; i < NEWLINE_FILE_BYTES / MiB; i++) writeSync(fd, block);
  closeSync(fd);
});

/** Clock ticks per second in /proc's CPU times (USER_HZ, 100 on every Linux build). */
const TICKS_PER_SECOND = 100;

/**
 * CPU time, in ms, used so far by this process's main thread alone: from
 * /proc/self/task/<pid>/stat (utime and stime, fields 14 and 15). Other threads of the process (the
 * file reads' thread pool, V8's helpers, threads a test file run before this one in the same Jest
 * worker left behind) are not counted.
 */
function mainThreadCpuMs(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces; the fields after it are counted from its ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/**
 * The longest time the event loop went without running a 5 ms timer while `work` ran, counting
 * of each gap only the CPU time the main thread used in it, less the garbage collector's pauses in
 * it: code holding the thread burns CPU for the whole gap, while a thread the OS merely did not
 * schedule on a loaded machine uses next to none, and a full collection of a Jest worker's heap
 * (filled by the test files it ran before this one) is not read_file's doing. (Counting the CPU of
 * the whole process was not enough: in a CI run a 515 ms gap was counted whole.)
 */
async function longestStall<T>(work: () => Promise<T>): Promise<{ result: T; stallMs: number; tookMs: number }> {
  const gaps: { from: number; to: number; cpuMs: number }[] = [];
  const pauses: { from: number; to: number }[] = [];
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) pauses.push({ from: entry.startTime, to: entry.startTime + entry.duration });
  });
  gc.observe({ entryTypes: ['gc'] });
  let last = performance.now();
  let lastCpu = mainThreadCpuMs();
  const gap = () => {
    const now = performance.now();
    const cpu = mainThreadCpuMs();
    gaps.push({ from: last, to: now, cpuMs: cpu - lastCpu });
    last = now;
    lastCpu = cpu;
  };
  const timer = setInterval(gap, 5);
  const started = Date.now();
  try {
    const result = await work();
    gap();
    const tookMs = Date.now() - started;
    // The observer hears of a pause after it: let it catch up.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const stallMs = Math.max(
      0,
      ...gaps.map(({ from, to, cpuMs }) => {
        const paused = pauses.reduce((sum, p) => sum + Math.max(0, Math.min(to, p.to) - Math.max(from, p.from)), 0);
        return Math.min(to - from, cpuMs) - paused;
      }),
    );
    return { result, stallMs, tookMs };
  } finally {
    clearInterval(timer);
    gc.disconnect();
  }
}

describe('read_file on a large file of newlines', () => {
  test('with a large offset, it stops at its deadline with an error naming it, and never holds the thread', async () => {
    const deadlineMs = 150;
    const registry = new ToolRegistry([createReadFileTool({ deadlineMs })]);
    const { result, stallMs, tookMs } = await longestStall(() =>
      registry.run('read_file', { path: 'newlines.txt', offset: NEWLINE_FILE_BYTES }, makeContext(dir)),
    );
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(
      new RegExp(
        `^Error: read_file stopped after ${deadlineMs} ms, its time limit per call, before line ${NEWLINE_FILE_BYTES} ` +
          `of 'newlines\\.txt' \\(${NEWLINE_FILE_BYTES} bytes\\): (\\d+) lines were read\\. Use grep`,
      ),
    );
    // It did stop early: far fewer lines than the file has were counted.
    const counted = Number(/(\d+) lines were read/.exec(result.content)?.[1]);
    expect(counted).toBeGreaterThan(0);
    expect(counted).toBeLessThan(NEWLINE_FILE_BYTES);
    expect(tookMs).toBeLessThan(deadlineMs + 1_000);
    expect(stallMs).toBeLessThan(250);
  });

  test('within the default bounds, the last line of the file is found, without holding the thread', async () => {
    const registry = new ToolRegistry([createReadFileTool()]);
    const { result, stallMs } = await longestStall(() =>
      registry.run('read_file', { path: 'newlines.txt', offset: NEWLINE_FILE_BYTES - 1 }, makeContext(dir)),
    );
    expect(result).toEqual({
      content: `${NEWLINE_FILE_BYTES - 1}\t\n${NEWLINE_FILE_BYTES}\t`,
      isError: false,
    });
    expect(stallMs).toBeLessThan(250);
  });

  test('an offset just past the end says how many lines the file has', async () => {
    const registry = new ToolRegistry([createReadFileTool()]);
    const result = await registry.run(
      'read_file',
      { path: 'newlines.txt', offset: NEWLINE_FILE_BYTES + 1 },
      makeContext(dir),
    );
    expect(result).toEqual({
      content: `Error: offset ${NEWLINE_FILE_BYTES + 1} is past the end of 'newlines.txt', which has ${NEWLINE_FILE_BYTES} lines.`,
      isError: true,
    });
  });
});
