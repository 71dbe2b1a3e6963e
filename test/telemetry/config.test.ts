import { telemetryOptionsFromEnv } from '../../src/telemetry';

test('without an OTLP endpoint telemetry is off', () => {
  expect(telemetryOptionsFromEnv({})).toBeUndefined();
  expect(telemetryOptionsFromEnv({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toBeUndefined();
  expect(telemetryOptionsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: '   ' })).toBeUndefined();
});

test('OTEL_SDK_DISABLED=true turns it off even with an endpoint', () => {
  expect(
    telemetryOptionsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }),
  ).toBeUndefined();
});

test('the base endpoint gives traces and metrics their /v1 paths, protobuf and the default service name', () => {
  expect(telemetryOptionsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toEqual({
    tracesUrl: 'http://collector:4318/v1/traces',
    metricsUrl: 'http://collector:4318/v1/metrics',
    protocol: 'http/protobuf',
    metricsProtocol: 'http/protobuf',
    serviceName: 'durable-agent',
    content: false,
  });
});

test('a traces endpoint is used as given; metrics only with a base or metrics endpoint', () => {
  const options = telemetryOptionsFromEnv({
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/otlp/v1/traces',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'agents-prod',
    DURABLE_AGENT_OTEL_CONTENT: '1',
  });
  expect(options).toEqual({
    tracesUrl: 'https://traces.example/otlp/v1/traces',
    protocol: 'http/json',
    metricsProtocol: 'http/json',
    serviceName: 'agents-prod',
    content: true,
  });
  expect(
    telemetryOptionsFromEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318',
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://m:4318/v1/metrics',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_METRIC_EXPORT_INTERVAL: '5000',
    }),
  ).toMatchObject({
    metricsUrl: 'http://m:4318/v1/metrics',
    protocol: 'http/json',
    metricsProtocol: 'http/protobuf',
    metricExportIntervalMs: 5000,
  });
});

test('OTEL_EXPORTER_OTLP_METRICS_PROTOCOL sets the metrics encoding alone, over the general variable', () => {
  expect(
    telemetryOptionsFromEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/protobuf',
    }),
  ).toMatchObject({ protocol: 'http/json', metricsProtocol: 'http/protobuf' });
  expect(() =>
    telemetryOptionsFromEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318',
      OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'grpc',
    }),
  ).toThrow(/OTEL_EXPORTER_OTLP_METRICS_PROTOCOL must be one of http\/protobuf, http\/json.*'grpc'/);
});

test('a bad value is refused with a message naming the variable and what it accepts', () => {
  expect(() =>
    telemetryOptionsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }),
  ).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL must be one of http\/protobuf, http\/json.*'grpc'/);
  expect(() => telemetryOptionsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4317' })).toThrow(
    /OTEL_EXPORTER_OTLP_ENDPOINT must be an http\(s\) URL/,
  );
  expect(() =>
    telemetryOptionsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_METRIC_EXPORT_INTERVAL: 'soon' }),
  ).toThrow(/OTEL_METRIC_EXPORT_INTERVAL/);
});
