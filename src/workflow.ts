/**
 * `durable-agent/workflow`: what a user's workflow code imports. Safe in Temporal's workflow sandbox
 * (no Node built-ins): the agent's workflow, to re-export from the module a worker bundles
 * (`export { agentWorkflow } from 'durable-agent/workflow'`) or start as a child workflow
 * (`executeChild(agentWorkflow, { args: [input] })`), and every signal, query and update definition.
 */
export { agentWorkflow } from './workflows';
export {
  approveToolUpdate,
  denyToolUpdate,
  endSessionUpdate,
  eventsQuery,
  interruptSignal,
  sendMessageUpdate,
  stateQuery,
} from './shared/definitions';
export type {
  ApprovalInput,
  ApprovalResult,
  EndSessionInput,
  EndSessionResult,
  InterruptInput,
  SendMessageInput,
  SendMessageResult,
} from './shared/definitions';
export { WORKFLOW_TYPE } from './shared/constants';
export type {
  AgentRunInput,
  AgentRunResult,
  AgentRunState,
  EventsPage,
  EventsQueryInput,
  ExitReason,
  RunEvent,
  RunStatus,
} from './shared/run';
