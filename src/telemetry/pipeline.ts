/**
 * The telemetry pipeline of a worker process: the OTel SDK's tracer and meter providers, the OTLP
 * exporters, and what a Temporal worker needs to feed them. Loaded only when telemetry is on.
 */
import * as otel from '@opentelemetry/api';
import { OTLPMetricExporter as OTLPJsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as OTLPProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter as OTLPJsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OTLPProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { Resource } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  makeWorkflowExporter,
} from '@temporalio/interceptors-opentelemetry';
import type { OpenTelemetryWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import type { InjectedSink, WorkerOptions } from '@temporalio/worker';
import type { WorkflowInfo } from '@temporalio/workflow';
import { DEFAULT_METRIC_EXPORT_INTERVAL_MS, DEFAULT_SERVICE_NAME, type TelemetryOptions } from './config';
import { GenAiActivityInterceptor } from './activity-spans';
import { AgentMetrics } from './metrics';
import { ErrorTextFreeExporter } from './error-text';
import { ensureNodeContext } from './node-context';
import { TELEMETRY_WORKFLOW_MODULE } from './workflow-module';

const TRACER_NAME = 'durable-agent';

/** A worker process's telemetry pipeline: one per process, shared by its workers. */
export interface Telemetry {
  readonly options: Readonly<TelemetryOptions>;
  readonly tracerProvider: BasicTracerProvider;
  /** Present when a metrics endpoint is configured. */
  readonly meterProvider?: MeterProvider;
  /**
   * What a Temporal worker needs: activity interceptors, the workflow span sink, and (unless the
   * worker runs a prebuilt bundle, which must have been built with `TELEMETRY_WORKFLOW_MODULE`)
   * the workflow interceptor module. `tools` is the worker's tool registry: metrics name only its
   * tools (and MCP tools the run has), any other name as `unknown`.
   */
  workerOptions(
    prebuiltBundle: boolean,
    tools?: { has(name: string): boolean },
  ): Pick<WorkerOptions, 'interceptors' | 'sinks'>;
  /** Sends everything buffered now (tests, and before a process exits). */
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

export function createTelemetry(options: TelemetryOptions): Telemetry {
  ensureNodeContext();
  const resource = Resource.default().merge(
    new Resource({ 'service.name': options.serviceName ?? DEFAULT_SERVICE_NAME }),
  );
  const exporterConfig = { url: options.tracesUrl, ...(options.headers ? { headers: options.headers } : {}) };
  const exporter =
    options.protocol === 'http/json'
      ? new OTLPJsonTraceExporter(exporterConfig)
      : new OTLPProtoTraceExporter(exporterConfig);
  // Error text (a provider's message can echo the prompt or a key) leaves only with the content opt-in.
  const processor: SpanProcessor = new BatchSpanProcessor(
    options.content === true ? exporter : new ErrorTextFreeExporter(exporter),
    {
      ...(options.spanExportDelayMs !== undefined ? { scheduledDelayMillis: options.spanExportDelayMs } : {}),
    },
  );
  const tracerProvider = new BasicTracerProvider({ resource, spanProcessors: [processor] });
  const tracer = tracerProvider.getTracer(TRACER_NAME);
  const metricsConfig = { url: options.metricsUrl, ...(options.headers ? { headers: options.headers } : {}) };
  const meterProvider = options.metricsUrl
    ? new MeterProvider({
        resource,
        readers: [
          new PeriodicExportingMetricReader({
            exporter:
              (options.metricsProtocol ?? options.protocol) === 'http/json'
                ? new OTLPJsonMetricExporter(metricsConfig)
                : new OTLPProtoMetricExporter(metricsConfig),
            exportIntervalMillis: options.metricExportIntervalMs ?? DEFAULT_METRIC_EXPORT_INTERVAL_MS,
          }),
        ],
      })
    : undefined;
  const metrics = meterProvider ? new AgentMetrics(meterProvider.getMeter(TRACER_NAME)) : undefined;
  const spanSettings = { tracer, content: options.content === true, ...(metrics ? { metrics } : {}) };
  const workflowSink = workflowSpanSink(processor, resource);

  return {
    options,
    tracerProvider,
    ...(meterProvider ? { meterProvider } : {}),
    workerOptions(prebuiltBundle, tools) {
      const settings = tools ? { ...spanSettings, knownTool: (name: string) => tools.has(name) } : spanSettings;
      return {
        interceptors: {
          activity: [
            (ctx) => ({
              inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer }),
              outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
            }),
            (ctx) => ({ inbound: new GenAiActivityInterceptor(ctx, settings) }),
          ],
          ...(prebuiltBundle ? {} : { workflowModules: [TELEMETRY_WORKFLOW_MODULE] }),
        },
        sinks: { exporter: workflowSink },
      };
    },
    async forceFlush() {
      await Promise.all([tracerProvider.forceFlush(), meterProvider?.forceFlush()]);
    },
    async shutdown() {
      await Promise.all([tracerProvider.shutdown(), meterProvider?.shutdown()]);
    },
  };
}

/**
 * Temporal's sink for the workflow's spans, given only the run's identity: the stock sink copies the
 * whole `WorkflowInfo` onto every span, `lastResult`, `lastFailure` and `memo` included, which can hold
 * a previous run's answer (a cron or retried run) whether or not content capture is on.
 */
function workflowSpanSink(processor: SpanProcessor, resource: Resource): InjectedSink<OpenTelemetryWorkflowExporter> {
  const stock = makeWorkflowExporter(processor, resource);
  return {
    export: {
      fn: (info, spans) => stock.export.fn(runIdentity(info), spans),
      callDuringReplay: false,
    },
  };
}

function runIdentity(info: WorkflowInfo): WorkflowInfo {
  const { workflowId, runId, workflowType, taskQueue, namespace, attempt } = info;
  return { workflowId, runId, workflowType, taskQueue, namespace, attempt } as WorkflowInfo;
}

/** The tracer durable-agent's own spans use, for a program that adds spans around a run. */
export function agentTracer(telemetry: Telemetry): otel.Tracer {
  return telemetry.tracerProvider.getTracer(TRACER_NAME);
}
