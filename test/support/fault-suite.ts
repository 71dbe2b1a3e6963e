import { startFakeAnthropic, type FakeAnthropic } from './fake-anthropic';
import { connectTestEnv, tempWorkspace, testAddress, testBundlePath, uniqueQueue, type TestEnv } from './temporal';
import { WorkerFleet } from './worker-harness';

/** What a fault test works with; `fake`, `workspace` and `taskQueue` are fresh for every test. */
export interface FaultSuite {
  env: TestEnv;
  fake: FakeAnthropic;
  workspace: string;
  taskQueue: string;
  /** Real worker processes polling `taskQueue` against `fake`; all stopped after each test. */
  fleet: WorkerFleet;
}

/**
 * Registers the jest hooks every fault suite needs: a client for the test server, and per test a
 * fresh fake Messages API, workspace and task queue, with the worker processes started in the test
 * stopped after it. `workerEnv` adds to every worker's environment.
 */
export function useFaultSuite(label: string, workerEnv: Record<string, string> = {}): FaultSuite {
  const suite = {
    fleet: new WorkerFleet(() => ({
      TEMPORAL_ADDRESS: testAddress(),
      TEMPORAL_TASK_QUEUE: suite.taskQueue,
      DA_TEST_WORKFLOW_BUNDLE: testBundlePath(),
      ANTHROPIC_BASE_URL: suite.fake.url,
      ANTHROPIC_API_KEY: 'sk-test',
      ...workerEnv,
    })),
  } as FaultSuite;

  beforeAll(async () => {
    suite.env = await connectTestEnv();
  });
  afterAll(async () => {
    await suite.env?.close();
  });
  beforeEach(async () => {
    suite.fake = await startFakeAnthropic();
    suite.workspace = await tempWorkspace(label);
    suite.taskQueue = uniqueQueue(label);
  });
  afterEach(async () => {
    await suite.fleet.stopAll();
    await suite.fake?.close();
  });
  return suite;
}
