import { executeChild, workflowInfo } from '@temporalio/workflow';
import type { AgentRunInput, AgentRunResult } from '../../src/shared';

/**
 * A stand-in for a run that starts subagents, until the `task` tool is on this branch: it starts
 * `agentWorkflow` children with the ids the task tool gives them (`<parent>.task-<n>`), one after
 * the other, so the CLI can be tested on a real tree on the real server.
 */
export { agentWorkflow } from '../../src/workflows';

export async function treeParent(children: Partial<AgentRunInput>[]): Promise<string[]> {
  const parent = workflowInfo().workflowId;
  const answers: string[] = [];
  for (let n = 1; n <= children.length; n++) {
    const result = await executeChild<(input: AgentRunInput) => Promise<AgentRunResult>>('agentWorkflow', {
      workflowId: `${parent}.task-${n}`,
      args: [{ prompt: `child ${n}`, model: 'scripted-test', ...children[n - 1] }],
    });
    answers.push(result.finalText);
  }
  return answers;
}
