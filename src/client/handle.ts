import type { WorkflowHandle } from '@temporalio/client';
import type { agentWorkflow } from '../workflows';

/** A Temporal handle on one agent run (its workflow), typed with the run's input and result. */
export type AgentHandle = WorkflowHandle<typeof agentWorkflow>;
