import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { testAddress } from '../support/temporal';

const run = promisify(execFile);

/** `temporal worker deployment set-current-version`, as an operator runs it, once the build's workers poll. */
export async function setCurrentVersion(deploymentName: string, buildId: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await run(process.env.DA_TEST_TEMPORAL_CLI!, [
        'worker',
        'deployment',
        'set-current-version',
        '--deployment-name',
        deploymentName,
        '--build-id',
        buildId,
        '--address',
        testAddress(),
        '--yes',
      ]);
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
