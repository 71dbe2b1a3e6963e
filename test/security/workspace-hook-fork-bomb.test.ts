/**
 * Finding: "workspace command hooks run in bubblewrap without the bash call's limits: a hook the
 * model plants in the workspace's settings can fork without bound or fill memory through its /tmp".
 * A sandboxed hook now runs like a bash call: its processes capped by the kernel, its /tmp and
 * /dev/shm a share of the worker's tmpfs budget that it gives back when it ends. A fork bomb ends
 * as a failed hook (PreToolUse fails closed), leaving nothing running. Real bubblewrap, real hooks.
 */
import { spawnSync } from 'node:child_process';
import { processLimitMechanism, TmpfsBudget } from '../../src/sandbox';
import { group, makeHookBench, type HookBench } from '../hooks/helpers';
import { marked, samplePeak, waitUntil } from './process-count';

const MAX_PROCESSES = 48;
const MIB = 1024 * 1024;
const call = { event: 'PreToolUse' as const, toolName: 'bash', toolInput: { command: 'ls' } };

/** A fork bomb whose shell stays to the end (so the hook ends at its timeout, not when its shell exits). */
const bomb = (marker: string) => `# ${marker}\nbomb() { bomb | bomb & }; bomb; while :; do sleep 1; done`;

describe('a workspace hook within the sandbox’s limits', () => {
  let bench: HookBench;
  beforeEach(() => {
    bench = makeHookBench();
  });
  afterEach(() => bench.cleanup());

  test('a fork bomb is held to the process limit, fails the hook (denied), and leaves nothing running', async () => {
    const marker = `da-hook-bomb-${process.pid}-${Date.now()}`;
    bench.workspaceHooks({ PreToolUse: [group('bash', { command: bomb(marker), timeout: 3 })] });
    const budget = new TmpfsBudget(256 * MIB);
    const sampler = samplePeak(marker);
    const outcome = await bench.run(call, {
      sandbox: 'bwrap',
      limits: { maxProcesses: MAX_PROCESSES },
      tmpfsBudget: budget,
    });
    const peak = sampler.stop();

    expect(outcome.decision).toBe('deny');
    expect(outcome.reason).toMatch(/it timed out after 3 s and was killed/);
    expect(outcome.reason).toMatch(/The call is denied \(hooks fail closed\)\./);
    if (processLimitMechanism().kind === 'cgroup') {
      expect(outcome.reason).toContain(`reached the sandbox's limit of ${MAX_PROCESSES} processes`);
    }
    // It forked up to the limit and no further (bubblewrap's outer process carries the marker too).
    expect(peak).toBeGreaterThan(MAX_PROCESSES / 2);
    expect(peak).toBeLessThanOrEqual(MAX_PROCESSES + 1);
    expect(await waitUntil(() => marked(marker) === 0, 5_000)).toBe(true);
    expect(budget.inUse).toBe(0);
    expect(spawnSync('/bin/true').status).toBe(0);
  });

  test('its /tmp is its share of the worker’s tmpfs budget, given back when it ends', async () => {
    const budget = new TmpfsBudget(64 * MIB);
    const flood = 'if head -c 80M /dev/zero > /tmp/flood 2>/dev/null; then exit 0; fi; echo "/tmp is full" >&2; exit 2';
    bench.workspaceHooks({ PreToolUse: [group('bash', flood)] });
    const outcome = await bench.run(call, { sandbox: 'bwrap', tmpfsBudget: budget });
    expect(outcome).toEqual({ decision: 'deny', reason: '/tmp is full', reports: [] });
    expect(budget.inUse).toBe(0);
  });

  test('a hook waits for a share while the budget is in use, and its wait counts towards its timeout', async () => {
    const budget = new TmpfsBudget(16 * MIB);
    const held = await budget.acquire({ tmpBytes: 16 * MIB, shmBytes: 0 }, new AbortController().signal);
    bench.workspaceHooks({ PreToolUse: [group('bash', { command: 'exit 0', timeout: 1 })] });
    try {
      const outcome = await bench.run(call, { sandbox: 'bwrap', tmpfsBudget: budget });
      expect(outcome.decision).toBe('deny');
      expect(outcome.reason).toMatch(/it timed out after 1 s before it started: the worker's sandbox memory budget/);
    } finally {
      held?.release();
    }
    expect(budget.inUse).toBe(0);
  });
});
