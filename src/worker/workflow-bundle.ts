/**
 * Modules the workflow bundle evaluates once per workflow thread and shares between runs
 * (`bundleWorkflowCode({ preloadModules })`). With the SDK's reusable V8 context every other
 * module of the bundle is evaluated again for each run the worker starts or rebuilds, and each
 * cached run keeps its own copy: zod alone was about 2.5 MiB of heap and most of that evaluation
 * time per run (docs/benchmarks.md, "Worker cost"). zod holds no per-run state, so sharing it
 * cannot leak one run into another. The SDK freezes a shared module's exports: workflow code must
 * not call `z.config()` (it does not). The run input's schemas are shared too, through
 * `builtOnce` (src/shared/built-once.ts): 434 KiB and about 4.5 ms per run, built once.
 */
export const SHARED_WORKFLOW_MODULES: readonly string[] = [require.resolve('../workflows/sdk/shared-modules')];

/**
 * The agent's workflow code itself (src/workflows and every module it imports), preloaded in the
 * agent's own bundles: evaluated once per workflow thread instead of once per run. Each run used to
 * evaluate it again and keep its copy: about 380 closures and 160 hidden classes per cached run, which
 * the workflow isolate's garbage collector marked again and again (docs/benchmarks.md, "Workflow code
 * evaluated once per thread"). Sharing is safe because the code keeps no per-run state at module
 * level: a run's state lives in the objects its `agentWorkflow` call creates, and the SDK's own
 * per-run state in its activator. test/workflow/shared-workflow-modules.test.ts checks this, and
 * docs/contributing.md ("Module state") holds the rule. The SDK freezes what these modules export,
 * so they export no value that is changed later (zod schemas are exported as functions:
 * src/shared/built-once.ts).
 */
export const AGENT_WORKFLOWS_MODULE: string = require.resolve('../workflows');

/** {@link AGENT_WORKFLOW_MODULES} without `promise-stacks`: the SDK keeps its stack traces. */
export const AGENT_WORKFLOW_MODULES_WITH_STACKS: readonly string[] = [
  ...SHARED_WORKFLOW_MODULES,
  AGENT_WORKFLOWS_MODULE,
];

/**
 * The preloaded modules of durable-agent's own workflow bundles (the prebuilt ones, and the one a
 * worker bundles at start): the shared modules above, the agent's workflow code, and
 * `promise-stacks`, which turns off the SDK's per-promise stack collection for the agent's runs
 * (src/workflows/sdk/promise-stacks.ts says why and what changes). A bundle that also holds other
 * workflows (the plugin's, src/plugin/bundler.ts) and a worker that keeps the SDK's stacks
 * (`workflowStackTraces`) preload {@link AGENT_WORKFLOW_MODULES_WITH_STACKS}: `promise-stacks` would
 * change every workflow's stack traces.
 */
export const AGENT_WORKFLOW_MODULES: readonly string[] = [
  ...AGENT_WORKFLOW_MODULES_WITH_STACKS,
  require.resolve('../workflows/sdk/promise-stacks'),
];

const INLINE_MAP = '//# sourceMappingURL=data:';

/**
 * `code` (a workflow bundle with its inline source map, as `bundleWorkflowCode` makes it) without the
 * map's `sourcesContent`: the text of every bundled source, about 2 MB for the agent's bundle. Every
 * worker keeps the parsed map for the life of its workflow threads, and the sources' text was 27 MiB of
 * an idle worker's 176 MiB of RSS (`node dist/bench/bundle-rss.js`; docs/benchmarks.md, "Worker
 * cost"). The mappings stay, so a debugger, and the SDK's stack traces where the agent's formatting
 * is not preloaded, still map to the source file and line; only `showStackTraceSources` (the sources
 * shown beside an enhanced stack trace) and a debugger without the sources on disk lose the text. A
 * bundle without an inline base64 map is returned unchanged.
 */
export function withoutSourcesContent(code: string): string {
  return editSourceMap(code, (map) => {
    if (map.sourcesContent === undefined) return undefined;
    const { sourcesContent: _text, ...rest } = map;
    return rest;
  });
}

/**
 * `code` with its inline base64 source map replaced by what `edit` makes of it; unchanged when it has
 * no such map or `edit` returns undefined.
 */
export function editSourceMap(
  code: string,
  edit: (map: Record<string, unknown>) => Record<string, unknown> | undefined,
): string {
  const at = code.lastIndexOf(INLINE_MAP);
  const data = at < 0 ? -1 : code.indexOf('base64,', at);
  if (data < 0) return code;
  const header = code.slice(at, data + 'base64,'.length);
  const map = JSON.parse(Buffer.from(code.slice(data + 'base64,'.length).trimEnd(), 'base64').toString()) as Record<
    string,
    unknown
  >;
  const edited = edit(map);
  if (edited === undefined) return code;
  return `${code.slice(0, at)}${header}${Buffer.from(JSON.stringify(edited)).toString('base64')}\n`;
}
