/**
 * Workspace checkpoints (worker side): content-addressed records of a run's files after a turn, a
 * store to keep them in, and restores that never write outside the workspace. See
 * docs/checkpoints.md for what is recorded, what is left out and what a restore does.
 */
export {
  MANIFEST_VERSION,
  isCheckpointId,
  parseManifest,
  pathProblem,
  serializeManifest,
  type Manifest,
  type ManifestEntry,
  type OmittedEntry,
} from './manifest';
export { CheckpointMissingError, DirectoryStore, type CheckpointStore } from './store';
export { DEFAULT_CHECKPOINT_LIMITS, recordCheckpoint, type CheckpointLimits, type RecordedCheckpoint } from './record';
export { loadManifest, restoreCheckpoint, type RestoredCheckpoint } from './restore';
