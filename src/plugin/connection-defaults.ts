import { connectionOptions, temporalConfig, type TemporalConfig } from '../client/config';

/** The connection the CLI would use: profiles file and `TEMPORAL_*` environment (read on each call). */
export function environmentConnection(): TemporalConfig {
  return temporalConfig();
}

interface ConnectionLike {
  address?: string | undefined;
  tls?: object | boolean | null | undefined;
  apiKey?: unknown;
  metadata?: object | undefined;
}

/**
 * `options` with the environment's address, TLS, API key and gRPC metadata for each of them it
 * leaves out (`undefined`); what it sets, including `tls: false`, stays as it is.
 */
export function withEnvironmentDefaults<T extends ConnectionLike>(options: T): T {
  const env = connectionOptions(environmentConnection());
  return {
    ...options,
    address: options.address ?? env.address,
    ...(options.tls === undefined && env.tls !== undefined ? { tls: env.tls } : {}),
    ...(options.apiKey === undefined && env.apiKey !== undefined ? { apiKey: env.apiKey } : {}),
    ...(options.metadata === undefined && env.metadata !== undefined ? { metadata: env.metadata } : {}),
  };
}
