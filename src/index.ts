/**
 * `durable-agent`: the agent inside a Temporal application of your own (docs/library.md). Node side:
 * the plugin for workers and clients, tools, and a typed handle on runs. Workflow code imports
 * `durable-agent/workflow` instead.
 */
export { AgentPlugin, AGENT_WORKER_DEFAULTS } from './plugin/agent-plugin';
export type { AgentPluginOptions } from './plugin/options';
export type { AgentDeployment } from './worker/deployment';
export { AgentRun, type GetAgentRunOptions, type ResultOptions, type StartAgentRunOptions } from './plugin/agent-run';
export type { ForkRequest } from './client/checkpoints/fork-plan';
export type { ForkOrigin } from './shared/fork';
export type { CheckpointRef } from './shared/checkpoints';
export type { FollowEvent, FollowOptions, PartialEvent } from './plugin/follow-run';
export { RunRefusedError } from './plugin/run-errors';
export {
  OutputMismatchError,
  outputSchemaOf,
  typedOutput,
  type RunStartInput,
  type TypedRunResult,
} from './client/typed-output';
export { searchAttributeCommand } from './plugin/worker-companion';
export { defineTool } from './tools/define-tool';
export type { SideEffect, Tool, ToolContext, ToolOutput } from './tools/types';
export type { BuiltinToolOptions } from './tools';
export type { FunctionHook, FunctionHooks, CanExecuteTool, PermissionResult, HookContext } from './hooks';
export type { ModelProvider, ModelResolver } from './models/types';
export type { ModelResolverOptions } from './models';
export { RunEndedError, ConnectionFailedError, RUN_FAILED_TYPE, newRunId } from './client';
export { loadConnectionConfig, type TemporalConfig } from './client/config';
export { AesGcmCodec, parseCodecKeys } from './codec';
export { agentActivityType, AGENT_ACTIVITY_PREFIX } from './shared/activity-names';
export { WORKFLOW_TYPE } from './shared/constants';
export type {
  AgentRunInput,
  AgentRunResult,
  AgentRunState,
  EventsPage,
  ExitReason,
  PendingApproval,
  RunEvent,
  RunStatus,
} from './shared/run';
export type { ApprovalResult, EndSessionResult, SendMessageResult } from './shared/definitions';
export type { Message } from './shared/messages';
export type { agentWorkflow } from './workflows';
