/**
 * OpenTelemetry traces and metrics for durable-agent workers (docs/observability.md).
 *
 * Off unless `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set or a
 * program passes options. Off, no tracing code is in the workflow bundle, no interceptor runs, no
 * exporter exists, and the OTel SDK is not even loaded (workers import `./from-env` only).
 */
export { createTelemetry, agentTracer, type Telemetry } from './pipeline';
export { telemetryFromEnv, shutdownTelemetryFromEnv } from './from-env';
export { telemetryOptionsFromEnv, type TelemetryOptions, type OtlpProtocol } from './config';
export { MetricNames } from './metrics';
export { TELEMETRY_WORKFLOW_MODULE } from './workflow-module';
