import { CancellationScope, allHandlersFinished, condition } from '@temporalio/workflow';

/**
 * SDK workaround (src/workflows/sdk/). Upstream: sdk-core sorts an activation's signals and updates
 * before its other jobs (temporalio/sdk-core pull request 639, "Order updates with signals"; issue 640,
 * "Add flag to disable signal/update reordering", asks for the history's order instead), and the
 * TypeScript SDK offers no switch for it. Delete this module when an activation keeps history's order
 * of updates and other jobs (or the SDK never splits a workflow task's jobs over two activations live):
 * test/workflow/input-order.test.ts records both orders live and replays each in both, and fails the
 * day the SDK alone gives one order.
 *
 * Input from outside the run (an update or a signal) is handled after everything else its activation
 * brought (an activity's result, a timer) has run as far as it can, never before it.
 *
 * Why: the SDK's core rebuilds a run from history one workflow task per activation, updates and
 * signals sorted first; live it can split a workflow task over two. A query that reaches a worker
 * without the run in its cache makes it fetch the run's history; when an activity completed meanwhile
 * (its workflow task scheduled, not started) the worker applies that result in an activation of its
 * own and the run issues the commands it leads to; the workflow task then brings only the update that
 * came with it, recorded after those commands. Rebuilt from that history, the run got the update and
 * the result in one activation, update first, and failed every workflow task from then on with
 * `[TMPRL1100] Nondeterminism error: Update machine does not handle this event` (docs/contributing.md,
 * "Input from outside, last"). Taking outside input last, live and on replay, makes both deliveries
 * issue the same commands in the same order.
 *
 * How: an interceptor of the SDK's activation (its internals interceptors, added for this run only)
 * runs the activation's other jobs, then takes its updates and signals one at a time, each once the
 * run is quiet: the promises set going have settled and no other blocked `condition` can go on. A
 * run about to hand over or close waits for them (`inputSettled`). It relies on two parts of the
 * SDK's per-run activator that its public API does not expose (its internals interceptors and its
 * blocked conditions): `takeOutsideInputLast` refuses to start a run on an SDK where they are not as
 * expected, since without them the run's commands would come in another order.
 */
export function takeOutsideInputLast(): void {
  const { interceptors, blockedConditions: blocked } = activator() ?? {};
  const internals = interceptors?.internals;
  if (!Array.isArray(internals) || !(blocked instanceof Map)) {
    throw new Error(
      'this Temporal SDK does not expose the activation interceptors and blocked conditions durable-agent ' +
        'orders outside input with (docs/contributing.md, "Input from outside, last"): use @temporalio/workflow 1.24',
    );
  }
  const held: HeldInput = { count: 0 };
  /** This run's quiet predicates: each ignores the others when it looks at what else could go on. */
  const quiets = new WeakSet<() => boolean>();
  const interceptor: InputOrderInterceptor = {
    [HELD]: held,
    activate(input, next) {
      // The interceptor is added by the workflow function, which the run's first activation starts:
      // from the second activation on, every one passes here.
      const jobs = input.activation.jobs ?? [];
      // Most activations hold no input from outside: they pass as they are, with nothing allocated.
      if (!jobs.some(isOutsideInput)) {
        next(input);
        return;
      }
      const outside: Job[] = [];
      const others: Job[] = [];
      for (const job of jobs) (isOutsideInput(job) ? outside : others).push(job);
      if (!others.length) {
        next(input);
        return;
      }
      next(withJobs(input, others));
      held.count += outside.length;
      // One at a time, each at a quiet point: a signal handler's own commands (issued a few promises
      // later) come before the next input, as when that input comes in an activation of its own.
      const takeInTurn = ([job, ...later]: Job[]): void => {
        if (!job) return;
        const quiet = whenQuiet(blocked, quiets);
        // Not cancellable: the input is handled in this activation even if the run is being cancelled.
        void CancellationScope.nonCancellable(() => condition(quiet.predicate)).then(() => {
          held.count -= 1;
          next(withJobs(input, [job]));
          takeInTurn(later);
        });
        quiet.arm();
      };
      takeInTurn(outside);
    },
    concludeActivation(input, next) {
      // Cannot happen while every blocked condition's predicate is pure; if one is not, fail the
      // workflow task (it is retried) rather than leave an update unanswered or a signal unread.
      if (held.count > 0) {
        throw new Error(`${held.count} update(s) or signal(s) held for the run's quiet point were never handled`);
      }
      return next(input);
    },
  };
  internals.push(interceptor);
}

/**
 * True while this activation holds input from outside back (until the run is quiet). A run that is
 * about to hand over or close waits until it is false, so a message that came with the result that
 * ended the execution is still carried to the next one, or refused as too late, never lost.
 */
export function outsideInputHeld(): boolean {
  const internals = activator()?.interceptors?.internals;
  if (!Array.isArray(internals)) return false;
  return internals.some((i) => ((i as Partial<InputOrderInterceptor>)[HELD]?.count ?? 0) > 0);
}

/** Every handler has finished and no input is held back: what a run waits for before it hands over or closes. */
export function inputSettled(): boolean {
  return allHandlersFinished() && !outsideInputHeld();
}

/** The SDK's per-run activator of the run whose code is running. */
function activator(): Activator | undefined {
  return (globalThis as { __TEMPORAL_ACTIVATOR__?: Activator }).__TEMPORAL_ACTIVATOR__;
}

/** Marks this module's interceptor among the run's internals interceptors, and holds its count. */
const HELD = Symbol('durable-agent input held');

interface HeldInput {
  count: number;
}

interface InputOrderInterceptor {
  [HELD]: HeldInput;
  activate(input: ActivateInput, next: (input: ActivateInput) => void): void;
  concludeActivation(input: unknown, next: (input: unknown) => unknown): unknown;
}

/** Signals and updates: the jobs that carry input from outside the run. */
function isOutsideInput(job: Job): boolean {
  return job.variant === 'doUpdate' || job.variant === 'signalWorkflow';
}

/** The activation with other jobs, of the same class (the SDK reads its fields by their class). */
function withJobs(input: ActivateInput, jobs: Job[]): ActivateInput {
  const activation = Object.assign(
    Object.create(Object.getPrototypeOf(input.activation) as object) as object,
    input.activation,
    {
      jobs,
    },
  );
  return { ...input, activation };
}

/**
 * A predicate for `condition` that holds once the run is quiet, evaluated where the SDK evaluates
 * every blocked condition: after the promises of the last activation's jobs have settled, in passes
 * until none can go on. Put first among the blocked conditions, it sees each pass before the others:
 * it waits while another condition holds (it goes on in this pass), and in the pass after one went
 * on (its continuation has not run yet). Everything a resolved condition set going runs before the
 * SDK's next pass, so the first pass of a later evaluation where nothing holds is the quiet point:
 * then only this condition goes on, and the input it releases runs with nothing else pending.
 */
function whenQuiet(
  blocked: Map<number, BlockedCondition>,
  quiets: WeakSet<() => boolean>,
): { predicate: () => boolean; arm(): void } {
  let armed = false;
  /** Counts the SDK's evaluations of blocked conditions: a microtask queued in one runs once it is over. */
  let evaluation = 0;
  let marked = false;
  let last = { evaluation: -1, others: new Set<BlockedCondition>() };
  const predicate = (): boolean => {
    if (!armed) return false;
    if (!marked) {
      marked = true;
      void Promise.resolve().then(() => {
        marked = false;
        evaluation++;
      });
    }
    const others = new Set([...blocked.values()].filter((c) => !quiets.has(c.fn)));
    const wentOn = last.evaluation === evaluation && [...last.others].some((c) => !others.has(c));
    last = { evaluation, others };
    return !wentOn && ![...others].some((c) => c.fn());
  };
  quiets.add(predicate);
  return {
    predicate,
    /** Once `condition` has registered the predicate (evaluating it once, false): moves it ahead of the others. */
    arm() {
      armed = true;
      for (const [seq, entry] of [...blocked]) {
        if (quiets.has(entry.fn)) continue;
        blocked.delete(seq);
        blocked.set(seq, entry);
      }
    },
  };
}

/** What this module reads of the SDK's per-run activator. */
interface Activator {
  interceptors?: { internals?: unknown };
  blockedConditions?: unknown;
}

/** An entry of the activator's blocked conditions. */
interface BlockedCondition {
  fn: () => boolean;
}

/** A job of an activation, as the SDK's activation class exposes it. */
interface Job {
  variant?: string;
}

/** The argument of an internals interceptor's `activate`. */
interface ActivateInput {
  activation: { jobs?: Job[] | null };
  batchIndex: number;
}
