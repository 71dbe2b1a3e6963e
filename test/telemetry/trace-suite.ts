import type { NativeConnection } from '@temporalio/worker';
import type { ModelProvider } from '../../src/models/types';
import { WORKFLOW_TYPE } from '../../src/shared';
import { createTelemetry, type Telemetry, type TelemetryOptions } from '../../src/telemetry';
import { createDefaultRegistry } from '../../src/tools';
import { createAgentWorker } from '../../src/worker';
import type { agentWorkflow } from '../../src/workflows';
import { connectTestEnv, tempWorkspace, type TestEnv } from '../support/temporal';
import { buildOtelBundle } from './otel-bundle';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlp-receiver';

/**
 * The frame of a tracing test file: the test server, a local OTLP receiver emptied before each
 * test, the workflow bundle with the tracing interceptors, and helpers to read the spans received.
 */
export function useTraceSuite() {
  const s = {} as { env: TestEnv; receiver: OtlpReceiver; otelBundle: string; workspace: string };
  const telemetries: Telemetry[] = [];

  beforeAll(async () => {
    s.env = await connectTestEnv();
    s.receiver = await startOtlpReceiver();
    s.otelBundle = await buildOtelBundle();
  }, 180_000);
  afterAll(async () => {
    await Promise.all(telemetries.map((t) => t.shutdown()));
    await s.receiver?.close();
    await s.env?.close();
  });
  beforeEach(async () => {
    s.workspace = await tempWorkspace('otel');
    s.receiver.spans.length = 0;
    s.receiver.traceEncodings.length = 0;
    s.receiver.metrics.clear();
    s.receiver.metricEncodings.clear();
  });

  const suite = {
    get env() {
      return s.env;
    },
    get receiver() {
      return s.receiver;
    },
    get otelBundle() {
      return s.otelBundle;
    },
    get workspace() {
      return s.workspace;
    },

    /** Telemetry sending to the receiver, with a short batch delay. */
    telemetryFor(options: Partial<TelemetryOptions> = {}): Telemetry {
      const t = createTelemetry({
        tracesUrl: `${s.receiver.url}/v1/traces`,
        metricsUrl: `${s.receiver.url}/v1/metrics`,
        serviceName: 'otel-test',
        spanExportDelayMs: 50,
        ...options,
      });
      telemetries.push(t);
      return t;
    },

    worker(
      telemetry: Telemetry,
      model: ModelProvider,
      taskQueue: string,
      extra: { connection?: NativeConnection; maxCachedWorkflows?: number } = {},
    ) {
      return createAgentWorker({
        connection: extra.connection ?? s.env.nativeConnection,
        namespace: 'default',
        taskQueue,
        workflowBundlePath: s.otelBundle,
        deps: { models: () => model, tools: createDefaultRegistry() },
        stickyActivities: false,
        telemetry,
        shutdownGraceTime: 200,
        ...(extra.maxCachedWorkflows !== undefined
          ? { workerOptions: { maxCachedWorkflows: extra.maxCachedWorkflows } }
          : {}),
      });
    },

    start(taskQueue: string, id: string) {
      return s.env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
        taskQueue,
        workflowId: id,
        args: [{ prompt: 'take notes', model: 'scripted-test', workspace: s.workspace }],
      });
    },

    named: (prefix: string) => s.receiver.spans.filter((span) => span.name.startsWith(prefix)),

    one(name: string): ReceivedSpan {
      const found = s.receiver.spans.filter((span) => span.name === name);
      expect(found.map((span) => span.name)).toEqual([name]);
      return found[0]!;
    },

    /** Flushes and waits until the spans the run's end exports (its `RunWorkflow`) have arrived. */
    async flushed(telemetry: Telemetry): Promise<void> {
      for (let i = 0; i < 100 && !s.receiver.spans.some((span) => span.name === 'RunWorkflow:agentWorkflow'); i++) {
        await telemetry.forceFlush();
        await new Promise((r) => setTimeout(r, 50));
      }
      await telemetry.forceFlush();
    },

    /** The names on the way from a span up to its trace's root; throws when a parent never arrived. */
    ancestry(span: ReceivedSpan): string[] {
      const byId = new Map(s.receiver.spans.map((x) => [x.spanId, x]));
      const names: string[] = [];
      for (let x: ReceivedSpan | undefined = span; x?.parentSpanId;) {
        const parent = byId.get(x.parentSpanId);
        if (!parent) throw new Error(`span '${x.name}' has a parent ${x.parentSpanId} that was never exported`);
        names.push(parent.name);
        x = parent;
      }
      return names;
    },
  };
  return suite;
}

export async function waitFor(predicate: () => boolean, poke: () => unknown = () => {}, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await poke();
    await new Promise((r) => setTimeout(r, 50));
  }
}
