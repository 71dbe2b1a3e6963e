import { WORKFLOW_TYPE, type AgentRunInput } from '../../src/shared';
import type { agentWorkflow } from '../../src/workflows';
import { AnthropicProvider } from '../../src/models/anthropic';
import { startFakeAnthropic, type FakeAnthropic } from './fake-anthropic';
import { startSlowStream, type SlowStream } from './slow-stream';
import { connectTestEnv, tempWorkspace, type TestEnv } from './temporal';

/** A server a test starts fresh and closes after it (a fake model API). */
export interface PerTestServer {
  close(): Promise<void>;
}

/**
 * The common frame of a workflow test file: a connection to the test server for the file, a fresh
 * workspace per test, and `start(taskQueue, input)` for a run of the scripted model in it. With
 * `startFake`, `suite.fake` is a fresh fake model server per test (closed after it).
 */
export function useWorkflowSuite<F extends PerTestServer = never>(label: string, startFake?: () => Promise<F>) {
  const suite = {} as { env: TestEnv; workspace: string; fake: F };
  beforeAll(async () => {
    suite.env = await connectTestEnv();
  });
  afterAll(async () => {
    await suite.env?.close();
  });
  beforeEach(async () => {
    suite.workspace = await tempWorkspace(label);
    if (startFake) suite.fake = await startFake();
  });
  afterEach(async () => {
    await suite.fake?.close();
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

/**
 * A test file whose model streams slowly: a connection to the test server, one local Anthropic
 * Messages API that streams queued answers in small, timed deltas (test/support/slow-stream.ts),
 * one workspace, and `provider()`, the real Anthropic provider pointed at that server.
 */
export function useSlowStreamSuite(label: string) {
  const suite = {} as { env: TestEnv; server: SlowStream; workspace: string; provider(): AnthropicProvider };
  beforeAll(async () => {
    suite.env = await connectTestEnv();
    suite.server = await startSlowStream();
    suite.workspace = await tempWorkspace(label);
  });
  afterAll(async () => {
    await suite.server?.close();
    await suite.env?.close();
  });
  suite.provider = () => new AnthropicProvider({ apiKey: 'sk-test', baseURL: suite.server.url });
  return suite;
}
