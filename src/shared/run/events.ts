import type { StopReason, Usage } from '../messages';
import type { SubagentApprovalOrigin } from '../subagents';
import type { ExitReason } from './result';

/** Progress events kept by the workflow and served with a cursor by the `events` query. */
export type RunEvent =
  | { seq: number; kind: 'run_started'; model: string; maxIterations: number; prompt: string }
  | { seq: number; kind: 'model_call_started'; iteration: number }
  | {
      seq: number;
      kind: 'model_call_finished';
      iteration: number;
      stopReason: StopReason | null;
      usage: Usage;
      costUsd: number | null;
      text: string;
    }
  | { seq: number; kind: 'model_call_failed'; iteration: number; error: string }
  /** The call waited this long for its provider key's rate budget before it went out (docs/models.md, "Rate limits"). */
  | { seq: number; kind: 'rate_limited'; provider: string; waitMs: number }
  /** The model's thinking in one answer, then its text (in turn order: reasoning, text, then the tool calls). Cut to EVENT_TEXT_CHARS. */
  | { seq: number; kind: 'reasoning'; iteration: number; text: string; truncated?: boolean }
  | { seq: number; kind: 'text'; iteration: number; text: string; truncated?: boolean }
  | { seq: number; kind: 'tool_call_started'; toolUseId: string; name: string; input: unknown }
  /** `preview`: the tool's output, cut to EVENT_TOOL_OUTPUT_CHARS (`truncated` then); the transcript has it whole. */
  | {
      seq: number;
      kind: 'tool_call_finished';
      toolUseId: string;
      name: string;
      isError: boolean;
      preview: string;
      truncated?: boolean;
    }
  | { seq: number; kind: 'notice'; message: string }
  | { seq: number; kind: 'user_message'; message: string }
  | { seq: number; kind: 'approval_requested'; toolUseId: string; name: string; input: unknown; deadline: number }
  /** `subagent`: the call waited in that subagent (decided here, there, or timed out there). */
  | {
      seq: number;
      kind: 'approval_resolved';
      toolUseId: string;
      name: string;
      approved: boolean;
      reason?: string;
      subagent?: SubagentApprovalOrigin;
    }
  /** `truncated`: the text was cut to EVENT_ANSWER_CHARS; the whole answer is in the result. */
  | { seq: number; kind: 'answer'; text: string; truncated?: boolean }
  | { seq: number; kind: 'awaiting_input' }
  | {
      seq: number;
      kind: 'subagent_started';
      toolUseId: string;
      workflowId: string;
      agent?: string;
      description?: string;
      depth: number;
    }
  | {
      seq: number;
      kind: 'subagent_finished';
      toolUseId: string;
      workflowId: string;
      exitReason: ExitReason;
      usage: Usage;
      costUsd: number | null;
    }
  | { seq: number; kind: 'run_finished'; exitReason: ExitReason; finalText: string; truncated?: boolean }
  /** A turn's workspace checkpoint (docs/checkpoints.md); `id` is '' while the store could not take it (pending). */
  | { seq: number; kind: 'checkpoint'; turn: number; filesChanged: number; bytes: number; id: string; pending?: true }
  /** A worker found the run's workspace different from its last checkpoint, and kept it (docs/checkpoints.md#failover). */
  | { seq: number; kind: 'workspace_diverged'; paths: string[]; count: number };

type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;
export type RunEventInput = DistributiveOmit<RunEvent, 'seq'>;

export interface EventsQueryInput {
  /** Return events with `seq` greater than this (default 0: from the beginning). */
  after?: number;
}
export interface EventsPage {
  events: RunEvent[];
  /** The `seq` of the newest event returned (of the newest event if none): pass it back as `after`. */
  cursor: number;
  /** True when events older than the first returned one were dropped from the bounded log. */
  truncated: boolean;
}
