import type { z } from 'zod';

/** Whether running a tool twice could change the world twice. Decides how a crash is handled. */
export type SideEffect = 'read_only' | 'mutating';

export interface ToolContext {
  /** Absolute path of the run's workspace; file tools are confined to it. */
  workspace: string;
  /** Aborted when the activity is cancelled (interrupt) or times out. */
  signal: AbortSignal;
  /** Report liveness to Temporal; long-running tools call it periodically. */
  heartbeat: (details?: unknown) => void;
  toolUseId: string;
  /** The run allows network access to commands (`network: true` in the run input); off by default. */
  network?: boolean;
  /** What the run adds to the worker's command policy (`commandPolicy` in the run input). */
  commandPolicy?: { deny?: string[] };
}

/** What a tool implementation returns: text for the model, optionally marked as an error. */
export type ToolOutput = string | { content: string; isError?: boolean };

export interface Tool<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  inputSchema: S;
  sideEffect: SideEffect;
  /** Offered to the model only when a run names it (the `done` tool); not part of "all tools". */
  optIn?: boolean;
  /**
   * A cheap read-only tool (well under a minute) that runs as a local activity: in the worker that
   * runs the workflow task, without a round trip through the server, recorded as a marker. It is
   * retried by that worker, cancelled directly on interrupt, and cannot heartbeat. Only for
   * `sideEffect: 'read_only'`; the registry refuses it otherwise. The built-in read_file, glob and
   * grep set it.
   */
  runsLocally?: boolean;
  execute(input: z.output<S>, ctx: ToolContext): Promise<ToolOutput>;
}

/** The normalised outcome of running a tool: always data, never an exception. */
export interface ToolResult {
  content: string;
  isError: boolean;
}
