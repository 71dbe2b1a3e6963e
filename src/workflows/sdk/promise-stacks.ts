/**
 * SDK workaround (src/workflows/sdk/). Upstream: temporalio/sdk-typescript issue 1587 ("Using async
 * functions degrades performance": the worker's promise hook captures a stack for every promise a
 * workflow creates). Delete this module when the SDK stops capturing a stack per promise unless the
 * stack trace query asks for it (or lets a bundle turn that off): then `workflowStackTraces: false`
 * alone gives the cost measured here, and test/workflow/promise-stacks.test.ts says whether it does.
 *
 * A preloaded module of the agent's own workflow bundles (src/workflow-bundle-options.ts,
 * `AGENT_WORKFLOW_MODULES`): evaluated once per workflow thread, before the SDK freezes the
 * thread's globals. It makes the workflow context format its own stack traces, which turns off the
 * SDK's per-promise stack collection for the runs of that thread.
 *
 * Why: the SDK's promise hook (always on) builds an `Error` with this context's constructor for
 * every promise workflow code creates, reads its `stack`, source-maps every frame and keeps the
 * result for the `__stack_trace` query (the Web UI's Stack Trace tab, `temporal workflow stack`).
 * For this loop that was about 8 ms of a 10-iteration run's 60 ms of workflow CPU
 * (docs/benchmarks.md, "Worker cost"). Node formats an error's stack with the `prepareStackTrace`
 * of the context whose `Error` built it; once this context has its own, the SDK's source-mapping
 * formatter is not called for it, and the hook keeps nothing (it stores a stack only when its
 * formatter ran). The hook's own capture is told apart by its first frame, which is outside the
 * bundle, and gets an empty stack.
 *
 * What changes for the runs of the thread: the Stack Trace tab and `temporal workflow stack` show no
 * stacks (a run's Current Details, its `state` query and events say what it is doing and waiting on);
 * an error thrown by workflow code keeps its stack, with the bundle's file positions instead of the
 * TypeScript sources' (function names are kept: the bundle is not minified). A worker started with
 * `workflowStackTraces: true` (`DURABLE_AGENT_WORKFLOW_STACK_TRACES=1`) bundles without this module
 * and keeps the SDK's stacks. Without the reused V8 context (`reuseV8Context: false`) the SDK
 * preloads nothing and this module is not evaluated: the SDK's stacks stay.
 */

type Frame = NodeJS.CallSite;

/** This bundle's file, as V8 names it in frames (the name the worker gave the bundle's script); null if unknown. */
function ownFile(): string | null {
  const holder: { stack?: unknown } = {};
  const previous = Error.prepareStackTrace;
  Error.prepareStackTrace = (_error, frames) => frames;
  try {
    Error.captureStackTrace(holder);
    const frames = holder.stack;
    if (!Array.isArray(frames) || typeof frames[0]?.getFileName !== 'function') return null;
    const file: unknown = (frames[0] as Frame).getFileName();
    return typeof file === 'string' ? file : null;
  } finally {
    Error.prepareStackTrace = previous;
  }
}

/**
 * Whether `frame`, the first of an error's stack, is outside workflow code: a file that is neither
 * this bundle nor the SDK's scripts run in the context (`evalmachine.<anonymous>`). Builtins (no file)
 * count as workflow code: an error thrown by `JSON.parse` called from a workflow keeps its stack.
 */
function builtOutside(frame: Frame | undefined, bundle: string): boolean {
  const file = frame?.getFileName();
  return typeof file === 'string' && file !== bundle && !file.startsWith('evalmachine.');
}

/**
 * Installs the formatter. Does nothing (and the SDK's stacks stay) where `Error` cannot take it: a
 * context already frozen, or an engine whose stack API differs.
 */
export function formatOwnStacks(): boolean {
  if (Object.isFrozen(Error) || !Object.isExtensible(Error)) return false;
  const bundle = ownFile();
  if (bundle === null) return false;
  Error.prepareStackTrace = (error: Error, frames: Frame[]): string => {
    // Built by code outside this bundle with this context's `Error`: the SDK's promise hook.
    if (builtOutside(frames[0], bundle)) return '';
    let text: string;
    try {
      text = String(error);
    } catch {
      text = 'Error';
    }
    for (const frame of frames) text += `\n    at ${String(frame)}`;
    return text;
  };
  return true;
}

/** The lookups the SDK's promise hook compiles, by source, and what this context answers instead. */
const HOOK_ACTIVATOR = 'return globalThis.__TEMPORAL_ACTIVATOR__';
const HOOK_ERROR = 'return globalThis.Error';

/**
 * Makes the SDK's promise hook cheap in this context. For every promise workflow code creates, and
 * again when it settles, the hook finds the run's activator by compiling a function with this
 * context's `Function`, reached as `promise.constructor.constructor(HOOK_ACTIVATOR)()`; at creation
 * it compiles `HOOK_ERROR` the same way and builds that `Error` to read its stack (V8 captures the
 * frames, and the formatter above returns '' for it): per promise, the largest cost left of the
 * hook in the agent's bundles (docs/benchmarks.md, "The SDK's promise hook, cheaper per promise").
 *
 * So this context's `Promise` gets an own `constructor`: the same `Function` for every source but
 * those two, for which it returns, without compiling, a function reading the same global (the
 * current run's activator) and, when `ownStacks` (the formatter is installed, so the hook keeps no
 * stack anyway), a constructor of objects whose `stack` is '': the hook then ends where it did,
 * with nothing captured. Does nothing where `Promise` already has one or cannot take it; an SDK that
 * looks them up another way simply does not use it.
 */
export function cheapHookLookups(ownStacks: boolean): boolean {
  if (Object.isFrozen(Promise) || Object.prototype.hasOwnProperty.call(Promise, 'constructor')) return false;
  const compile = Function;
  const readActivator = (): unknown => (globalThis as { __TEMPORAL_ACTIVATOR__?: unknown }).__TEMPORAL_ACTIVATOR__;
  class NoStack {
    readonly stack = '';
  }
  const errorCtor = (): unknown => NoStack;
  function promiseFunction(...source: string[]): unknown {
    if (source.length === 1) {
      if (source[0] === HOOK_ACTIVATOR) return readActivator;
      if (ownStacks && source[0] === HOOK_ERROR) return errorCtor;
    }
    return compile(...source);
  }
  Object.defineProperty(Promise, 'constructor', { value: promiseFunction, writable: false, configurable: false });
  return true;
}

try {
  cheapHookLookups(formatOwnStacks());
} catch {
  // The SDK's stacks and lookups stay: a workflow context must be created whatever this module meets.
}
