/**
 * Workspace checkpoints (worker side): content-addressed records of a run's files after a turn, a
 * store to keep them in, and restores that never write outside the workspace. The worker's side
 * (`WorkerCheckpoints`) records after a run's mutating calls, checks and restores on failover, and
 * restores at run start (docs/checkpoints.md).
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
export { CheckpointMissingError, type CheckpointStore } from './store';
export { DEFAULT_CHECKPOINT_LIMITS, recordCheckpoint, type CheckpointLimits, type RecordedCheckpoint } from './record';
export { loadManifest, restoreCheckpoint, type RestoredCheckpoint } from './restore';
export { DirectoryObjects, DirectoryStore, VerifiedStore, type ObjectStore } from './objects';
export { S3Objects, type S3ObjectsOptions } from './s3-store';
export { EncryptedStore } from './encrypted-store';
export {
  CHECKPOINTS_ENV,
  CheckpointsSettingError,
  defaultCheckpointsDirectory,
  parseCheckpointsSetting,
  storeFromEnv,
  type CheckpointsSetting,
} from './store-from-env';
export { changedPaths, countChanges } from './record';
export {
  checkpointIgnore,
  checkpointIgnoreProblem,
  DEFAULT_CHECKPOINT_IGNORE,
  MAX_CHECKPOINT_IGNORE_PATTERNS,
} from './ignore';
export {
  DIVERGED_PATHS_SHOWN,
  RestoreRefused,
  WorkerCheckpoints,
  type FirstCallCheck,
  type WorkerCheckpointsOptions,
} from './worker-checkpoints';
