import { WORKFLOW_TYPE, type AgentRunInput } from '../../src/shared';
import type { agentWorkflow } from '../../src/workflows';
import { startFakeAnthropic, type FakeAnthropic } from './fake-anthropic';
import { connectTestEnv, tempWorkspace, type TestEnv } from './temporal';

/**
 * The common frame of a workflow test file: a connection to the test server for the file, a fresh
 * workspace per test, and `start(taskQueue, input)` for a run of the scripted model in it.
 */
export function useWorkflowSuite(label: string) {
  const suite = {} as { env: TestEnv; workspace: string };
  beforeAll(async () => {
    suite.env = await connectTestEnv();
  });
  afterAll(async () => {
    await suite.env?.close();
  });
  beforeEach(async () => {
    suite.workspace = await tempWorkspace(label);
  });
  let counter = 0;
  const start = (taskQueue: string, input: Partial<AgentRunInput> = {}) =>
    suite.env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
      taskQueue,
      workflowId: `${label}-${Date.now()}-${++counter}`,
      args: [{ prompt: 'work', model: 'scripted-test', workspace: suite.workspace, ...input }],
    });
  return { suite, start };
}

/**
 * A test file on the real Anthropic SDK: a connection to the test server for the file, and a fresh
 * fake Messages API (test/support/fake-anthropic.ts) per test.
 */
export function useFakeAnthropicSuite() {
  const suite = {} as { env: TestEnv; fake: FakeAnthropic };
  beforeAll(async () => {
    suite.env = await connectTestEnv();
  });
  afterAll(async () => {
    await suite.env?.close();
  });
  beforeEach(async () => {
    suite.fake = await startFakeAnthropic();
  });
  afterEach(async () => {
    await suite.fake?.close();
  });
  return suite;
}
