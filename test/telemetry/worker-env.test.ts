import { WORKFLOW_TYPE } from '../../src/shared';
import type { agentWorkflow } from '../../src/workflows';
import { WorkerFleet } from '../support/worker-harness';
import { connectTestEnv, tempWorkspace, testAddress, uniqueQueue, type TestEnv } from '../support/temporal';
import { buildOtelBundle } from './otel-bundle';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver';

let env: TestEnv;
let receiver: OtlpReceiver;
let otelBundle: string;
const taskQueue = uniqueQueue('otel-env');
const fleet = new WorkerFleet(() => ({
  TEMPORAL_ADDRESS: testAddress(),
  TEMPORAL_TASK_QUEUE: taskQueue,
  DA_TEST_WORKFLOW_BUNDLE: otelBundle,
  DURABLE_AGENT_STICKY_ACTIVITIES: '0',
}));

beforeAll(async () => {
  env = await connectTestEnv();
  receiver = await startOtlpReceiver();
  otelBundle = await buildOtelBundle();
}, 180_000);
afterEach(() => fleet.stopAll());
afterAll(async () => {
  await receiver?.close();
  await env?.close();
});

test('a worker configured only by OTEL_* variables exports the run as one trace (the last spans on shutdown) and its metrics in their own encoding', async () => {
  const worker = fleet.start({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_SERVICE_NAME: 'agents-under-test',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/protobuf',
    OTEL_METRIC_EXPORT_INTERVAL: '500',
  });
  await worker.ready(60_000);
  const workspace = await tempWorkspace('otel-env');
  const id = `otel-env-${Date.now()}`;
  const handle = await env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
    taskQueue,
    workflowId: id,
    args: [{ prompt: 'List the files here', model: 'offline-demo', workspace }],
  });
  expect((await handle.result()).exitReason).toBe('completed');
  // The batch delay (5 s by default) has not passed: the run's last spans leave on shutdown.
  worker.kill('SIGTERM');
  expect((await worker.exited).code).toBe(0);

  expect(receiver.traceEncodings.every((e) => e === 'json')).toBe(true);
  expect(new Set(receiver.spans.map((s) => s.traceId)).size).toBe(1);
  expect(new Set(receiver.spans.map((s) => s.service))).toEqual(new Set(['agents-under-test']));
  const names = receiver.spans.map((s) => s.name);
  expect(names).toEqual(
    expect.arrayContaining([
      'RunWorkflow:agentWorkflow',
      'invoke_agent durable-agent',
      'chat offline-demo',
      'execute_tool glob',
    ]),
  );
  const agent = receiver.spans.find((s) => s.name === 'invoke_agent durable-agent')!;
  expect(agent.attributes).toMatchObject({ 'gen_ai.conversation.id': id, 'durable_agent.exit_reason': 'completed' });
  // Metrics: durable-agent's own and, alongside, the Temporal runtime's.
  const metrics = [...receiver.metrics.keys()];
  expect(metrics).toEqual(expect.arrayContaining(['gen_ai.client.token.usage', 'durable_agent.tool.duration']));
  expect(metrics.some((m) => m.startsWith('temporal_'))).toBe(true);
  // Traces as the general protocol says (JSON), metrics as their own variable says (protobuf).
  for (const name of ['gen_ai.client.token.usage', 'durable_agent.tool.duration']) {
    expect([...receiver.metricEncodings.get(name)!]).toEqual(['protobuf']);
  }
}, 120_000);
