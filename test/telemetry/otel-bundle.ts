import { bundleWorkflowCode } from '@temporalio/worker';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { TELEMETRY_WORKFLOW_MODULE } from '../../src/telemetry';
import { tempWorkspace } from '../support/temporal';

/** The workflow bundle with the tracing interceptors, as `npm run build` writes `workflow-bundle-otel.js`. */
export async function buildOtelBundle(): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../src/workflows'),
    workflowInterceptorModules: [TELEMETRY_WORKFLOW_MODULE],
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} },
  });
  const file = path.join(await tempWorkspace('otel-bundle'), 'workflow-bundle-otel.js');
  await fs.writeFile(file, code);
  return file;
}
