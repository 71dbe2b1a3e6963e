/**
 * The worker's telemetry as the environment configures it. Light on purpose: the OTel SDK and its
 * exporters (about half a second to load) are required only when telemetry is on.
 */
import { telemetryOptionsFromEnv } from './config';
import type { Telemetry } from './pipeline';

let fromEnv: { telemetry: Telemetry | undefined } | undefined;

/**
 * The process's telemetry as the environment configures it (made once, then shared), or
 * `undefined` when off. Throws a readable error for a bad `OTEL_*` value.
 */
export function telemetryFromEnv(env: NodeJS.ProcessEnv = process.env): Telemetry | undefined {
  if (!fromEnv) {
    const options = telemetryOptionsFromEnv(env);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const pipeline = options ? (require('./pipeline') as typeof import('./pipeline')) : undefined;
    fromEnv = { telemetry: options && pipeline ? pipeline.createTelemetry(options) : undefined };
  }
  return fromEnv.telemetry;
}

/** Sends what the environment-configured telemetry still buffers and stops it (a worker process's exit). */
export async function shutdownTelemetryFromEnv(): Promise<void> {
  await fromEnv?.telemetry?.shutdown().catch(() => undefined);
}
