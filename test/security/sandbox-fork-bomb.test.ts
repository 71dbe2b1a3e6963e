/**
 * Finding: "no process limit: one call started 6,000 processes, a fork bomb takes every PID on the
 * host until the call times out". A call's processes are now capped by the kernel: a pids cgroup
 * where the worker can make one (root here), RLIMIT_NPROC in the call's own user namespace for any
 * other user. The bomb ends as an error for its call, and the host keeps its PIDs. Against the real
 * bubblewrap, with a limit small enough for a 2-core machine.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, readdirSync } from 'node:fs';
import { createBashTool, ToolRegistry } from '../../src/tools';
import { bwrapProcessEnv, findBwrap, processLimitMechanism } from '../../src/sandbox';
import { INHERITED_WORKSPACE, sandboxedShellArgs } from '../../src/sandbox/spawn';
import { holdWorkspace } from '../../src/tools/held-workspace';
import { makeContext, makeTempDir } from '../tools/helpers';
import { marked, samplePeak, waitUntil } from './process-count';

const MAX_PROCESSES = 48;
const { dir: ws, cleanup } = makeTempDir('da-fork-bomb-');
afterAll(cleanup);

/** A fork bomb whose shell stays to the end (so the call ends at its timeout, not when the shell exits). */
const bomb = (marker: string) => `# ${marker}\nbomb() { bomb | bomb & }; bomb; while :; do sleep 1; done`;

describe('a fork bomb in a sandboxed call', () => {
  const registry = new ToolRegistry([createBashTool({ sandbox: 'bwrap', limits: { maxProcesses: MAX_PROCESSES } })]);

  test('is held to the call’s process limit, ends as an error, and leaves the host able to fork', async () => {
    const marker = `da-bomb-${process.pid}-${Date.now()}`;
    const sampler = samplePeak(marker);
    const result = await registry.run('bash', { command: bomb(marker), timeout: 4_000 }, makeContext(ws));
    const peak = sampler.stop();

    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/Command timed out after 4000 ms and was killed\./);
    if (processLimitMechanism().kind === 'cgroup') {
      expect(result.content).toContain(`reached the sandbox's limit of ${MAX_PROCESSES} processes per call`);
    }
    // The bomb did fork up to the limit, and no further (bubblewrap's outer process carries the marker too).
    expect(peak).toBeGreaterThan(MAX_PROCESSES / 2);
    expect(peak).toBeLessThanOrEqual(MAX_PROCESSES + 1);
    expect(await waitUntil(() => marked(marker) === 0, 5_000)).toBe(true);
    expect(spawnSync('/bin/true').status).toBe(0);
  });

  test('the command cannot lift its limit: no cgroup file system inside, and RLIMIT_NPROC set hard', async () => {
    const result = await registry.run(
      'bash',
      { command: 'ls /sys/fs/cgroup 2>&1; ulimit -u; ulimit -u unlimited 2>&1; echo "raise: $?"' },
      makeContext(ws),
    );
    expect(result.content).toMatch(/cannot access '\/sys\/fs\/cgroup': No such file or directory/);
    if (processLimitMechanism().kind === 'rlimit') {
      expect(result.content).toMatch(new RegExp(`^${MAX_PROCESSES}$`, 'm'));
      expect(result.content).toMatch(/raise: 1/);
    }
  });

  test('the call’s cgroup is removed once the call has ended', async () => {
    const mechanism = processLimitMechanism();
    if (mechanism.kind !== 'cgroup' || !mechanism.dir) return; // RLIMIT_NPROC: nothing to remove
    const workerCgroup = mechanism.dir;
    await registry.run('bash', { command: 'sleep 0.2 & echo started' }, makeContext(ws));
    // The spare launcher kept ready for the next call has cgroups of its own (`spare-N`).
    const calls = () =>
      readdirSync(workerCgroup, { withFileTypes: true }).filter((e) => e.isDirectory() && !e.name.startsWith('spare-'));
    expect(await waitUntil(() => calls().length === 0, 3_000)).toBe(true);
  });
});

/**
 * The other mechanism, for a worker that does not run as root: RLIMIT_NPROC, which the kernel
 * counts per user namespace (each call has its own) and does not apply to root. Run as `nobody`
 * with the exact arguments a call uses.
 */
describe('a fork bomb under a user other than root (RLIMIT_NPROC)', () => {
  const bwrap = findBwrap();
  const root = process.getuid?.() === 0;
  const canSwitch = root && spawnSync('setpriv', ['--version']).status === 0;

  (bwrap && canSwitch ? test : test.skip)('is held to the limit by the kernel and dies with its call', async () => {
    chmodSync(ws, 0o777);
    const marker = `da-bomb-nproc-${process.pid}-${Date.now()}`;
    // As a bash call: the held workspace passed down as descriptor 3 (the other user cannot open ours).
    const held = await holdWorkspace(ws);
    const args = sandboxedShellArgs(bomb(marker), bwrap as string, {
      workspace: held.path,
      workspaceSource: INHERITED_WORKSPACE,
      network: false,
      limits: { maxProcesses: MAX_PROCESSES, tmpBytes: 16 * 1024 * 1024, shmBytes: 4 * 1024 * 1024, rlimit: true },
    });
    const sampler = samplePeak(marker);
    const child = spawn('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '/bin/bash', ...args], {
      cwd: ws,
      env: bwrapProcessEnv(),
      detached: true,
      stdio: ['ignore', 'ignore', 'ignore', held.fd],
    });
    await new Promise((r) => setTimeout(r, 3_000));
    process.kill(-(child.pid as number), 'SIGKILL');
    await held.close();
    const peak = sampler.stop();

    expect(peak).toBeGreaterThan(MAX_PROCESSES / 2);
    // The user namespace holds bubblewrap's init and the shells; the outer bubblewrap is outside it.
    expect(peak).toBeLessThanOrEqual(MAX_PROCESSES + 1);
    expect(await waitUntil(() => marked(marker) === 0, 5_000)).toBe(true);
  });
});
