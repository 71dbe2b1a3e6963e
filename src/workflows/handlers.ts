import { setDefaultSignalHandler, setHandler } from '@temporalio/workflow';
import { cutChars } from '../shared/bounds';
import {
  approveToolUpdate,
  denyToolUpdate,
  endSessionUpdate,
  eventsQuery,
  interruptSignal,
  sendMessageUpdate,
  stateQuery,
} from '../shared/definitions';
import type { AgentRunState } from '../shared/run';
import { describeUndecodable, isUndecodable, ACCEPTED_ENCODING_HINT } from '../shared/undecodable';
import type { Run } from './run/run';
import { describe } from './run/validation';

const MAX_INTERRUPT_REASON_CHARS = 1_000;

/**
 * Every signal, query and update of the run. Outside clients (the `temporal` CLI, any SDK, the Web
 * UI) may send any JSON value, so nothing here trusts its argument: updates reject bad input in
 * their validator with a message saying what is accepted, signals that make no sense are ignored
 * with a notice event, queries fall back to defaults. No input can fail a workflow task.
 */
export function registerHandlers(run: Run): void {
  const { state, approvals, emit } = run;
  const { events, inbox } = state;
  const { session, maxIterations, model } = run.settings;
  const maxBudgetUsd = run.input.maxBudgetUsd;

  setHandler(
    stateQuery,
    (): AgentRunState => ({
      status: state.status,
      iteration: state.iteration,
      maxIterations,
      usage: state.usage,
      costUsd: state.costUsd,
      ...(maxBudgetUsd !== undefined ? { maxBudgetUsd } : {}),
      ...(state.lastStopReason !== undefined ? { lastStopReason: state.lastStopReason } : {}),
      activeTools: [...state.activeTools.values()],
      model,
      pendingApprovals: approvals.list(),
      pendingMessages: inbox.count,
      session,
      subagents: run.tree?.summaries() ?? [],
      ...run.checkpoints.stateFields(),
    }),
    { description: 'The run now: status, iteration, usage, cost, running tools, pending approvals. No argument.' },
  );

  setHandler(eventsQuery, (arg?: unknown) => events.page(decodable(arg)), {
    description:
      'Progress events after a cursor: {"after"?: number} (default 0, from the start). Returns {events, cursor, ' +
      'truncated}; pass `cursor` back as `after`. Pages are bounded in count and bytes.',
  });

  setHandler(
    interruptSignal,
    (arg?: unknown) => {
      if (isUndecodable(arg)) {
        emit({ kind: 'notice', message: `interrupt ignored: its argument is ${describeUndecodable(arg)}` });
        return;
      }
      const reason = reasonOf(arg);
      if (reason === undefined) {
        emit({
          kind: 'notice',
          message: `interrupt ignored: expected nothing, null or {"reason"?: string}, got ${describe(arg)}`,
        });
        return;
      }
      if (state.interrupt || state.finalStatus) return;
      state.interrupt = reason ? { reason } : {};
      emit({ kind: 'notice', message: `interrupt requested${reason ? `: ${reason}` : ''}` });
      // Stops the loop: cancels the in-flight model and tool calls.
      run.scope.cancel();
    },
    { description: 'Stops the run and returns what it has: {"reason"?: string}, or no argument.' },
  );

  setDefaultSignalHandler((name, ...args: unknown[]) => {
    const undecodable = args.find(isUndecodable);
    emit({
      kind: 'notice',
      message:
        `ignored unknown signal '${cutChars(String(name), 100)}'` +
        (undecodable ? `; its argument is ${describeUndecodable(undecodable)}` : ''),
    });
  });

  setHandler(
    sendMessageUpdate,
    (arg: unknown) => {
      const message = inbox.accept(arg);
      emit({ kind: 'user_message', message });
      // Status changed outside the loop: written where operators look.
      run.board.showDetails();
      return { pendingMessages: inbox.count, iteration: state.iteration };
    },
    {
      validator: (arg: unknown) => inbox.validate(decodable(arg), state.finalStatus),
      description:
        'Adds a user message {"message": string}; the run takes it at its next iteration boundary (a waiting ' +
        'session at once). Returns {pendingMessages, iteration}.',
    },
  );

  setHandler(approveToolUpdate, (arg: unknown) => approvals.decide(arg, true), {
    validator: (arg: unknown) => approvals.validate(decodable(arg)),
    description: 'Lets a tool call that waits for approval run: {"toolUseId": string}.',
  });
  setHandler(denyToolUpdate, (arg: unknown) => approvals.decide(arg, false), {
    validator: (arg: unknown) => approvals.validate(decodable(arg)),
    description: 'Refuses a tool call that waits for approval: {"toolUseId": string, "reason"?: string}.',
  });

  setHandler(
    endSessionUpdate,
    () => {
      state.endRequested = true;
      return { status: 'completed' as const };
    },
    {
      validator: (arg: unknown) => {
        decodable(arg);
        if (
          arg !== undefined &&
          arg !== null &&
          (typeof arg !== 'object' || Array.isArray(arg) || Object.keys(arg).length)
        ) {
          throw new Error(`expected {} or no argument, got ${describe(arg)}`);
        }
        if (state.finalStatus) throw new Error(`the run has already ended ('${state.finalStatus}')`);
        if (!session) throw new Error('this run is not a session; use interrupt to stop it');
        if (!state.awaitingInput || inbox.count > 0) {
          throw new Error('the session is working on a message; end it once it waits for input, or interrupt it');
        }
      },
      description: 'Ends a session that waits for input; the run completes with its last answer. No argument ({}).',
    },
  );
}

/**
 * The argument, unless no converter could decode it: then an error saying so, which rejects an
 * update in its validator and fails a query (neither leaves a trace in history).
 */
function decodable(arg: unknown): unknown {
  if (isUndecodable(arg)) throw new Error(`the argument is ${describeUndecodable(arg)}; ${ACCEPTED_ENCODING_HINT}`);
  return arg;
}

/**
 * The reason of an interrupt: '' for none, undefined when the argument makes no sense. Stopping
 * is always safe, so anything that reads as a request to stop is one: nothing, null, an object
 * (its `reason` taken when it is a string) or a bare string as the reason.
 */
function reasonOf(arg: unknown): string | undefined {
  if (arg === undefined || arg === null) return '';
  if (typeof arg === 'string') return cutChars(arg, MAX_INTERRUPT_REASON_CHARS);
  if (typeof arg !== 'object' || Array.isArray(arg)) return undefined;
  const reason = (arg as { reason?: unknown }).reason;
  return typeof reason === 'string' ? cutChars(reason, MAX_INTERRUPT_REASON_CHARS) : '';
}
