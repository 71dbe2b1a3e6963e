import type { ContentBlock, Usage } from '../shared';

/**
 * A run as the inspector's page shows it: the conversation by turns, with each call's timing from
 * history (the JSON `/api/runs/<id>` answers). Built from the run's event history alone, so it
 * needs no worker and costs no billable action.
 */

/** When an activity ran, from its history events (epoch ms). */
export interface CallTiming {
  /** The execution (continue-as-new makes several) and its event, for a link to the Web UI. */
  runId: string;
  eventId: string;
  scheduledAt: number;
  startedAt?: number;
  endedAt?: number;
  /** The attempt that ended it: more than 1 when it was retried. */
  attempt: number;
  /** Why the previous attempt failed, when it was retried. */
  lastFailure?: string;
  /** Why it finally failed (or timed out, or was cancelled). */
  failure?: string;
}

/** A checkpoint ref as the tool activities return it (docs/checkpoints.md): the turn's workspace after its tools. */
export interface TurnCheckpoint {
  turn: number;
  id: string;
  filesChanged: number;
  bytes: number;
}

export interface ToolCallView {
  id: string;
  name: string;
  input: unknown;
  result?: { content: string; isError: boolean };
  /** The workspace file a long output was saved to, when the result names one. */
  spill?: string;
  timing?: CallTiming;
  /** A `task` call: the subagent it started. */
  subagent?: { workflowId: string; agent?: string; description?: string };
}

export type TurnBlock =
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'tool'; call: ToolCallView }
  | { type: 'other'; kind: string };

export interface TurnView {
  iteration: number;
  model: string;
  stopReason: string | null;
  usage: Usage;
  /** null: the model has no known price. */
  costUsd: number | null;
  timing: CallTiming;
  /** From the model call's start to the end of the turn's last tool call. */
  durationMs: number | null;
  blocks: TurnBlock[];
  /** Messages an operator sent that the run took before this turn. */
  userMessages: string[];
  checkpoint?: TurnCheckpoint;
}

export interface RunErrorView {
  at: number;
  message: string;
  timing: CallTiming;
}

export interface RunView {
  workflowId: string;
  /** The latest execution. */
  runId: string;
  executionStatus: string;
  /** Our status, reconciled with Temporal's. */
  status: string;
  open: boolean;
  model: string | null;
  startTime: string;
  closeTime: string | null;
  parentWorkflowId: string | null;
  forkedFrom: { workflowId: string; runId?: string; turn?: number } | null;
  prompt: string;
  system: string | null;
  contextSources: unknown[];
  turns: TurnView[];
  /** Model calls and tool calls that failed for good (retried ones show on their turn). */
  errors: RunErrorView[];
  closingSummary: string | null;
  compactions: number;
  result: {
    exitReason?: string;
    finalText?: string;
    output?: unknown;
    error?: { type?: string; message?: string };
    iterations?: number;
    costUsd?: number | null;
    usage?: Usage;
  } | null;
  /** Why the run ended without a result (failed, terminated), when history says. */
  reason: string | null;
  /** The run's page in the Temporal Web UI; a turn's event link adds `/<runId>/history/events/<eventId>`. */
  webUi: string;
  /** Each tool call's checkpoint refs: per-turn diffs (the run recorded checkpoints). */
  checkpoints: TurnCheckpoint[];
}

export type { ContentBlock };
