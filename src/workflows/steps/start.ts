import type { FirstModelCallOutput } from '../../shared/activity-io';
import { cutChars } from '../../shared/bounds';
import { ErrorTypes } from '../../shared/constants';
import { prepareInput, prepareRun, usePrepared, type Prepared } from '../calls/prepare-run';
import { LoopExit } from '../run/loop-exit';
import type { Run } from '../run/run';
import { offerTask } from '../subagents';
import { screenPrompt } from './intake';

/**
 * Run start: the system prompt and hooks (assembled once per run, carried after), the `task` tool's
 * agents, then the prompt's UserPromptSubmit hooks (first execution only). An exit: the run cannot start.
 *
 * A new run without subagents starts with its first model call (`firstModelCall`, 0.3.0): nothing
 * happens here but `run.startWith`, and the first model call (steps/model-step.ts) does the rest when the loop calls the
 * model. The worker prepares the run and answers in one activity, unless the workflow must act in
 * between (UserPromptSubmit hooks, MCP servers); a run that must do something else before its first
 * call (a boundary step marked `needsStart` is due: take a message, hand over, sum up) starts the
 * other way first ({@link startNow}, the boundary's `start` step: steps/boundary.ts).
 */
export async function startRun(run: Run): Promise<LoopExit | undefined> {
  const { state } = run;
  const unchecked = run.answers && !state.resumed ? await run.answers.checkSchema() : undefined;
  if (unchecked) return unchecked;
  if (!state.context && !state.resumed && !run.tree) {
    run.startWith = prepareInput(run);
    return undefined;
  }
  return started(run, await prepareRun(run));
}

/** A run whose start waits for its first model call, about to do something else first: it starts now. */
export async function startNow(run: Run): Promise<LoopExit | undefined> {
  if (!run.startWith) return undefined;
  run.startWith = undefined;
  return started(run, await prepareRun(run));
}

/** The rest of run start, once the first model call's activity prepared it (steps/model-step.ts). */
export function startedBy(run: Run, outcome: FirstModelCallOutput): Promise<LoopExit | undefined> {
  return started(run, preparedBy(run, outcome));
}

function preparedBy(run: Run, outcome: FirstModelCallOutput): Prepared {
  if (outcome.refused !== undefined) return { refused: cutChars(outcome.refused, 2000) };
  if (outcome.prepared === undefined) return { refused: 'the worker answered run start without its result' };
  return usePrepared(run, outcome.prepared);
}

/** The rest of run start, once the worker prepared it. */
async function started(run: Run, prepared: Prepared): Promise<LoopExit | undefined> {
  const { state, modelCalls, hooks } = run;
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
    type: ErrorTypes.PromptBlocked,
    message: `a UserPromptSubmit hook blocked the prompt: ${blocked}`,
  });
}
