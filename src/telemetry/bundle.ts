import { TELEMETRY_WORKFLOW_MODULE } from './workflow-module';

/**
 * Each prebuilt workflow bundle, plus its twin with the tracing interceptors (`-otel` before `.js`),
 * which workers load when telemetry is on: with it off, no tracing code is in the sandbox at all.
 */
export function withTelemetryVariants<O extends object>(
  bundles: readonly (readonly [string, O])[],
): [string, O & { workflowInterceptorModules?: string[] }][] {
  return bundles.flatMap(([file, options]) => [
    [file, options] as [string, O],
    [file.replace(/\.js$/, '-otel.js'), { ...options, workflowInterceptorModules: [TELEMETRY_WORKFLOW_MODULE] }],
  ]);
}
