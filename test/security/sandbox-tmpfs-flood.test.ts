/**
 * Finding: "four parallel bash calls held 5.25 GB of tmpfs memory that no OOM kill frees". The
 * /tmp and /dev/shm of all a worker's running calls now share one budget: each call's mounts get a
 * `size=` (enforced by the kernel: ENOSPC) from what is left, and a call that finds too little
 * left waits for one to end. Against the real bubblewrap, with a budget of a few MiB.
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { createBashTool, ToolRegistry } from '../../src/tools';
import { MIN_TMPFS_GRANT_BYTES, TmpfsBudget } from '../../src/sandbox';
import { makeContext, makeTempDir } from '../tools/helpers';

const MiB = 1024 * 1024;
const BUDGET = 4 * MIN_TMPFS_GRANT_BYTES;
const limits = { tmpBytes: 2 * MIN_TMPFS_GRANT_BYTES, shmBytes: MIN_TMPFS_GRANT_BYTES / 2 };
const { dir: ws, cleanup } = makeTempDir('da-tmpfs-flood-');
afterAll(cleanup);

/** Fills /tmp and /dev/shm past any share, holds them a while, and reports the mounts' sizes and the times. */
const flood = (holdSeconds: number) =>
  'echo "start $(date +%s%N)"; ' +
  `head -c ${BUDGET + MiB} /dev/zero 2>&1 > /tmp/fill; head -c ${BUDGET + MiB} /dev/zero 2>&1 > /dev/shm/fill; ` +
  'echo "tmp $(stat -f -c "%b %S" /tmp) shm $(stat -f -c "%b %S" /dev/shm)"; ' +
  `echo "held $(( $(stat -c %s /tmp/fill) + $(stat -c %s /dev/shm/fill) ))"; sleep ${holdSeconds}; echo "end $(date +%s%N)"`;

interface Report {
  start: number;
  end: number;
  size: number;
  held: number;
  content: string;
}

function parse(content: string): Report {
  const num = (re: RegExp) => Number(re.exec(content)?.[1] ?? NaN);
  const blocks = /tmp (\d+) (\d+) shm (\d+) (\d+)/.exec(content);
  const size = blocks ? Number(blocks[1]) * Number(blocks[2]) + Number(blocks[3]) * Number(blocks[4]) : NaN;
  return { start: num(/^start (\d+)/m) / 1e6, end: num(/^end (\d+)/m) / 1e6, size, held: num(/^held (\d+)/m), content };
}

describe('a tmpfs flood across concurrent sandboxed calls', () => {
  test('the calls’ /tmp and /dev/shm never add up past the worker’s budget; each flood ends in ENOSPC', async () => {
    const budget = new TmpfsBudget(BUDGET);
    const registry = new ToolRegistry([createBashTool({ sandbox: 'bwrap', limits, tmpfsBudget: budget })]);
    const calls = Array.from({ length: 5 }, (_, i) =>
      registry.run('bash', { command: flood(1) }, makeContext(ws, { toolUseId: `flood-${i}` })),
    );
    const reports = (await Promise.all(calls)).map((r) => parse(r.content));

    for (const r of reports) {
      expect(r.content).toMatch(/No space left on device/);
      expect(r.size).toBeGreaterThanOrEqual(MIN_TMPFS_GRANT_BYTES);
      expect(r.size).toBeLessThanOrEqual(limits.tmpBytes + limits.shmBytes);
      // The kernel stopped each flood at its mounts' size.
      expect(r.held).toBeLessThanOrEqual(r.size);
      expect(r.held).toBeGreaterThan(r.size / 2);
    }
    // At every moment, the calls running then held no more than the budget between them.
    for (const at of reports.map((r) => r.start)) {
      const running = reports.filter((r) => r.start <= at && at < r.end);
      expect(running.reduce((sum, r) => sum + r.size, 0)).toBeLessThanOrEqual(BUDGET);
    }
    // Some call had to wait for another to end: five full shares do not fit.
    expect(reports.some((late) => reports.some((early) => early !== late && early.end <= late.start))).toBe(true);
    expect(budget.inUse).toBe(0);
  });

  test('a call that waits for the budget past its timeout ends as an error, and nothing runs', async () => {
    const budget = new TmpfsBudget(BUDGET);
    const registry = new ToolRegistry([createBashTool({ sandbox: 'bwrap', limits, tmpfsBudget: budget })]);
    // Hold the whole budget in shares the way running calls would.
    const held = [];
    for (let share = await budget.acquire(limits, new AbortController().signal); share;) {
      held.push(share);
      share =
        budget.totalBytes - budget.inUse >= MIN_TMPFS_GRANT_BYTES
          ? await budget.acquire(limits, new AbortController().signal)
          : undefined;
    }
    const started = Date.now();
    const result = await registry.run('bash', { command: 'touch ran.txt', timeout: 500 }, makeContext(ws));
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(
      new RegExp(
        `^Command timed out after \\d+ ms before it started: the worker's sandbox memory budget \\(${BUDGET / MiB} MiB`,
      ),
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result.content).toMatch(/Nothing was run\.$/);
    expect(existsSync(path.join(ws, 'ran.txt'))).toBe(false);
    for (const share of held) share.release();
    const after = await registry.run('bash', { command: 'echo ran' }, makeContext(ws));
    expect(after.content).toBe('ran\nExit code: 0');
  });
});
