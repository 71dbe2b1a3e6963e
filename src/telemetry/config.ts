/**
 * When and where durable-agent sends OpenTelemetry traces and metrics: read from the standard
 * `OTEL_*` environment variables at the edge, or given explicitly by an embedding program.
 */

/** The OTLP/HTTP encodings durable-agent can send. */
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

export const DEFAULT_SERVICE_NAME = 'durable-agent';
/** How often metrics are pushed, unless `OTEL_METRIC_EXPORT_INTERVAL` says otherwise. */
export const DEFAULT_METRIC_EXPORT_INTERVAL_MS = 60_000;

export interface TelemetryOptions {
  /** Where spans go: the full OTLP/HTTP traces URL (`…/v1/traces`). */
  tracesUrl: string;
  /** Where metrics go (`…/v1/metrics`); without it no metrics are recorded. */
  metricsUrl?: string;
  /** Trace encoding; default `http/protobuf`. */
  protocol?: OtlpProtocol;
  /** Metric encoding; default `protocol`, else `http/protobuf`. */
  metricsProtocol?: OtlpProtocol;
  /** The `service.name` resource attribute; default `durable-agent`. */
  serviceName?: string;
  /** Record prompts, completions, tool arguments and results on spans. Off by default: they may hold secrets. */
  content?: boolean;
  /** Extra headers on every export request (an API key, for instance). */
  headers?: Record<string, string>;
  /** Metric push interval in ms; default 60 s. */
  metricExportIntervalMs?: number;
  /** Span batching delay in ms (the SDK's default is 5 s); tests make it short. */
  spanExportDelayMs?: number;
}

/**
 * Telemetry settings from the environment, or `undefined` when tracing is off (neither
 * `OTEL_EXPORTER_OTLP_ENDPOINT` nor `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` set, or `OTEL_SDK_DISABLED=true`).
 * A bad value throws an error that names the variable and what it accepts.
 */
export function telemetryOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): TelemetryOptions | undefined {
  if (/^true$/i.test(env.OTEL_SDK_DISABLED?.trim() ?? '')) return undefined;
  const base = setting(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  const traces = setting(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  if (base === undefined && traces === undefined) return undefined;
  const metrics = setting(env, 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT');
  // A signal's own variable wins over the general one, as the OTel SDKs read them.
  const protocolVar = (signal: 'TRACES' | 'METRICS') =>
    setting(env, `OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`)
      ? `OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`
      : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const interval = setting(env, 'OTEL_METRIC_EXPORT_INTERVAL');
  const metricsUrl = metrics !== undefined ? checkedUrl('OTEL_EXPORTER_OTLP_METRICS_ENDPOINT', metrics) : undefined;
  return {
    tracesUrl:
      traces !== undefined
        ? checkedUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', traces)
        : signalUrl(checkedUrl('OTEL_EXPORTER_OTLP_ENDPOINT', base!), 'traces'),
    ...(metricsUrl !== undefined
      ? { metricsUrl }
      : base !== undefined
        ? { metricsUrl: signalUrl(checkedUrl('OTEL_EXPORTER_OTLP_ENDPOINT', base), 'metrics') }
        : {}),
    protocol: parseProtocol(protocolVar('TRACES'), setting(env, protocolVar('TRACES'))),
    metricsProtocol: parseProtocol(protocolVar('METRICS'), setting(env, protocolVar('METRICS'))),
    serviceName: setting(env, 'OTEL_SERVICE_NAME') ?? DEFAULT_SERVICE_NAME,
    content: /^(1|true|yes|on)$/i.test(env.DURABLE_AGENT_OTEL_CONTENT?.trim() ?? ''),
    ...(interval !== undefined ? { metricExportIntervalMs: parseInterval(interval) } : {}),
  };
}

/** `OTEL_EXPORTER_OTLP_ENDPOINT` is a base URL: each signal goes to `<base>/v1/<signal>`. */
export function signalUrl(base: string, signal: 'traces' | 'metrics'): string {
  return `${base.replace(/\/+$/, '')}/v1/${signal}`;
}

export function parseProtocol(name: string, raw: string | undefined): OtlpProtocol {
  if (raw === undefined) return 'http/protobuf';
  const found = OTLP_PROTOCOLS.find((p) => p === raw.trim().toLowerCase());
  if (!found) {
    throw new Error(
      `${name} must be one of ${OTLP_PROTOCOLS.join(', ')} (durable-agent sends OTLP over HTTP), got '${raw}'`,
    );
  }
  return found;
}

function setting(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

function checkedUrl(name: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${name} must be an http(s) URL such as http://localhost:4318, got '${raw}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`${name} must be an http(s) URL such as http://localhost:4318, got '${raw}'`);
  }
  return raw;
}

function parseInterval(raw: string): number {
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 100 || ms > 24 * 3_600_000) {
    throw new Error(`OTEL_METRIC_EXPORT_INTERVAL must be a whole number of milliseconds (100 or more), got '${raw}'`);
  }
  return ms;
}
