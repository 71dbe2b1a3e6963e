import { durableAgent } from '../cli/cli-helpers';
import { tempWorkspace, uniqueQueue } from '../support/temporal';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver';

/**
 * `OTEL_EXPORTER_OTLP_ENDPOINT=… durable-agent run "…"` (issue 44): the run's inline worker is made as
 * `durable-agent worker` makes its own, telemetry included, and the CLI sends the whole trace before it
 * exits. Before, the inline worker's spans stayed in the batch processor and the process exited without
 * sending any. Runs the built CLI (`npm run build` first) with the offline model.
 */

let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

test('run with OTEL_* set exports the whole trace of the run (invoke_agent, chat, execute_tool) before it exits', async () => {
  const workspace = await tempWorkspace('run-otel');
  const outcome = await durableAgent(
    ['run', 'List the files here', '--model', 'offline-demo', '--workspace', workspace],
    {
      taskQueue: uniqueQueue('run-otel'),
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_SERVICE_NAME: 'cli-run-under-test',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        // The batch delay (5 s by default) does not pass before the CLI is done: the spans leave at its exit.
        OTEL_BSP_SCHEDULE_DELAY: '60000',
        DURABLE_AGENT_STICKY_ACTIVITIES: '0',
      },
    },
  );
  expect({ code: outcome.code, stderr: outcome.stderr }).toEqual({ code: 0, stderr: expect.any(String) });

  // Received before the CLI exited: nothing else sends spans to this receiver.
  const names = receiver.spans.map((s) => s.name);
  expect(names).toEqual(
    expect.arrayContaining(['RunWorkflow:agentWorkflow', 'invoke_agent durable-agent', 'chat offline-demo']),
  );
  expect(names.some((n) => n.startsWith('execute_tool '))).toBe(true);
  const agent = receiver.spans.find((s) => s.name === 'invoke_agent durable-agent')!;
  expect(agent.attributes).toMatchObject({ 'durable_agent.exit_reason': 'completed' });
  // One trace, from the service the environment names.
  const agentTrace = receiver.spans.filter((s) => s.traceId === agent.traceId);
  expect(agentTrace.map((s) => s.name)).toEqual(expect.arrayContaining(['chat offline-demo']));
  expect(new Set(receiver.spans.map((s) => s.service))).toEqual(new Set(['cli-run-under-test']));
}, 120_000);
