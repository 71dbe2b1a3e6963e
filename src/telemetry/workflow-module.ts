/**
 * The workflow interceptor module: give it to `bundleWorkflowCode({ workflowInterceptorModules })`
 * (a prebuilt bundle) or `WorkerOptions.interceptors.workflowModules` when telemetry is on.
 */
export const TELEMETRY_WORKFLOW_MODULE = require.resolve('./workflow-interceptors');
