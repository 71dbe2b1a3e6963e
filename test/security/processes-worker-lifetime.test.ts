/**
 * No process a tool started outlives its worker (real worker processes, real bwrap, real server):
 * a SIGKILLed worker's sandboxed commands die with it (bwrap --die-with-parent and the PID
 * namespace), and a graceful shutdown stops every process group, those that ignore SIGTERM and
 * background processes an earlier (unsandboxed) call left running, before the process exits.
 */
import { message } from '../support/fake-anthropic';
import { startAgentRun, waitUntil as eventually } from '../support/fault-helpers';
import { useFaultSuite } from '../support/fault-suite';
import { liveProcessesWith, uniqueSleep, waitUntil } from '../support/processes';

jest.setTimeout(60_000);

const suite = useFaultSuite('lifetime');

const run = (prompt: string) =>
  startAgentRun(
    suite.env.client,
    suite.taskQueue,
    { prompt, model: 'claude-sonnet-5-5', workspace: suite.workspace },
    'lifetime',
  );

const bash = (id: string, command: string) => message([{ type: 'tool_use', id, name: 'bash', input: { command } }]);

test('SIGKILL of a worker kills its sandboxed commands, including ones that ignore SIGTERM or left the process group', async () => {
  const marker = uniqueSleep(60);
  // A stubborn shell, a child in a session of its own (out of the process group), and one in the foreground.
  suite.fake.enqueue(
    bash('toolu_k1', `trap '' TERM; setsid sleep ${marker} & sleep ${marker} & sleep ${marker}; wait`),
  );
  const worker = suite.fleet.start({}, 'doomed');
  await worker.ready();
  const handle = await run('start sleepers');
  await eventually(() => liveProcessesWith(marker, 'sleep').length === 3, 'the three sleepers to start');
  expect(liveProcessesWith(marker, '/usr/bin/bwrap').length).toBe(2); // bwrap's outer process and its init

  worker.kill('SIGKILL');
  await worker.exited;
  expect(await waitUntil(() => liveProcessesWith(marker).length === 0, 3000)).toBe(true);
  await handle.terminate('test done');
});

test('graceful shutdown (SIGTERM) kills a sandboxed command that ignores SIGTERM before the worker exits', async () => {
  const marker = uniqueSleep(60);
  suite.fake.enqueue(bash('toolu_g1', `trap '' TERM; sleep ${marker} & sleep ${marker}; wait`));
  const worker = suite.fleet.start({ DURABLE_AGENT_SHUTDOWN_GRACE: '1s' }, 'graceful');
  await worker.ready();
  await worker.waitFor(/^bash runs commands in a bubblewrap sandbox/, 5000);
  const handle = await run('start a stubborn command');
  await eventually(() => liveProcessesWith(marker, 'sleep').length === 2, 'the sleepers to start');

  worker.kill('SIGTERM');
  const exit = await worker.exited;
  expect(exit.code).toBe(0);
  // Checked the moment it exited: nothing was left for a later reaper to catch.
  expect(liveProcessesWith(marker)).toEqual([]);
  await handle.terminate('test done');
});

test('graceful shutdown of an unsandboxed worker kills background processes earlier calls left running', async () => {
  const leftover = uniqueSleep(60);
  const running = uniqueSleep(60);
  suite.fake.enqueue(
    // Returns at once, leaving a process that ignores SIGTERM running in the background.
    bash('toolu_u1', `(trap '' TERM; sleep ${leftover}) > /dev/null 2>&1 & echo started`),
    bash('toolu_u2', `sleep ${running}`),
  );
  const worker = suite.fleet.start({ DURABLE_AGENT_SHUTDOWN_GRACE: '1s', DURABLE_AGENT_SANDBOX: 'off' }, 'unsandboxed');
  await worker.ready();
  await worker.waitFor(/^WARNING: bash runs commands UNSANDBOXED \(DURABLE_AGENT_SANDBOX=off\)/, 5000);
  const handle = await run('leave a process behind');
  await eventually(() => liveProcessesWith(running, 'sleep').length === 1, 'the second command');
  expect(liveProcessesWith(leftover, 'sleep').length).toBe(1); // the first call returned; its child lives on

  worker.kill('SIGTERM');
  const exit = await worker.exited;
  expect(exit.code).toBe(0);
  expect(liveProcessesWith(leftover)).toEqual([]);
  expect(liveProcessesWith(running)).toEqual([]);
  const [first] = suite.fake.requests.slice(1);
  expect(JSON.stringify(first?.body)).toContain('(Ran UNSANDBOXED: DURABLE_AGENT_SANDBOX=off.)');
  await handle.terminate('test done');
});
