import { CancellationScope, isCancellation } from '@temporalio/workflow';
import type { AgentRunInput, AgentRunResult } from '../shared/run';
import { registerHandlers } from './handlers';
import { agentLoop } from './loop';
import { takeOutsideInputLast } from './sdk/input-order';
import { LoopExit } from './run/loop-exit';
import { Run } from './run/run';
import { endCancelled, endWith } from './steps/ending';

/**
 * The durable agent loop (docs/architecture.md): model call → tool calls → tool results → model call …
 * Every model and tool call is an activity; the conversation lives in workflow state, rebuilt on
 * replay from the activity results that history already holds, and reaches the model activity as
 * a delta against the worker's cache, so history grows linearly (docs/architecture.md#history-stays-linear).
 * The run is one object (run/run.ts), the loop is loop.ts, its steps are steps/, and every activity
 * call is made in calls/.
 */
export async function agentWorkflow(rawInput: AgentRunInput): Promise<AgentRunResult> {
  takeOutsideInputLast();
  const run = Run.start(rawInput);
  const { state } = run;
  registerHandlers(run);
  run.emit(
    state.resumed
      ? { kind: 'notice', message: `continued as new: execution ${state.continuations + 1}` }
      : {
          kind: 'run_started',
          model: run.settings.model,
          maxIterations: run.settings.maxIterations,
          prompt: run.input.prompt,
        },
  );
  run.board.index();

  let exit: LoopExit;
  try {
    exit = await run.scope.run(() => agentLoop(run));
  } catch (err) {
    if (state.interrupt && (isCancellation(err) || run.scope.consideredCancelled)) {
      exit = LoopExit.interrupted(state.interrupt, state.lastAssistantText);
    } else if (CancellationScope.current().consideredCancelled) {
      return endCancelled(run, err);
    } else {
      throw err;
    }
  }
  return endWith(run, exit);
}
