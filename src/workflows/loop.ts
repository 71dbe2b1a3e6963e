import { LoopExit, type Next } from './run/loop-exit';
import type { Run } from './run/run';
import { BOUNDARY } from './steps/boundary';
import { waitForInput } from './steps/finish';
import { startRun } from './steps/start';

/**
 * The agent loop (docs/architecture.md): model call → tool calls → tool results → model call …
 * Each iteration walks the boundary's steps in order (steps/boundary.ts): a step that is due runs, and
 * says whether the run ends, the walk starts `again` from the first step, or it goes on to the next.
 */
export async function agentLoop(run: Run): Promise<LoopExit> {
  const { state } = run;
  const refused = await startRun(run);
  if (refused) return refused;
  // A session that handed over while waiting for input goes on waiting, until the same deadline.
  if (state.waitingUntil !== undefined) {
    const exit = await waitForInput(run, state.lastAssistantText, state.waitingUntil);
    if (exit) return exit;
  }
  for (;;) {
    let next: Next = 'go_on';
    for (const step of BOUNDARY) {
      if (!step.due(run)) continue;
      next = await step.run(run);
      if (next !== 'go_on') break;
    }
    if (next instanceof LoopExit) return next;
  }
}
