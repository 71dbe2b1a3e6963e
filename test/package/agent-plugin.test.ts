/**
 * The AgentPlugin on a plain `Worker.create` of a user's own: what the agent needs comes with the
 * plugin (search attributes in a fresh namespace, heartbeat throttling so an interrupt stops a
 * running tool at once), and the user's activities and the agent's live side by side.
 */
import { Client, Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { NativeConnection, Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { AgentPlugin, AgentRun } from '../../src';
import { ScriptedModel, text, toolUse } from '../../src/models';
import { SEARCH_ATTRIBUTE_DEFINITIONS } from '../../src/shared';
import { workerActivities } from '../../src/worker';
import { quietRuntime, tempWorkspace, testAddress, testBundlePath, uniqueQueue } from '../support/temporal';

jest.setTimeout(120_000);

let connection: Connection;
let native: NativeConnection;

beforeAll(async () => {
  quietRuntime();
  connection = await Connection.connect({ address: testAddress() });
  native = await NativeConnection.connect({ address: testAddress() });
});
afterAll(async () => {
  await connection?.close();
  await native?.close();
});

async function freshNamespace(): Promise<string> {
  const namespace = `plugin-${randomUUID().slice(0, 8)}`;
  await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
  // Namespace creation propagates asynchronously.
  for (let i = 0; i < 100; i++) {
    const known = await connection.workflowService.describeNamespace({ namespace }).then(
      () => true,
      () => false,
    );
    if (known) return namespace;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`namespace ${namespace} never became known`);
}

test('in a fresh namespace the plugin creates the search attributes, runs a run, and an interrupt stops a running tool within a second or two', async () => {
  const namespace = await freshNamespace();
  const model = new ScriptedModel([toolUse([{ name: 'bash', input: { command: 'sleep 60' } }]), text('unused')]);
  const workspace = await tempWorkspace('plugin');
  const plugin = new AgentPlugin({ models: () => model, workspace, registerSearchAttributes: true });
  const taskQueue = uniqueQueue('plugin');
  const worker = await Worker.create({
    connection: native,
    namespace,
    taskQueue,
    workflowBundle: { codePath: testBundlePath() },
    plugins: [plugin],
  });
  const client = new Client({ connection, namespace });
  const outcome = await worker.runUntil(async () => {
    const run = await AgentRun.start(client, { prompt: 'wait', tools: ['bash'] }, { taskQueue });
    for await (const event of run.follow({ intervalMs: 100 })) if (event.kind === 'tool_call_started') break;
    // The tool is running (its activity started): interrupt and time how long until the run ends.
    await new Promise((r) => setTimeout(r, 1500));
    const asked = Date.now();
    await run.interrupt('enough');
    const result = await run.result();
    return { result, ms: Date.now() - asked };
  });
  expect(outcome.result.exitReason).toBe('interrupted');
  // With the plugin's 1 s heartbeat throttle the cancel reaches the tool in 1-2 s; without it, in ~15 s.
  expect(outcome.ms).toBeLessThan(6_000);
  const { customAttributes } = await native.operatorService.listSearchAttributes({ namespace });
  for (const { name } of SEARCH_ATTRIBUTE_DEFINITIONS) expect(customAttributes).toHaveProperty(name);
});

test("the user's own activities stay next to the agent's; an agent activity name cannot be taken", async () => {
  const mine = async () => 'mine';
  const worker = await Worker.create({
    connection: native,
    taskQueue: uniqueQueue('names'),
    activities: { runTool: mine, callModel: mine },
    plugins: [new AgentPlugin({ stickyActivities: false })],
  });
  const names = [...worker.options.activities.keys()].sort();
  expect(names).toEqual(
    [
      'callModel',
      'runTool',
      ...[
        'callModel',
        'checkOutput',
        'firstModelCall',
        'keepFinalMessages',
        'listMcpTools',
        'loadAgentDefinitions',
        'prepareRun',
        'runHook',
        'runTool',
        'summarizeRun',
      ].map((n) => `durableAgent.${n}`),
    ].sort(),
  );
  expect(worker.options.activities.get('runTool')).toBe(mine);
  expect(worker.options.maxHeartbeatThrottleIntervalMs).toBe(1000);
  expect(worker.options.defaultHeartbeatThrottleIntervalMs).toBe(1000);
  await worker.runUntil(Promise.resolve()); // releases its hold on the connection
  await expect(
    Worker.create({
      connection: native,
      taskQueue: uniqueQueue('clash'),
      activities: { 'durableAgent.callModel': mine },
      plugins: [new AgentPlugin()],
    }),
  ).rejects.toThrow('AgentPlugin: the worker already registers activities named durableAgent.callModel');
});

test("createAgentWorker's activities: the agent's under both names, the caller's added, a prefixed name refused", () => {
  const agent = { callModel: () => 'agent', runTool: () => 'agent' };
  const mine = () => 'mine';
  const merged = workerActivities(agent, { runTool: mine, lookup: mine });
  expect(merged['durableAgent.runTool']).toBe(agent.runTool);
  expect(merged['durableAgent.callModel']).toBe(agent.callModel);
  expect(merged.callModel).toBe(agent.callModel);
  expect(merged.runTool).toBe(mine);
  expect(merged.lookup).toBe(mine);
  expect(() => workerActivities(agent, { 'durableAgent.runTool': mine })).toThrow(
    'activity names reserved by durable-agent: durableAgent.runTool',
  );
});

test('AgentPlugin refuses options it cannot use, naming what it accepts', () => {
  expect(() => new AgentPlugin({ sandbox: 'docker' as never })).toThrow("sandbox must be 'bwrap' or 'off'");
  expect(() => new AgentPlugin({ tools: {} as never })).toThrow('tools must be an array');
  expect(() => new AgentPlugin({ tools: [{ name: 'bash' } as never] })).toThrow("Tool 'bash' is already registered");
});
