import type { WorkflowExecutionDescription } from '@temporalio/client';
import { spawn } from 'node:child_process';
import type { RunListing } from '../../src/cli/list-command';
import type { RunStatusReport } from '../../src/cli/run-status';
import { searchAttribute } from '../../src/cli/run-status';
import { statusSearchAttribute } from '../../src/shared';
import { CLI_BIN, type CliOutcome } from '../support/cli-process';
import { testAddress } from '../support/temporal';

/**
 * The built CLI (bin/durable-agent.js, as a user runs it) against the test server, with optional
 * text on its standard input. `npm test` builds dist/ first.
 */
export function durableAgent(
  args: string[],
  options: { taskQueue?: string; stdin?: string; env?: Record<string, string | undefined> } = {},
): Promise<CliOutcome> {
  const child = spawn(process.execPath, [CLI_BIN, ...args], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: testAddress(),
      ANTHROPIC_API_KEY: '',
      ...(options.taskQueue ? { TEMPORAL_TASK_QUEUE: options.taskQueue } : {}),
      ...options.env,
    },
    stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (options.stdin !== undefined) {
    // A CLI that stops reading early (a refused prompt) closes the pipe: not an error here.
    child.stdin?.on('error', () => {});
    child.stdin?.end(options.stdin);
  }
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

/** `durable-agent status <id> --json`, parsed. */
export async function statusJson(id: string): Promise<RunStatusReport> {
  const out = await durableAgent(['status', id, '--json']);
  if (out.code !== 0) throw new Error(`status ${id} exited ${out.code}: ${out.stderr}`);
  return JSON.parse(out.stdout) as RunStatusReport;
}

/** `durable-agent list --json` with extra flags, parsed. */
export async function listJson(...flags: string[]): Promise<RunListing[]> {
  const out = await durableAgent(['list', '--json', ...flags]);
  if (out.code !== 0) throw new Error(`list exited ${out.code}: ${out.stderr}`);
  return JSON.parse(out.stdout) as RunListing[];
}

/** The `DurableAgentStatus` search attribute of an execution as Temporal's describe returns it. */
export function storedStatus(description: WorkflowExecutionDescription): unknown {
  return searchAttribute(description, statusSearchAttribute.name);
}
