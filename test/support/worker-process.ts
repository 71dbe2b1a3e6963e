/**
 * A standalone worker process for fault-injection tests: the real `durable-agent worker` command
 * (src/cli/worker-command.ts) running the test run's workflow bundle, so a test can SIGKILL or
 * SIGTERM it and start another. Spawned from TypeScript source by `startWorkerProcess`
 * (worker-harness.ts); configured by the environment:
 *
 * - `TEMPORAL_ADDRESS`, `TEMPORAL_TASK_QUEUE`, `TEMPORAL_NAMESPACE`: where to poll.
 * - `DA_TEST_WORKFLOW_BUNDLE`: the workflow bundle (jest global setup builds it once per run).
 * - `ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY`: the fake Messages API (read by the SDK).
 * - `DURABLE_AGENT_SHUTDOWN_GRACE`, `DURABLE_AGENT_MODEL_IDLE_TIMEOUT`: as in production.
 * - `DA_TEST_HEALTH_CHECK_MS`, `DA_TEST_RETRY_MS`: shorter connection checks and backoff for tests.
 * - `DA_TEST_SLOW_READ_TOOL=1`: also offer `wait_for_file`, a read-only tool that records each
 *   execution in `.executions` in the workspace and waits until a named file exists.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { runWorkerCommand } from '../../src/cli/worker-command';
import { temporalConfig } from '../../src/client/config';
import { defineTool, resolveInWorkspace } from '../../src/tools';
import { defaultActivityDeps } from '../../src/worker';

/**
 * A read-only tool that takes as long as the test wants: it returns once `path` exists and has
 * content (a file the test is still writing can be seen empty for a moment).
 */
const waitForFile = defineTool({
  name: 'wait_for_file',
  description: 'Wait until a file exists in the workspace and return its content.',
  inputSchema: z.strictObject({ path: z.string().min(1) }),
  sideEffect: 'read_only',
  async execute(input, ctx) {
    await fs.appendFile(path.join(ctx.workspace, '.executions'), `wait_for_file ${process.pid}\n`);
    const target = await resolveInWorkspace(ctx.workspace, input.path);
    for (;;) {
      if (ctx.signal.aborted) return { content: 'Error: cancelled', isError: true };
      const content = await fs.readFile(target, 'utf8').catch(() => '');
      if (content) return content;
      await new Promise((r) => setTimeout(r, 100));
    }
  },
});

function numberEnv(name: string): number | undefined {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : undefined;
}

async function main(): Promise<number> {
  const deps = defaultActivityDeps();
  if (process.env.DA_TEST_SLOW_READ_TOOL === '1') deps.tools.register(waitForFile);
  const retryMs = numberEnv('DA_TEST_RETRY_MS');
  const healthCheckMs = numberEnv('DA_TEST_HEALTH_CHECK_MS');
  return runWorkerCommand({
    config: temporalConfig(),
    deps,
    ...(process.env.DA_TEST_WORKFLOW_BUNDLE ? { workflowBundlePath: process.env.DA_TEST_WORKFLOW_BUNDLE } : {}),
    ...(retryMs ? { retryInitialMs: retryMs, retryMaxMs: retryMs * 4 } : {}),
    ...(healthCheckMs ? { healthCheckIntervalMs: healthCheckMs } : {}),
  });
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`worker-process: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
