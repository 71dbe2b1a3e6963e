import { spawn } from 'node:child_process';
import type { CliOutcome } from '../support/cli-process';
import { testAddress } from '../support/temporal';

/**
 * The official `temporal` CLI binary (the one jest's global setup runs the test server with), as an
 * outside client that none of durable-agent's code is involved in.
 */
export function temporalCliPath(): string {
  const cli = process.env.DA_TEST_TEMPORAL_CLI;
  if (!cli) throw new Error('No Temporal CLI: run the suite with `npm test` (jest global setup finds it).');
  return cli;
}

/** Runs `temporal <args>` against the test server; never reads the user's Temporal config file. */
export function temporal(args: string[]): Promise<CliOutcome> {
  const connection = ['--address', testAddress(), '--namespace', 'default', '--disable-config-file'];
  const child = spawn(temporalCliPath(), [...args, ...connection], {
    env: { ...process.env, TEMPORAL_ADDRESS: testAddress() },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

/** Runs `temporal <args> -o json`, expects exit code 0 and parses what it printed. */
export async function temporalJson<T = Record<string, unknown>>(args: string[]): Promise<T> {
  const out = await temporal([...args, '-o', 'json']);
  if (out.code !== 0) throw new Error(`temporal ${args.join(' ')} exited ${out.code}: ${out.stderr}`);
  return JSON.parse(out.stdout) as T;
}

/** `temporal workflow query … -o json`: the query's result. */
export async function query<T = Record<string, unknown>>(workflowId: string, name: string, input?: string) {
  const args = [
    'workflow',
    'query',
    '-w',
    workflowId,
    '--name',
    name,
    ...(input !== undefined ? ['--input', input] : []),
  ];
  const answer = await temporalJson<{ queryResult: T[] }>(args);
  return answer.queryResult[0] as T;
}

interface HistoryEvent {
  eventId: string;
  eventType: string;
  workflowTaskFailedEventAttributes?: { cause?: string };
}

/** A run's history as `temporal workflow show -o json` prints it. */
export async function history(workflowId: string, runId?: string): Promise<HistoryEvent[]> {
  const args = ['workflow', 'show', '-w', workflowId, ...(runId ? ['-r', runId] : [])];
  return (await temporalJson<{ events: HistoryEvent[] }>(args)).events;
}

/** The event types of a run's history (`EVENT_TYPE_…`). */
export async function eventTypes(workflowId: string, runId?: string): Promise<string[]> {
  return (await history(workflowId, runId)).map((e) => e.eventType);
}

/**
 * Workflow tasks that failed, with their causes. A reset records one on purpose (cause
 * `…_RESET_WORKFLOW`) where the new run branches off; anything else means input or code broke a task.
 */
export async function failedWorkflowTasks(workflowId: string, runId?: string): Promise<string[]> {
  return (await history(workflowId, runId))
    .filter((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_TASK_FAILED')
    .map((e) => e.workflowTaskFailedEventAttributes?.cause ?? 'unknown cause');
}

/** `temporal workflow metadata -o json`: the handlers the workflow registered and its current details. */
export interface WorkflowMetadata {
  currentDetails?: string;
  definition: Record<'queryDefinitions' | 'signalDefinitions' | 'updateDefinitions', HandlerDefinition[]>;
}
export interface HandlerDefinition {
  name: string;
  description?: string;
}

/** A search attribute as `temporal workflow describe -o json` prints it (a payload), decoded. */
export function decodeSearchAttribute(described: unknown, name: string): unknown {
  const info = (
    described as { workflowExecutionInfo?: { searchAttributes?: { indexedFields?: Record<string, unknown> } } }
  ).workflowExecutionInfo;
  const payload = info?.searchAttributes?.indexedFields?.[name] as { data?: string } | undefined;
  return payload?.data ? JSON.parse(Buffer.from(payload.data, 'base64').toString('utf8')) : undefined;
}

/** Polls `temporal workflow query --name state` until `predicate` holds. */
export async function waitForStatus(
  workflowId: string,
  predicate: (state: { status: string; iteration: number }) => boolean,
  timeoutMs = 20_000,
): Promise<{ status: string; iteration: number }> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown = 'no answer yet';
  for (;;) {
    try {
      const state = await query<{ status: string; iteration: number }>(workflowId, 'state');
      if (predicate(state)) return state;
      last = state;
    } catch (e) {
      last = (e as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`state of ${workflowId} never matched; last: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * The validator's message from the line the CLI logs for a rejected update:
 * `… level=ERROR msg="unable to update workflow: <message> (type: Error, retryable: true)"`.
 */
export function rejection(out: CliOutcome): string {
  const quoted = /msg=("(?:[^"\\]|\\.)*")/.exec(out.stderr)?.[1];
  const msg = quoted ? (JSON.parse(quoted) as string) : '';
  const match = /^unable to update workflow: (.*?)(?: \(type: [^)]*\))?$/s.exec(msg);
  return match?.[1] ?? `(no rejection in stderr: ${out.stderr.trim()})`;
}
