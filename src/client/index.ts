/**
 * The Node client side of durable-agent: connecting to Temporal, starting runs and talking to them
 * (src/client/runs.ts), reading a run's transcript from history (src/client/transcript/).
 */
export * from './connect';
export * from './runs';
