import type { TelemetryOptions as RuntimeTelemetryOptions } from '@temporalio/worker';
import { DEFAULT_METRIC_EXPORT_INTERVAL_MS, telemetryOptionsFromEnv } from './config';

/**
 * The Temporal runtime's own metrics (workflow and activity task latencies, slots, polls), sent to
 * the same OTLP/HTTP metrics endpoint as durable-agent's: for `Runtime.install({ telemetryOptions })`.
 * Empty when telemetry or its metrics are off, or when a setting is bad (the worker then refuses to
 * start with the readable error, from `telemetryFromEnv`).
 */
export function sdkMetricsFromEnv(env: NodeJS.ProcessEnv = process.env): Pick<RuntimeTelemetryOptions, 'metrics'> {
  let options;
  try {
    options = telemetryOptionsFromEnv(env);
  } catch {
    return {};
  }
  if (!options?.metricsUrl) return {};
  return {
    metrics: {
      otel: {
        url: options.metricsUrl,
        http: true,
        metricsExportInterval: options.metricExportIntervalMs ?? DEFAULT_METRIC_EXPORT_INTERVAL_MS,
      },
    },
  };
}
