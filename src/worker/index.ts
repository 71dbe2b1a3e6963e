/**
 * The Node worker side of durable-agent: the worker assembly (src/worker/agent-worker.ts), its
 * settings from the environment, its slots, its Worker Deployment Version and its workflow bundle.
 */
export * from './agent-worker';
