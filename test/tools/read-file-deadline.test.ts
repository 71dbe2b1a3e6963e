/**
 * Finding: "read_file on a 1.1 GB file of newlines with a large offset runs past its own timeout
 * three times (~6 CPU-minutes on the worker's main thread) and the model gets 'Activity timed
 * out'". The lines before the offset are now counted a newline byte at a time, a chunk at a time
 * with the worker's thread free between chunks, and a call stops at its own deadline with an answer.
 */
import { openSync, closeSync, writeSync } from 'node:fs';
import * as path from 'node:path';
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

/**
 * The longest time the event loop went without running a 5 ms timer while `work` ran, counting
 * of each gap only the CPU time the process used in it: code holding the thread burns CPU for the
 * whole gap (and the file reads on other threads only add to it), while a process the OS merely did
 * not schedule on a loaded machine uses next to none.
 */
async function longestStall<T>(work: () => Promise<T>): Promise<{ result: T; stallMs: number; tookMs: number }> {
  let last = Date.now();
  let lastCpu = process.cpuUsage();
  let stallMs = 0;
  const gap = () => {
    const now = Date.now();
    const cpu = process.cpuUsage(lastCpu);
    const busyMs = Math.min(now - last, (cpu.user + cpu.system) / 1000);
    last = now;
    lastCpu = process.cpuUsage();
    return busyMs;
  };
  const timer = setInterval(() => {
    stallMs = Math.max(stallMs, gap());
  }, 5);
  const started = Date.now();
  try {
    const result = await work();
    return { result, stallMs: Math.max(stallMs, gap()), tookMs: Date.now() - started };
  } finally {
    clearInterval(timer);
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
