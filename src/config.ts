import { DEFAULT_NAMESPACE, DEFAULT_TASK_QUEUE, DEFAULT_TEMPORAL_ADDRESS } from './shared';

/** Connection settings from the environment (DESIGN.md §3), read once at the edges. */
export interface TemporalConfig {
  address: string;
  namespace: string;
  taskQueue: string;
}

export function temporalConfig(env: NodeJS.ProcessEnv = process.env): TemporalConfig {
  return {
    address: env.TEMPORAL_ADDRESS || DEFAULT_TEMPORAL_ADDRESS,
    namespace: env.TEMPORAL_NAMESPACE || DEFAULT_NAMESPACE,
    taskQueue: env.TEMPORAL_TASK_QUEUE || DEFAULT_TASK_QUEUE,
  };
}
