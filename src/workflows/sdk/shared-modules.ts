import { z } from 'zod';
import { builtOnce } from '../../shared/built-once';

/**
 * SDK workaround (src/workflows/sdk/). Upstream: the SDK deep-freezes what a preloaded module exports
 * (temporalio/sdk-typescript pull request 1605, "Fix multiple context leaks in `reuseV8Context`
 * executor"), and zod writes its global config lazily, on the first schema built. Delete it when zod
 * no longer writes its config on first use, or the SDK no longer freezes a preloaded module's exports
 * (then a run can build the first schema itself): test/package/plugin-bundle.test.ts and
 * test/workflow/shared-workflow-modules.test.ts run the bundles that preload it.
 *
 * The workflow bundle's preloaded module (see src/workflow-bundle-options.ts): requiring it loads
 * zod and `builtOnce` into the cache the SDK shares between runs, so every run uses one zod and one
 * set of the run input's schemas (src/shared/built-once.ts). zod declares itself free of side
 * effects, so the bundler would drop a bare `require('zod')`; this module uses both.
 *
 * zod sets its default locale and memoizer in its global config the first time a schema (an
 * object) is built; the SDK freezes a shared module once preloaded, so they are set here, before
 * that: afterwards, building a schema in a run would fail to write them ("object is not extensible").
 */
z.object({ preloaded: z.string() });

export const sharedZod: typeof z = z;
export const sharedBuiltOnce: typeof builtOnce = builtOnce;
