import { randomUUID } from 'node:crypto';
import { parseAddress } from '../../src/server/dev-server';
import { connectTestEnv, tempWorkspace, testAddress, uniqueQueue, type TestEnv } from '../support/temporal';
import { durableAgent } from './cli-helpers';

/**
 * The hints the built CLI gives (issue 44, "small wrong hints"): Web UI links on the UI of the
 * server in use (not :8233 whatever it is), `--detach` pointing at `follow`, and `--id` of a run that
 * exists refused unless `--new` says a new run is meant.
 */

let env: TestEnv;
let dataHome: string;
const tag = randomUUID().slice(0, 8);

beforeAll(async () => {
  env = await connectTestEnv();
  // No UI a developer's `durable-agent server --ui-port` noted may stand in.
  dataHome = await tempWorkspace('hints-data');
});
afterAll(async () => {
  await env?.close();
});

const cli = (args: string[], taskQueue: string, extra: Record<string, string> = {}) =>
  durableAgent(args, { taskQueue, env: { XDG_DATA_HOME: dataHome, DURABLE_AGENT_STICKY_ACTIVITIES: '0', ...extra } });

async function terminate(workflowId: string): Promise<void> {
  await env.client.workflow
    .getHandle(workflowId)
    .terminate('test cleanup')
    .catch(() => undefined);
}

test('--detach links the run on the UI of the server in use and says to follow it', async () => {
  const taskQueue = uniqueQueue('hints-detach');
  const workflowId = `hints-${tag}-detach`;
  const { port } = parseAddress(testAddress());
  const out = await cli(
    ['run', 'List the files', '--model', 'offline-demo', '--detach', '--id', workflowId],
    taskQueue,
  );
  await terminate(workflowId);
  expect({ code: out.code, stderr: out.stderr }).toEqual({ code: 0, stderr: '' });
  // The test server is not on 7233: its UI is on its port + 1000, as the embedded server and `temporal server start-dev` put it.
  expect(port).not.toBe(7233);
  expect(out.stdout).toMatch(
    new RegExp(
      `^Web UI: http://127\\.0\\.0\\.1:${port + 1000}/namespaces/default/workflows/${workflowId}/[\\w-]+/history$`,
      'm',
    ),
  );
  expect(out.stdout).not.toContain(':8233');
  expect(out.stdout).toContain(`Detached. Follow it with: durable-agent follow ${workflowId}`);
  expect(out.stdout).not.toMatch(/Follow it with: durable-agent result/);
});

test('TEMPORAL_UI_URL is the base of every link', async () => {
  const taskQueue = uniqueQueue('hints-ui');
  const workflowId = `hints-${tag}-ui`;
  const out = await cli(
    ['run', 'List the files', '--model', 'offline-demo', '--detach', '--id', workflowId],
    taskQueue,
    {
      TEMPORAL_UI_URL: 'https://temporal-ui.example.test:9443/',
    },
  );
  await terminate(workflowId);
  expect(out.code).toBe(0);
  expect(out.stdout).toMatch(
    new RegExp(`^Web UI: https://temporal-ui\\.example\\.test:9443/namespaces/default/workflows/${workflowId}/`, 'm'),
  );
});

test('--id of a run that ended is refused without --new; with --new a new run starts; a running one is refused', async () => {
  const taskQueue = uniqueQueue('hints-id');
  const workflowId = `hints-${tag}-reuse`;
  const workspace = await tempWorkspace('hints-id');
  const args = ['run', 'List the files here', '--model', 'offline-demo', '--workspace', workspace, '--id', workflowId];
  const first = await cli(args, taskQueue);
  expect({ code: first.code, stderr: first.stderr }).toMatchObject({ code: 0 });
  const firstRun = (await env.client.workflow.getHandle(workflowId).describe()).runId;

  const again = await cli(args, taskQueue);
  expect(again.code).toBe(2);
  expect(again.stderr).toContain(`a run with id '${workflowId}' already exists: it ended completed`);
  expect(again.stderr).toContain('pass --new to start a new run under the same id');
  // Refused before anything started: the id still names the first run.
  expect((await env.client.workflow.getHandle(workflowId).describe()).runId).toBe(firstRun);

  const renewed = await cli([...args, '--new'], taskQueue);
  expect(renewed.code).toBe(0);
  const second = await env.client.workflow.getHandle(workflowId).describe();
  expect(second.runId).not.toBe(firstRun);
  expect(second.status.name).toBe('COMPLETED');

  // A run still open under the id: refused with or without --new, naming `follow`.
  const openId = `hints-${tag}-open`;
  const detached = await cli(
    ['run', 'List', '--model', 'offline-demo', '--detach', '--id', openId],
    uniqueQueue('none'),
  );
  expect(detached.code).toBe(0);
  const busy = await cli(['run', 'List', '--model', 'offline-demo', '--id', openId, '--new'], taskQueue);
  await terminate(openId);
  expect(busy.code).toBe(2);
  expect(busy.stderr).toContain(`a run with id '${openId}' is already running`);
  expect(busy.stderr).toContain(`durable-agent follow ${openId}`);
}, 120_000);

test('--new without --id is a usage error', async () => {
  const out = await cli(['run', 'List', '--new'], uniqueQueue('hints-new'));
  expect(out.code).toBe(2);
  expect(out.stderr.trim().split('\n')).toEqual([
    'error: --new goes with --id: a run without --id gets a new id anyway',
    "see 'durable-agent run --help'",
  ]);
});
