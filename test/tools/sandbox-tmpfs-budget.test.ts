/**
 * The worker's tmpfs budget (src/sandbox/limits.ts): shares never add up past it, each is at
 * least the minimum and at most a full /tmp + /dev/shm, and a call that finds too little left waits,
 * first come first served, until one ends or it gives up.
 */
import {
  MIN_TMPFS_GRANT_BYTES,
  SANDBOX_SHM_BYTES,
  SANDBOX_TMP_BYTES,
  TmpfsBudget,
  limitsFromEnv,
} from '../../src/sandbox';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
const full = { tmpBytes: SANDBOX_TMP_BYTES, shmBytes: SANDBOX_SHM_BYTES };
const live = () => new AbortController().signal;
const size = (g: { tmpBytes: number; shmBytes: number }) => g.tmpBytes + g.shmBytes;

test('with 4 GiB, two calls get a full share, the third 768 MiB, nine run at once and a tenth waits for one to end', async () => {
  const budget = new TmpfsBudget(4 * GiB);
  const grants = [];
  for (let i = 0; i < 9; i++) grants.push(await budget.acquire(full, live()));
  const sizes = grants.map((g) => size(g!));
  expect(sizes.slice(0, 3)).toEqual([size(full), size(full), 768 * MiB]);
  expect(sizes.every((s) => s >= MIN_TMPFS_GRANT_BYTES && s <= size(full))).toBe(true);
  expect(budget.inUse).toBe(sizes.reduce((a, b) => a + b, 0));
  expect(budget.inUse).toBeLessThanOrEqual(4 * GiB);
  // /tmp and /dev/shm keep their 4:1 ratio.
  expect(grants[2]!.shmBytes).toBe((768 * MiB) / 5 - (((768 * MiB) / 5) % 4096));

  let tenth: number | undefined;
  const waiting = budget.acquire(full, live()).then((g) => (tenth = size(g!)));
  await new Promise((r) => setTimeout(r, 20));
  expect(tenth).toBeUndefined();
  grants[0]!.release();
  await waiting;
  expect(tenth).toBeGreaterThanOrEqual(MIN_TMPFS_GRANT_BYTES);
  expect(budget.inUse).toBeLessThanOrEqual(4 * GiB);
});

test('waiters are served in order; one that gives up leaves the queue and takes nothing', async () => {
  const budget = new TmpfsBudget(2 * MIN_TMPFS_GRANT_BYTES);
  const first = await budget.acquire(full, live());
  const second = await budget.acquire(full, live());
  const order: string[] = [];
  const quitter = new AbortController();
  const a = budget.acquire(full, quitter.signal).then((g) => (order.push(g ? 'a' : 'a gave up'), g));
  const b = budget.acquire(full, live()).then((g) => (order.push('b'), g));
  quitter.abort();
  expect(await a).toBeUndefined();
  first!.release();
  second!.release();
  const got = await b;
  expect(order).toEqual(['a gave up', 'b']);
  got!.release();
  first!.release(); // a second release changes nothing
});

test('the budget and the process limit come from the environment, and bad values name the variable', () => {
  expect(
    limitsFromEnv({ DURABLE_AGENT_SANDBOX_TMPFS_BUDGET: '512M', DURABLE_AGENT_SANDBOX_MAX_PROCESSES: '64' }),
  ).toMatchObject({
    tmpfsBudgetBytes: 512 * MiB,
    maxProcesses: 64,
  });
  expect(limitsFromEnv({ DURABLE_AGENT_SANDBOX_TMPFS_BUDGET: '2G' }).tmpfsBudgetBytes).toBe(2 * GiB);
  for (const bad of ['lots', '1M', '-4G', '4T']) {
    expect(() => limitsFromEnv({ DURABLE_AGENT_SANDBOX_TMPFS_BUDGET: bad })).toThrow(
      `DURABLE_AGENT_SANDBOX_TMPFS_BUDGET must be a size of at least 16M (bytes, or with K, M or G: 512M, 4G), got '${bad}'`,
    );
  }
  for (const bad of ['4', 'many', '1e3', '-1']) {
    expect(() => limitsFromEnv({ DURABLE_AGENT_SANDBOX_MAX_PROCESSES: bad })).toThrow(
      `DURABLE_AGENT_SANDBOX_MAX_PROCESSES must be a whole number of processes, at least 8, got '${bad}'`,
    );
  }
});
