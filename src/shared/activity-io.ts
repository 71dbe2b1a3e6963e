import type { AssembleContextInput, AssembledContext } from './context-io';
import type { HookPlan } from './hooks-io';
import type { ConversationDelta } from './conversation';
import type { Message, ModelResponse, ToolChoice, ToolSpec } from './messages';
import type { McpCallRef, McpServerConfig, McpServerListing } from './mcp';
import type { OutputSchema } from './output-schema';
import type { CheckpointRef } from './checkpoints';

/**
 * Input of the `callModel` activity. The conversation travels as a delta against the worker's
 * cache; tools travel by name and the worker resolves their schemas.
 */
export interface CallModelInput {
  model: string;
  /**
   * Sent with full conversation loads only, and `systemHash` always (the worker keeps it with the
   * conversation). Runs started by early 0.1.x code sent it with every call.
   */
  system?: string;
  systemHash?: string;
  /** `xml`: tools are described in the system prompt and called with `<tool_code>` blocks in text. */
  toolProtocol?: 'xml';
  conversation: ConversationDelta;
  /** Tools enabled for the run; undefined means every tool the worker offers by default. */
  toolNames?: string[];
  /** Opt-in tools offered on top (the `done` tool). */
  extraToolNames?: string[];
  toolChoice?: ToolChoice;
  maxTokens: number;
  /** The run's MCP tools (docs/mcp.md): sent with full loads and after a change; the worker keeps them by hash. */
  mcpTools?: ToolSpec[];
  mcpToolsHash?: string;
  /** The run's `outputSchema`: the provider's native structured output is asked for where it exists. */
  outputSchema?: OutputSchema;
  /** The run's place when its provider key's rate budget is short (src/admission/); absent: priority 3, the run's own share. */
  admission?: AdmissionTags;
}
/** A run's `priority` and `fairnessKey` (docs/models.md, "Rate limits") as its model calls carry them to the worker's admission. */
export interface AdmissionTags {
  priority?: number;
  fairnessKey?: string;
}
export interface CallModelOutput extends ModelResponse {
  /** The task queue of the worker that now holds the conversation: the run's next calls go there. */
  workerQueue?: string;
  /** Tools offered in this call that the worker runs as local activities (`runsLocally`); omitted when none. */
  localTools?: string[];
  /** Set when this worker's bash is not sandboxed (`off`) or cannot run (`unavailable`): shown in the run's details. */
  sandboxWarning?: string;
}

/**
 * Input of `firstModelCall`: a new run's start and its first model call in one activity (0.3.0).
 * The conversation is a full load without a system prompt: the worker assembles it from `prepare`.
 */
export interface FirstModelCallInput extends CallModelInput {
  prepare: PrepareRunInput;
}

/**
 * What `firstModelCall` did: the run start it prepared (or the workspace's refusal) and, when
 * nothing had to happen in between, the first model call's answer. Without `response` the workflow
 * acts on `prepared` (screens the prompt by the UserPromptSubmit hooks, takes the MCP tools) and
 * then calls the model.
 */
export interface FirstModelCallOutput {
  prepared?: PrepareRunOutput;
  /** The worker refused the run's workspace (its rules, its roots): the run fails with this message. */
  refused?: string;
  response?: CallModelOutput;
}

/** Input of `summarizeRun`: the closing summary at the iteration limit, and compaction. */
export interface SummarizeRunInput extends Omit<CallModelInput, 'toolChoice'> {
  /** The closing user instruction, appended only to this request and never to the run's history. */
  instruction: string;
}
export interface SummarizeRunOutput {
  /** Only in results recorded before bounded payloads; the text is `textOf(response.content)`. */
  text?: string;
  response: ModelResponse;
}

export interface RunToolInput {
  toolUseId: string;
  name: string;
  /** The arguments exactly as the model produced them; validated by the tool's zod schema in the activity. */
  input: unknown;
  workspace?: string;
  /** The run's conversation: the worker keeps the result so the next model call can take it by reference. */
  conversationId?: string;
  /**
   * An earlier scheduling of this call may have started on a worker that is gone (the workflow
   * fell back from that worker's queue): a mutating tool then reports an unknown outcome instead of running.
   */
  mayHaveStarted?: boolean;
  /** With `mayHaveStarted`: when the workflow first scheduled the call (epoch ms), so no earlier change is blamed on it. */
  firstScheduledAt?: number;
  /** The run allows commands network access (`network: true` in the run input). */
  network?: boolean;
  /** Commands the run denies on top of the worker's policy. */
  commandPolicy?: { deny?: string[] };
  /** A call to an MCP server's tool (`mcp__<server>__<tool>`): which server, as run start recorded it. */
  mcp?: McpCallRef;
  /** The run's iteration (docs/checkpoints.md): a mutating call's checkpoint is this turn's. */
  turn?: number;
  /** The run's last checkpoint: a worker that did not record it compares the workspace with it first (failover). */
  lastCheckpointId?: string;
  /** The run's `checkpointIgnore` patterns, when it has any. */
  checkpointIgnore?: string[];
}
export interface RunToolOutput {
  content: string;
  isError: boolean;
  /**
   * Local activities only: the task queue of the worker that ran it, which is the worker running the
   * workflow. The run moves its model calls there, so the conversation, the tool results and the
   * workflow share one worker's cache (docs/architecture.md#history-stays-linear).
   */
  workerQueue?: string;
  /** MCP calls: the server's tool list is no longer the one the run offers (list_changed, reconnect). */
  mcpToolsChanged?: boolean;
  /** A call that may have changed files: the workspace's checkpoint recorded after it (docs/checkpoints.md). */
  checkpoint?: CheckpointRef;
  /** An earlier turn's checkpoint that was pending (store down) and was recorded before this call ran. */
  landed?: CheckpointRef;
  /** Before this call, the worker found the workspace different from the run's last checkpoint and kept it. */
  workspaceDiverged?: { paths: string[]; count: number };
  /** Before this call, the worker found the workspace missing or empty and restored the last checkpoint. */
  workspaceRestored?: number;
}

/**
 * Input and result of `keepFinalMessages`, a local activity at a run's end: the messages no model
 * call sent (the last turn's tool results after `done`, an interrupt or the budget), recorded in
 * history through its result so a transcript has the whole conversation with no worker up.
 */
export interface FinalMessages {
  /** How many messages of the conversation came before them. */
  baseLength: number;
  messages: Message[];
}

/** Input of `prepareRun`, the one activity at a run's start. */
export interface PrepareRunInput {
  context: AssembleContextInput;
  /** The run's own MCP servers (input `mcpServers`); the worker adds its file's and the workspace's. */
  mcpServers?: Record<string, McpServerConfig>;
  /** Connect to MCP servers and list their tools (runs with MCP support). */
  mcp?: boolean;
  /** Fork: restore this checkpoint into the (empty) workspace before anything else (docs/checkpoints.md). */
  restoreFrom?: { checkpointId: string };
  /** The run's `checkpointIgnore` patterns, when it has any. */
  checkpointIgnore?: string[];
}
/** What run start prepared: the system prompt, and which hook events have hooks. */
export interface PrepareRunOutput {
  context: AssembledContext;
  hooks: HookPlan;
  /**
   * The workspace's real path, admitted by the worker's workspace rules: every later tool call and
   * hook of the run uses this path (absent in histories from before it was recorded).
   */
  workspace?: string;
  /** A local activity: the queue of the worker running the workflow, where the first model call goes. */
  workerQueue?: string;
  /** The run's MCP servers and their tools, when asked for (`mcp`), and notes for the run (bad files, clashes). */
  mcp?: { servers: McpServerListing[]; notes: string[] };
  /** Turn 0: the workspace as the run found it (or as `restoreFrom` made it), when the worker keeps checkpoints. */
  checkpoint?: CheckpointRef;
}
