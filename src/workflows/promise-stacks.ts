/**
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

/** This bundle's file, as V8 names it in frames (the name the worker gave the bundle's script). */
function ownFile(): string | null {
  const holder: { stack?: unknown } = {};
  const previous = Error.prepareStackTrace;
  Error.prepareStackTrace = (_error, frames) => frames;
  try {
    Error.captureStackTrace(holder);
    const frames = holder.stack as Frame[] | undefined;
    return frames?.[0]?.getFileName() ?? null;
  } finally {
    Error.prepareStackTrace = previous;
  }
}

/** Installs the formatter; does nothing where `Error` cannot take it (an already frozen context). */
export function formatOwnStacks(): boolean {
  const bundle = ownFile();
  if (bundle === null || Object.isFrozen(Error)) return false;
  Error.prepareStackTrace = (error: Error, frames: Frame[]): string => {
    const top = frames[0]?.getFileName();
    // Built by code outside this bundle with this context's `Error`: the SDK's promise hook.
    if (typeof top === 'string' && top !== bundle) return '';
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

formatOwnStacks();
