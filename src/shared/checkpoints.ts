/**
 * Workspace checkpoint references as a run's history carries them (docs/checkpoints.md). Shared by the worker, which
 * records checkpoints, the workflow, which keeps the per-turn winners, and the CLI (fork, rewind, diff, gc),
 * which reads them from history. Never file contents: an id and a small summary.
 */

export interface CheckpointRef {
  /** 0 = the workspace as the run found it; N = after iteration N's tools. */
  turn: number;
  /** Manifest id (sha256 hex) in the store; '' when pending. */
  id: string;
  /** Entries changed vs the previous checkpoint of this run. */
  filesChanged: number;
  /** Bytes uploaded (new content). */
  bytes: number;
  /** Worker wall clock when recording began (the latest-started ref of a turn wins). */
  startedAtMs: number;
  /** Entries left out (limits), listed in the manifest. */
  omitted?: number;
  /** Store unavailable: not recorded yet, will be retried. */
  pending?: true;
}
