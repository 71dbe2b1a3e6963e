import type { RunStatus } from '../shared';
import { TERMINAL_STATUSES } from '../shared';

/** `list` shows this many runs unless `--limit` says otherwise. */
export const DEFAULT_LIST_LIMIT = 20;

/** The statuses of a run that has not ended. */
export const OPEN_STATUSES = ['running', 'awaiting_approval', 'awaiting_input'] as const satisfies readonly RunStatus[];

/** Ends only Temporal records: an operator's cancel or terminate, a run timeout, continue-as-new. */
export const TEMPORAL_ONLY_STATUSES = ['cancelled', 'terminated', 'timed_out', 'continued'] as const;

/**
 * The values `list --status` accepts: every value the workflow writes into `DurableAgentStatus`,
 * and the ends only Temporal records.
 */
export const RUN_STATUSES: readonly string[] = [
  ...new Set<string>([...OPEN_STATUSES, ...TERMINAL_STATUSES, ...TEMPORAL_ONLY_STATUSES]),
];
