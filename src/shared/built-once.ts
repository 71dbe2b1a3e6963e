/**
 * Values built once and shared by every run on a workflow thread: the zod schemas of the run input
 * and its parts.
 *
 * Why: with the SDK's reusable V8 context, a module of the workflow bundle that is not preloaded is
 * evaluated again for each run the worker starts or rebuilds from history, and each cached run keeps
 * its own copy. Building the schemas was 434 KiB of heap and about 4.5 ms per run (docs/benchmarks.md,
 * "Worker cost"). This module is preloaded in every bundle that holds the agent's workflow
 * (src/worker/workflow-bundle.ts: with the rest of the agent's workflow code in its own bundles and
 * a plugin's, and through `shared-modules` in the bench's naive one), so there is one `built` map per
 * workflow thread; outside a workflow bundle (client, CLI, activities) it is an ordinary module, built
 * once per process.
 *
 * The SDK deep-freezes what a preloaded module exports, and a frozen zod schema cannot install the
 * methods zod 4 adds on first use. The SDK freezes once, when it creates the thread's context, before
 * any run; and the map is held by this module's closure, which the freeze does not reach. So the
 * schemas are never frozen, as long as no module exports one as a value: modules export a function
 * that returns it ({@link onFirstUse}), and the first run to call it builds it. (Without the reused
 * context, `reuseV8Context: false`, each run builds its own, as before: correct, only without the
 * saving.)
 *
 * What is built here must be pure: no per-run state, no workflow APIs, nothing a later run could
 * see changed. A zod schema is: parsing memoizes only what the schema itself determines. A build
 * function may call only pure code, since its closures keep the modules they use alive for the life
 * of the thread.
 */
// eslint-disable-next-line no-restricted-syntax -- shared on purpose: pure values, the same for every run.
const built = new Map<string, unknown>();

/** The value built for `key`, building it with `build` the first time. Keys name the building module. */
export function builtOnce<T>(key: string, build: () => T): T {
  if (built.has(key)) return built.get(key) as T;
  const value = build();
  built.set(key, value);
  return value;
}

/**
 * A function returning the value built for `key`, built when it is first called. Modules export
 * their zod schemas this way rather than as values: the agent's bundles preload its workflow code
 * (src/worker/workflow-bundle.ts), and the SDK deep-freezes what a preloaded module exports, which a
 * zod schema does not survive. A function is frozen harmlessly; the schema it returns is built
 * after the freeze, held only by the `built` map.
 */
export function onFirstUse<T>(key: string, build: () => T): () => T {
  return () => builtOnce(key, build);
}
