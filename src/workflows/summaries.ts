/** Moved to src/shared/summaries.ts (the worker's heartbeats use it too); kept for importers. */
export * from '../shared/summaries';
