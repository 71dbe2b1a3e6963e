/**
 * Values built once and shared by every run on a workflow thread: the zod schemas of the run input
 * and its parts.
 *
 * Why: with the SDK's reusable V8 context, every module of the workflow bundle is evaluated again
 * for each run the worker starts or rebuilds from history, and each cached run keeps its own copy.
 * Building the schemas was 434 KiB of heap and about 4.5 ms per run (most of a waiting session's
 * memory; docs/benchmarks.md, "Worker cost"). This module is one of the bundle's preloaded modules
 * (src/workflow-bundle-options.ts), so there is one `built` map per workflow thread; outside a
 * workflow bundle (client, CLI, activities) it is an ordinary module, built once per process.
 *
 * The SDK deep-freezes what a preloaded module exports, and a frozen zod schema cannot install the
 * methods zod 4 adds on first use. The map is not an export (it is held by the closure), so the
 * schemas in it are never frozen; the first run to need them builds them.
 *
 * What is built here must be pure: no per-run state, no workflow APIs, nothing a later run could
 * see changed. A zod schema is: parsing memoizes only what the schema itself determines.
 */
const built = new Map<string, unknown>();

/** The value built for `key`, building it with `build` the first time. Keys name the building module. */
export function builtOnce<T>(key: string, build: () => T): T {
  if (built.has(key)) return built.get(key) as T;
  const value = build();
  built.set(key, value);
  return value;
}
