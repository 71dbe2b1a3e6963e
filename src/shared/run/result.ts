import type { StopReason, Usage } from '../messages';
import type { SubagentApprovalOrigin, SubagentSummary } from '../subagents';

export const TERMINAL_STATUSES = [
  'completed',
  'interrupted',
  'max_iterations',
  'max_budget',
  'refused',
  'failed',
  'cancelled',
] as const;
export type ExitReason = (typeof TERMINAL_STATUSES)[number];
/** `awaiting_approval`: a tool call waits for an operator; `awaiting_input`: a session waits for a message. */
export type RunStatus = 'running' | 'awaiting_approval' | 'awaiting_input' | ExitReason;

export interface PendingApproval {
  toolUseId: string;
  name: string;
  input: unknown;
  /** Epoch ms after which the call is denied automatically. */
  deadline: number;
  /** Set when the call waits in a subagent: `approveTool`/`denyTool` on this run decide it all the same. */
  subagent?: SubagentApprovalOrigin;
}

export interface AgentRunState {
  status: RunStatus;
  iteration: number;
  maxIterations: number;
  usage: Usage;
  /** `null` when the model's price is unknown: never reported as 0. */
  costUsd: number | null;
  maxBudgetUsd?: number;
  lastStopReason?: StopReason | null;
  activeTools: string[];
  model: string;
  pendingApprovals: PendingApproval[];
  /** User messages accepted by `send` and not yet given to the model. */
  pendingMessages: number;
  session: boolean;
  /** Subagents running now (`task` calls); `usage` and `costUsd` count them and everything below them. */
  subagents?: SubagentSummary[];
  /** The run's newest workspace checkpoint (docs/checkpoints.md); absent when none was taken. */
  lastCheckpoint?: { turn: number; id: string; filesChanged: number; bytes: number; pending?: true };
  /** The worker found the workspace different from the run's last checkpoint and kept it (docs/checkpoints.md#failover). */
  workspaceDiverged?: { paths: string[]; count: number };
}

export interface AgentRunResult {
  exitReason: ExitReason;
  finalText: string;
  iterations: number;
  usage: Usage;
  costUsd: number | null;
  model: string;
  /** Present when `exitReason` is `failed` or `interrupted`: why. */
  error?: { type: string; message: string };
  /** Runs with `outputSchema`: the final answer parsed, present when `finalText` is JSON valid against the schema. */
  output?: unknown;
}
