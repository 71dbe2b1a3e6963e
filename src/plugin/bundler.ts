import type { BundleOptions } from '@temporalio/worker';
import * as path from 'node:path';
import { AGENT_WORKFLOW_MODULES_WITH_STACKS } from '../worker/workflow-bundle';

/**
 * The agent's workflow code and zod preloaded once per workflow thread, next to the user's own
 * preloaded modules, as the worker's prebuilt bundle does (src/worker/workflow-bundle.ts): without
 * it, a bundle made through the plugin evaluates them again for every run it starts or rebuilds, and
 * each cached run keeps its copy. The stack-trace change of the agent's own bundles is left out: it
 * would apply to the user's workflows too.
 */
export function withSharedWorkflowModules(options: BundleOptions): BundleOptions {
  const own = options.preloadModules ?? [];
  const missing = AGENT_WORKFLOW_MODULES_WITH_STACKS.filter((module) => !own.includes(module));
  return missing.length ? { ...options, preloadModules: [...own, ...missing] } : options;
}

/**
 * A workflow bundle must hold one copy of `@temporalio/workflow`: two (the user's, and one next to a
 * linked or nested durable-agent) break every workflow task ("Cannot read private member"). The
 * bundle resolves the package as the user's workflows module does, wherever durable-agent lies.
 */
export function singleWorkflowPackage(options: BundleOptions): BundleOptions {
  const from = options.workflowsPath ? path.dirname(options.workflowsPath) : process.cwd();
  let root: string;
  try {
    root = path.dirname(require.resolve('@temporalio/workflow/package.json', { paths: [from] }));
  } catch {
    return options; // the bundler reports the missing package itself
  }
  const previous = options.webpackConfigHook;
  return {
    ...options,
    webpackConfigHook: (config) => {
      const base = previous ? previous(config) : config;
      const alias = base.resolve?.alias;
      return {
        ...base,
        resolve: {
          ...base.resolve,
          alias: Array.isArray(alias)
            ? [...alias, { name: '@temporalio/workflow', alias: root }]
            : { ...alias, '@temporalio/workflow': root },
        },
      };
    },
  };
}
