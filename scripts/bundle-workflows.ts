import { bundleWorkflowCode } from '@temporalio/worker';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { FAILURE_CONVERTER_PATH, PAYLOAD_CONVERTER_PATH } from '../src/codec';
import { withTelemetryVariants } from '../src/telemetry/bundle';
import { AGENT_WORKFLOW_MODULES, withoutSourcesContent } from '../src/worker/workflow-bundle';

/**
 * Bundles the workflow code once, so workers start without webpack. Run by `npm run build`
 * (compiled to dist/scripts/) and writes dist/workflow-bundle.js.
 */
async function main(): Promise<void> {
  const workflowsPath = path.resolve(__dirname, '..', 'src', 'workflows');
  for (const [file, options] of withTelemetryVariants([
    // Both with the payload converter that turns a client's undecodable payload into a value the
    // handlers reject (a converter error in the sandbox would fail every workflow task of the run).
    ['workflow-bundle.js', { payloadConverterPath: PAYLOAD_CONVERTER_PATH }],
    // Workers with the encryption codec: workflow failures are converted (and encrypted) in the sandbox.
    [
      'workflow-bundle-codec.js',
      { payloadConverterPath: PAYLOAD_CONVERTER_PATH, failureConverterPath: FAILURE_CONVERTER_PATH },
    ],
  ] as const)) {
    const { code } = await bundleWorkflowCode({
      workflowsPath,
      logger: quietLogger,
      preloadModules: [...AGENT_WORKFLOW_MODULES],
      ...options,
    });
    const target = path.resolve(__dirname, '..', file);
    // The map keeps its mappings, not the sources' text (`withoutSourcesContent` says why).
    const slim = withoutSourcesContent(code);
    await fs.writeFile(target, slim);
    process.stdout.write(`workflow bundle: ${target} (${(slim.length / 1024).toFixed(0)} KiB)\n`);
  }
}

const noop = () => {};
const quietLogger = { trace: noop, debug: noop, info: noop, warn: console.warn, error: console.error, log: noop };

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
