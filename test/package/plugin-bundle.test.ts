/**
 * A workflow bundle made through the AgentPlugin preloads the agent's workflow code and zod once per
 * workflow thread, as the worker's own bundle does, next to the user's own preloaded modules.
 */
import { bundleWorkflowCode } from '@temporalio/worker';
import * as os from 'node:os';
import * as path from 'node:path';
import { AgentPlugin } from '../../src';
import { AGENT_WORKFLOW_MODULES_WITH_STACKS } from '../../src/worker/workflow-bundle';

jest.setTimeout(120_000);

test("the plugin adds the agent's shared modules to the bundle's preloaded modules and keeps the user's", () => {
  const plugin = new AgentPlugin({ connectionFromEnv: false });
  const mine = path.join(os.tmpdir(), 'my-preloaded.js');
  const options = plugin.configureBundler({ workflowsPath: __filename, preloadModules: [mine] });
  expect(options.preloadModules).toEqual([mine, ...AGENT_WORKFLOW_MODULES_WITH_STACKS]);
  const again = plugin.configureBundler(options);
  expect(again.preloadModules).toEqual([mine, ...AGENT_WORKFLOW_MODULES_WITH_STACKS]);
});

test("a bundle of a user workflows module built with the plugin requires zod and the agent's workflow code in its preload step, not per run", async () => {
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(__dirname, 'fixtures', 'user-workflows.ts'),
    plugins: [new AgentPlugin({ connectionFromEnv: false })],
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} },
  });
  const preload = /preloadModules = function preloadModules\(\) \{([^}]*)\}/.exec(code)?.[1] ?? '';
  expect(preload).toContain('shared-modules');
  expect(preload).toContain('src/workflows/index');
});
