import { COMMANDS } from '../../src/cli/commands';
import { DEBUG_ENV, cliWorkerParts } from '../../src/cli/worker-assembly';
import { temporalConfig } from '../../src/client/config';
import { durableAgent } from './cli-helpers';
import { connectTestEnv, uniqueQueue } from '../support/temporal';

/**
 * `--debug` on `run` and `worker` (issue 44): the worker the command starts gets DURABLE_AGENT_DEBUG=1,
 * whose per-iteration lines the worker writes; a `run` that starts no worker says so.
 */

test('run and worker take --debug, and a CLI worker made with it has DURABLE_AGENT_DEBUG=1', () => {
  for (const name of ['run', 'worker']) {
    expect({ name, debug: COMMANDS.find((c) => c.name === name)!.flags.some((f) => f.name === 'debug') }).toEqual({
      name,
      debug: true,
    });
  }
  const before = process.env[DEBUG_ENV];
  try {
    delete process.env[DEBUG_ENV];
    cliWorkerParts({ config: temporalConfig(), deps: { models: {} as never, tools: {} as never } });
    expect(process.env[DEBUG_ENV]).toBeUndefined();
    cliWorkerParts({ config: temporalConfig(), deps: { models: {} as never, tools: {} as never }, debug: true });
    expect(process.env[DEBUG_ENV]).toBe('1');
  } finally {
    if (before === undefined) delete process.env[DEBUG_ENV];
    else process.env[DEBUG_ENV] = before;
  }
});

test('run --debug --detach starts no worker and says where the variable belongs', async () => {
  const out = await durableAgent(['run', 'List', '--model', 'offline-demo', '--detach', '--debug'], {
    taskQueue: uniqueQueue('debug-detach'),
  });
  const id = /^Started run (\S+)/m.exec(out.stdout)?.[1];
  if (id) {
    const env = await connectTestEnv();
    await env.client.workflow
      .getHandle(id)
      .terminate('test done')
      .catch(() => undefined);
    await env.close();
  }
  expect(out.code).toBe(0);
  expect(out.stderr).toContain('--debug turns on the debug lines of the worker this command starts');
  expect(out.stderr).toContain('DURABLE_AGENT_DEBUG=1');
});

test("run --debug: the inline worker writes a line per model call and tool call (sizes, timings, the model's decision)", async () => {
  const out = await durableAgent(['run', 'List the files here', '--model', 'offline-demo', '--debug', '--json'], {
    taskQueue: uniqueQueue('debug-run'),
    env: { DURABLE_AGENT_DEBUG: undefined },
  });
  expect(out.code).toBe(0);
  expect(out.stderr).toMatch(/^\[durable-agent debug\] model call .*\| .*\| \d+ ms$/m);
  expect(out.stderr).toMatch(/^\[durable-agent debug\] tool call /m);
  const without = await durableAgent(['run', 'List the files here', '--model', 'offline-demo', '--json'], {
    taskQueue: uniqueQueue('debug-off'),
    env: { DURABLE_AGENT_DEBUG: undefined },
  });
  expect(without.code).toBe(0);
  expect(without.stderr).not.toContain('[durable-agent debug]');
}, 120_000);
