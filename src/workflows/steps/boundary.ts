import { LoopExit, type Next } from '../run/loop-exit';
import type { Run } from '../run/run';
import { compactionDue, keepConversationSmall } from './compaction';
import { endMessageAtLimit, messageBlocked } from './finish';
import { handOver, shouldContinueAsNew } from './hand-over';
import { takeMessages } from './intake';
import { closingSummary, modelStep } from './model-step';
import { startNow } from './start';
import { handleTurn } from './turn';
import { ErrorTypes } from '../../shared/constants';

/**
 * One step of the iteration boundary. `due` says, synchronously, whether it has anything to do now (a
 * step that is not due costs no promise); `run` does it and says what the loop does next.
 */
export interface BoundaryStep {
  readonly name: string;
  due(run: Run): boolean;
  run(run: Run): Promise<Next>;
  /**
   * The step does something before the next model call that needs the run started (steps/start.ts):
   * when it is due, a new run's start, waiting to go with that call, cannot wait.
   */
  readonly needsStart?: true;
}

/** A client's interrupt, or a hook's request to end the run. */
const stopRequested: BoundaryStep = {
  name: 'stop requested',
  due: (run) => run.stopRequested() !== undefined,
  run: async (run) => LoopExit.interrupted(run.stopRequested()!, run.state.lastAssistantText),
};

const budget: BoundaryStep = {
  name: 'budget',
  due: (run) => run.state.overBudget(run.input.maxBudgetUsd),
  run: async (run) => new LoopExit('max_budget', run.state.lastAssistantText),
};

/** A new run whose start waits for its first model call, with a step due before that call: it starts now. */
const start: BoundaryStep = {
  name: 'start',
  due: (run) => run.startWith !== undefined && BOUNDARY.some((step) => step.needsStart && step.due(run)),
  run: async (run) => (await startNow(run)) ?? 'go_on',
};

/** Messages sent meanwhile join the conversation (screened by UserPromptSubmit hooks when there are any). */
const intake: BoundaryStep = {
  name: 'intake',
  needsStart: true,
  due: (run) => run.state.inbox.count > 0,
  async run(run) {
    if ((await takeMessages(run)) !== 'blocked') return 'go_on';
    return (await messageBlocked(run)) ?? 'again';
  },
};

/** The conversation within its bounds; before the hand-over, since the conversation travels in its input. */
const compaction: BoundaryStep = {
  name: 'compaction',
  needsStart: true,
  due: compactionDue,
  async run(run) {
    if ((await keepConversationSmall(run)) !== 'does_not_fit') return 'go_on';
    const { model, contextWindow } = run.settings;
    return new LoopExit('failed', run.state.lastAssistantText, {
      type: ErrorTypes.ContextWindowExceeded,
      message: `the conversation does not fit the context window of ${model} (${contextWindow} tokens) even right after compaction`,
    });
  },
};

/** Continue-as-new: this execution ends here, the run goes on in the next. */
const handOverStep: BoundaryStep = {
  name: 'hand-over',
  needsStart: true,
  due: (run) => shouldContinueAsNew(run.input.continueAsNewAfter, run.calledModel),
  run: (run) => handOver(run),
};

/** The iteration limits: the run's (it ends with a closing summary), or in a session the message's. */
const limits: BoundaryStep = {
  name: 'limits',
  needsStart: true,
  due: (run) => limitReached(run) !== undefined,
  async run(run) {
    const limit = limitReached(run);
    if (limit === 'run') return new LoopExit('max_iterations', await closingSummary(run));
    return (await endMessageAtLimit(run, await closingSummary(run))) ?? 'again';
  },
};

function limitReached(run: Run): 'run' | 'message' | undefined {
  const { settings } = run;
  return run.state.limitReached({ ...settings, perMessage: settings.session });
}

/** The iteration's model call (a new run's first one carries its start); its answer waits for the turn. */
const modelCall: BoundaryStep = {
  name: 'model call',
  due: () => true,
  run: modelStep,
};

/** What the loop does with the model's turn: run its tools, finish, wait for the next message, … */
const turn: BoundaryStep = {
  name: 'turn',
  due: (run) => run.pendingTurn !== undefined,
  run(run) {
    const response = run.pendingTurn!;
    run.pendingTurn = undefined;
    return handleTurn(run, response);
  },
};

/**
 * The iteration boundary, in order (docs/contributing.md, "Add a boundary check"): requests to stop and
 * the budget, the run's start when something else must come before its first call, the messages sent
 * meanwhile, the conversation's size, continue-as-new, the iteration limits, then the model call and its
 * turn. A request to stop is looked at again after the messages: a UserPromptSubmit hook may make one.
 */
export const BOUNDARY: readonly BoundaryStep[] = [
  stopRequested,
  budget,
  start,
  intake,
  stopRequested,
  compaction,
  handOverStep,
  limits,
  modelCall,
  turn,
];
