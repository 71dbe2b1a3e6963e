import { ErrorTypes } from '../../shared/constants';
import { prepareRun } from '../calls/prepare-run';
import { LoopExit } from '../run/loop-exit';
import type { Run } from '../run/run';
import { offerTask } from '../subagents';
import { screenPrompt } from './intake';

/**
 * Run start: the system prompt and hooks (assembled once per run, carried after), the `task` tool's
 * agents, then the prompt's UserPromptSubmit hooks (first execution only). An exit: the run cannot start.
 */
export async function startRun(run: Run): Promise<LoopExit | undefined> {
  const { state, modelCalls, hooks } = run;
  if (run.answers && !state.resumed) await run.answers.checkSchema();
  const prepared = await prepareRun(run);
  if (prepared.refused !== undefined) {
    return new LoopExit('failed', '', { type: ErrorTypes.WorkspaceRefused, message: prepared.refused });
  }
  const workspace = state.context?.workspace;
  // From here on the run's tools and hooks use the workspace's recorded real path.
  if (workspace) run.useWorkspace(workspace);
  modelCalls.useSystem(state.context?.system);
  modelCalls.followWorkflow(prepared.workerQueue);
  hooks.enable(state.hookEvents);
  if (run.tree) {
    await offerTask(run.tree, {
      input: run.input,
      workspace: workspace ?? run.input.workspace,
      modelCalls,
      emit: run.emit,
    });
  }
  run.board.showDetails();
  // Without UserPromptSubmit hooks there is nothing to screen (and no promise to make: "The hot path").
  const blocked =
    state.resumed || !hooks.has('UserPromptSubmit') ? undefined : await screenPrompt(run, run.input.prompt);
  if (blocked === undefined) return undefined;
  return new LoopExit('failed', '', {
    type: 'DurableAgent.PromptBlocked',
    message: `a UserPromptSubmit hook blocked the prompt: ${blocked}`,
  });
}
