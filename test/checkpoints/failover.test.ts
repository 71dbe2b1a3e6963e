/**
 * Failover to another machine (docs/checkpoints.md#failover): two worker processes that see
 * different directories at the same workspace path (each in a mount namespace of its own, `unshare
 * -m`, standing for two machines), checkpoints in a real S3-compatible server (SeaweedFS). The first
 * worker writes files in several turns and is SIGKILLed in the middle of a model call; the second
 * finds the workspace empty, restores the run's last checkpoint before its first call, and the run
 * completes: every file is there, the model's later reads see them, nothing ran twice.
 */
import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { eventsQuery, stateQuery, type AgentRunInput, type RunEvent } from '../../src/shared';
import { message } from '../support/fake-anthropic';
import { formatState } from '../../src/cli/format';
import { linesOf, resultText, startAgentRun, toolResultsIn, waitUntil } from '../support/fault-helpers';
import { waitForState } from '../support/run-helpers';
import { useFaultSuite } from '../support/fault-suite';
import {
  ACCESS_KEY,
  SECRET_KEY,
  describeWithSeaweedfs,
  startSeaweedfs,
  type SeaweedServer,
} from '../support/seaweedfs';

jest.setTimeout(240_000);

const suite = useFaultSuite('failover');

/** Mount namespaces need root (or a user namespace): said and skipped where they cannot be made. */
const canUnshare = spawnSync('unshare', ['-m', '--propagation', 'private', 'true']).status === 0;

/** The prefix that runs a worker with `own` bind-mounted over `at`, seen by that worker alone. */
function onMachine(own: string, at: string): string[] {
  return [
    'unshare',
    '-m',
    '--propagation',
    'private',
    'sh',
    '-c',
    'mount --bind "$0" "$1" && shift && exec "$@"',
    own,
    at,
  ];
}

(canUnshare ? describeWithSeaweedfs : describe.skip)('failover between two machines', () => {
  let weed: SeaweedServer;
  let base: string;
  beforeAll(async () => {
    weed = await startSeaweedfs('failover');
  });
  afterAll(async () => {
    await weed?.stop();
  });
  beforeEach(async () => {
    base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'da-failover-')));
  });
  afterEach(async () => {
    await fs.rm(base, { recursive: true, force: true });
  });

  test("a SIGKILLed worker's run completes on a worker whose directory is empty: restored first, every file there, nothing run twice", async () => {
    const workspace = path.join(base, 'workspace');
    const machineA = path.join(base, 'machine-a');
    const machineB = path.join(base, 'machine-b');
    for (const dir of [workspace, machineA, machineB]) await fs.mkdir(dir);
    const env = {
      DURABLE_AGENT_CHECKPOINTS: 's3://failover/runs',
      AWS_ENDPOINT_URL: weed.endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: ACCESS_KEY,
      AWS_SECRET_ACCESS_KEY: SECRET_KEY,
    };
    const tool = (id: string, name: string, input: unknown) => ({ type: 'tool_use', id, name, input });
    suite.fake.enqueue(
      message([tool('toolu_1', 'write_file', { path: 'alpha.txt', content: 'alpha\n' })]),
      message([
        tool('toolu_2', 'bash', { command: 'mkdir -p src && echo beta > src/beta.txt && echo once >> effects.log' }),
      ]),
      message([tool('toolu_3', 'edit_file', { path: 'alpha.txt', old_string: 'alpha', new_string: 'alpha edited' })]),
      // The fourth call streams slowly: the kill lands in it, after three turns wrote files.
      message([tool('toolu_4', 'read_file', { path: 'alpha.txt' })], { pings: 60, eventDelayMs: 200 }),
      message([tool('toolu_4', 'read_file', { path: 'alpha.txt' })]),
      message([
        tool('toolu_5', 'read_file', { path: 'src/beta.txt' }),
        tool('toolu_6', 'bash', { command: 'cat effects.log; echo gamma > gamma.txt' }),
      ]),
      message('All files are there.'),
    );
    const input: AgentRunInput = {
      prompt: 'write files in several turns',
      model: 'claude-sonnet-5-5',
      workspace,
      timeouts: { modelHeartbeatSeconds: 2, toolHeartbeatSeconds: 2 },
    };
    const first = suite.fleet.start(env, 'machine-a', onMachine(machineA, workspace));
    await first.ready(60_000);
    const handle = await startAgentRun(suite.env.client, suite.taskQueue, input);
    await waitUntil(() => suite.fake.requests.length >= 4, 'the fourth model call', 90_000);
    const before = await handle.query(stateQuery);
    expect(before.lastCheckpoint).toMatchObject({ turn: 3 });
    first.kill('SIGKILL');
    await first.exited;
    // Machine A's files are its own: the test's (host's) view of the workspace path is empty.
    expect((await fs.readdir(machineA)).sort()).toEqual(['alpha.txt', 'effects.log', 'src']);
    expect(await fs.readdir(workspace)).toEqual([]);

    const second = suite.fleet.start(env, 'machine-b', onMachine(machineB, workspace));
    await second.ready(60_000);
    const result = await handle.result();
    expect(result).toMatchObject({ exitReason: 'completed', finalText: 'All files are there.' });

    // The model's reads on machine B saw machine A's files, as the last checkpoint held them.
    const reads = suite.fake.requests.slice(4).flatMap((r) => toolResultsIn(r));
    const text = (id: string) => resultText(reads.find((b) => b.tool_use_id === id));
    expect(text('toolu_4')).toContain('alpha edited');
    expect(text('toolu_5')).toContain('beta');
    expect(text('toolu_6')).toContain('once');
    expect(text('toolu_6')).not.toContain('[workspace]');
    // Machine B holds every file; the command of turn 2 ran once (its line is there once).
    expect(await fs.readFile(path.join(machineB, 'alpha.txt'), 'utf8')).toBe('alpha edited\n');
    expect(await fs.readFile(path.join(machineB, 'src', 'beta.txt'), 'utf8')).toBe('beta\n');
    expect(await linesOf(path.join(machineB, 'effects.log'))).toEqual(['once']);
    expect(await fs.readFile(path.join(machineB, 'gamma.txt'), 'utf8')).toBe('gamma\n');
    expect(await fs.readdir(workspace)).toEqual([]);

    const { events } = await handle.query(eventsQuery, { after: 0 });
    const notices = events.filter((e): e is Extract<RunEvent, { kind: 'notice' }> => e.kind === 'notice');
    expect(notices.map((n) => n.message).join('\n')).toMatch(/restored from the checkpoint of turn 3/);
    expect(events.some((e) => e.kind === 'workspace_diverged')).toBe(false);
    const turns = events.filter((e) => e.kind === 'checkpoint').map((e) => (e as { turn: number }).turn);
    expect(turns).toEqual([0, 1, 2, 3, 5]);
  });
  test('a worker whose directory differs keeps it and says so: workspace_diverged, a status line, a note to the model', async () => {
    const workspace = path.join(base, 'workspace');
    const machineA = path.join(base, 'machine-a');
    const machineB = path.join(base, 'machine-b');
    for (const dir of [workspace, machineA, machineB]) await fs.mkdir(dir);
    // Machine B holds someone else's copy: a stale file of the same name, and one the run never wrote.
    await fs.writeFile(path.join(machineB, 'alpha.txt'), 'stale\n');
    await fs.writeFile(path.join(machineB, 'notes.txt'), 'local notes\n');
    const env = {
      DURABLE_AGENT_CHECKPOINTS: 's3://failover/diverged',
      AWS_ENDPOINT_URL: weed.endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: ACCESS_KEY,
      AWS_SECRET_ACCESS_KEY: SECRET_KEY,
    };
    const tool = (id: string, name: string, input: unknown) => ({ type: 'tool_use', id, name, input });
    suite.fake.enqueue(
      message([tool('toolu_1', 'write_file', { path: 'alpha.txt', content: 'alpha\n' })]),
      message([tool('toolu_2', 'read_file', { path: 'alpha.txt' })], { pings: 60, eventDelayMs: 200 }),
      message([tool('toolu_2', 'read_file', { path: 'alpha.txt' })]),
      message('Noted.'),
    );
    const input: AgentRunInput = {
      prompt: 'write a file',
      model: 'claude-sonnet-5-5',
      workspace,
      session: true,
      timeouts: { modelHeartbeatSeconds: 2, toolHeartbeatSeconds: 2 },
    };
    const first = suite.fleet.start(env, 'machine-a', onMachine(machineA, workspace));
    await first.ready(60_000);
    const handle = await startAgentRun(suite.env.client, suite.taskQueue, input);
    await waitUntil(() => suite.fake.requests.length >= 2, 'the second model call', 90_000);
    first.kill('SIGKILL');
    await first.exited;
    const second = suite.fleet.start(env, 'machine-b', onMachine(machineB, workspace));
    await second.ready(60_000);
    const state = await waitForState(handle, (s) => s.status === 'awaiting_input', 120_000);
    // Kept as it was: the stale file is still there; the model was told, and so is the operator.
    expect(await fs.readFile(path.join(machineB, 'alpha.txt'), 'utf8')).toBe('stale\n');
    const read = toolResultsIn(suite.fake.requests.at(-1)).find((b) => b.tool_use_id === 'toolu_2');
    expect(resultText(read)).toContain('stale');
    expect(resultText(read)).toContain('[workspace]');
    expect(state.workspaceDiverged).toEqual({ paths: ['alpha.txt', 'notes.txt'], count: 2 });
    expect(formatState('run', state)).toMatch(
      /workspace {3}differs from the last checkpoint in 2 paths \(alpha\.txt, notes\.txt\)/,
    );
    const { events } = await handle.query(eventsQuery, { after: 0 });
    expect(events).toContainEqual(
      expect.objectContaining({ kind: 'workspace_diverged', paths: ['alpha.txt', 'notes.txt'], count: 2 }),
    );
    await handle.terminate('test over');
  });
});
