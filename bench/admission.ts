import type { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { Admission } from '../src/admission';
import { AnthropicProvider } from '../src/models/anthropic';
import { WORKFLOW_TYPE, eventsQuery, type AgentRunInput, type RunEvent } from '../src/shared';
import { createAgentWorker, type AgentWorker } from '../src/worker';
import { readActions, startMetricsServer, totalOf, difference, type ActionCounts } from './actions-metrics';
import { uniqueName } from './context';
import { startRateLimitedProvider, type RateLimitedProvider } from './rate-limited-provider';
import { OUTPUT_TOOL, createBenchRegistry } from './scenario';
import { bundleBenchWorkflows, connectBenchClient, makeWorkDir } from './server';
import { installQuietRuntime, withWorkers } from './workers';

/**
 * Model-call admission against a key's rate limits (issue 43): 60 concurrent runs of 10 model calls
 * each across 3 workers (each its own connection and its own `Admission`, as 3 processes would have)
 * on one provider key, against a local fake Messages API that enforces input tokens and requests per
 * minute as Anthropic documents them (bench/rate-limited-provider.ts). Scenarios, one after another on
 * one in-memory dev server with its `action` metric: unthrottled (a limit nobody reaches: the actions
 * baseline), admission on, admission off (today's retry-on-429), and priorities (50 batch runs at
 * priority 5, 10 sessions at priority 2 started once the key is saturated).
 *
 *   npm run build && node dist/bench/admission.js [--quick]
 */
export const ADMISSION_COMMAND = 'npm run build && node dist/bench/admission.js';

const RUNS = 60;
const WORKERS = 3;
const ITERATIONS = 10;
/** Each tool call returns this many characters, so a run's calls grow as agent calls do. */
const OUTPUT_BYTES = 600;
const ANSWER_MS = 400;
const REQUESTS_PER_MINUTE = 600;

interface Scenario {
  name: string;
  admission: boolean;
  inputTokensPerMinute: number;
  priorities?: boolean;
}

interface RunRow {
  id: string;
  failed: boolean;
  priority: number;
  startedAt: number;
  endedAt: number;
  calls: number;
  waitMs: number;
}

export interface ScenarioRow {
  name: string;
  inputTokensPerMinute: number;
  /** Runs that did not complete (a model call out of attempts). */
  failedRuns: number;
  requests: number;
  refused: number;
  refusedPercent: number;
  inputTokens: number;
  wallMs: number;
  idealMs: number;
  wallOverIdeal: number;
  slowestOverMedian: Record<number, number>;
  actions: number;
  actionsPerIteration: number;
  byType: ActionCounts;
  meanWaitPerCallMs: Record<number, number>;
}

async function runScenario(
  s: Scenario,
  env: { address: string; bundlePath: string; workspace: string; client: Client; metricsUrl: string },
  log: (m: string) => void,
): Promise<ScenarioRow> {
  const provider: RateLimitedProvider = await startRateLimitedProvider({
    inputTokensPerMinute: s.inputTokensPerMinute,
    requestsPerMinute: REQUESTS_PER_MINUTE,
    iterations: ITERATIONS,
    toolName: OUTPUT_TOOL,
    toolInput: { bytes: OUTPUT_BYTES },
    answerMs: ANSWER_MS,
  });
  const taskQueue = uniqueName(`admission-${s.name}`);
  const connections = await Promise.all(
    Array.from({ length: WORKERS }, () => NativeConnection.connect({ address: env.address })),
  );
  const workers: AgentWorker[] = await Promise.all(
    connections.map((connection) =>
      createAgentWorker({
        connection,
        namespace: 'default',
        taskQueue,
        workflowBundlePath: env.bundlePath,
        deps: {
          models: (() => {
            const model = new AnthropicProvider({ baseURL: provider.url, apiKey: 'sk-bench-admission' });
            return () => model;
          })(),
          tools: createBenchRegistry(),
          defaultWorkspace: env.workspace,
          admission: s.admission ? new Admission() : false,
        },
      }),
    ),
  );
  const before = await readActions(env.metricsUrl);
  const { rows: withWaits, actions } = await withWorkers(workers, async () => {
    const started = Date.now();
    const ended = await Promise.all(
      Array.from({ length: RUNS }, async (_, i) => {
        const session = s.priorities === true && i % 6 === 5;
        const priority = s.priorities ? (session ? 2 : 5) : 3;
        // Sessions arrive once the batch runs have saturated the key.
        if (session) await new Promise((r) => setTimeout(r, 20_000));
        const id = `${taskQueue}-${i}`;
        const input: AgentRunInput = {
          prompt: `run ${id}: read the document`,
          model: 'claude-sonnet-5-5',
          workspace: env.workspace,
          tools: [OUTPUT_TOOL],
          systemPrompt: 'You read documents chunk by chunk.',
          systemReplace: true,
          maxIterations: ITERATIONS + 1,
          ...(s.priorities ? { priority } : {}),
        };
        const handle = await env.client.workflow.start(WORKFLOW_TYPE, { taskQueue, workflowId: id, args: [input] });
        const runStarted = Date.now() - started;
        // A run whose model call runs out of attempts in a 429 storm fails (today's behaviour can).
        const result = await (handle.result() as Promise<{ exitReason: string; iterations: number }>).catch(() => ({
          exitReason: 'failed',
          iterations: 0,
        }));
        const failed = result.exitReason !== 'completed';
        return { id, priority, startedAt: runStarted, endedAt: Date.now() - started, calls: result.iterations, failed };
      }),
    );
    const actions = difference(await settledActions(env.metricsUrl), before);
    // Queries are billable: the events are read after the counters, while the workers still answer.
    const rows: RunRow[] = await Promise.all(
      ended.map(async (row) => {
        const page = await env.client.workflow
          .getHandle(row.id)
          .query(eventsQuery, {})
          .catch(() => ({ events: [] as RunEvent[] }));
        const waitMs = page.events.reduce(
          (sum: number, e: RunEvent) => sum + (e.kind === 'rate_limited' ? e.waitMs : 0),
          0,
        );
        return { ...row, waitMs };
      }),
    );
    return { rows, actions };
  });
  await Promise.all(connections.map((c) => c.close()));
  await provider.close();
  const requests = provider.requests.length;
  const refused = provider.requests.filter((r) => r.status === 429).length;
  const inputTokens = provider.requests.filter((r) => r.status === 200).reduce((a, r) => a + r.inputTokens, 0);
  const wallMs = Math.max(...withWaits.map((r) => r.endedAt));
  const idealMs = (inputTokens / s.inputTokensPerMinute) * 60_000;
  const iterations = withWaits.reduce((a, r) => a + r.calls, 0);
  const byPriority = new Map<number, RunRow[]>();
  for (const r of withWaits) byPriority.set(r.priority, [...(byPriority.get(r.priority) ?? []), r]);
  const slowestOverMedian: Record<number, number> = {};
  const meanWaitPerCallMs: Record<number, number> = {};
  for (const [p, list] of byPriority) {
    const durations = list
      .filter((r) => !r.failed)
      .map((r) => r.endedAt - r.startedAt)
      .sort((a, b) => a - b);
    slowestOverMedian[p] = round(durations[durations.length - 1]! / durations[Math.floor(durations.length / 2)]!);
    meanWaitPerCallMs[p] = Math.round(
      list.reduce((a, r) => a + r.waitMs, 0) /
        Math.max(
          1,
          list.reduce((a, r) => a + r.calls, 0),
        ),
    );
  }
  const total = totalOf(actions);
  const row: ScenarioRow = {
    name: s.name,
    inputTokensPerMinute: s.inputTokensPerMinute,
    failedRuns: withWaits.filter((r) => r.failed).length,
    requests,
    refused,
    refusedPercent: round((100 * refused) / requests),
    inputTokens,
    wallMs,
    idealMs: Math.round(idealMs),
    wallOverIdeal: round(wallMs / idealMs),
    slowestOverMedian,
    actions: total,
    actionsPerIteration: round(total / iterations),
    byType: actions,
    meanWaitPerCallMs,
  };
  log(`${s.name}: ${JSON.stringify(row)}`);
  return row;
}

async function settledActions(metricsUrl: string): Promise<ActionCounts> {
  let last = await readActions(metricsUrl);
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setTimeout(r, 1_000));
    const now = await readActions(metricsUrl);
    if (totalOf(now) === totalOf(last)) return now;
    last = now;
  }
  return last;
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}

export function formatAdmission(rows: ScenarioRow[]): string {
  const lines = [
    `Admission (issue 43): ${RUNS} runs × ${ITERATIONS} calls, ${WORKERS} workers, one key; ${ADMISSION_COMMAND}`,
    '| scenario | ITPM | failed runs | requests | 429s | wall / ideal | slowest / median (by priority) | actions / iteration | mean wait per call, ms (by priority) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.name} | ${r.inputTokensPerMinute} | ${r.failedRuns} | ${r.requests} | ${r.refused} (${r.refusedPercent} %) | ` +
        `${r.wallOverIdeal} (${Math.round(r.wallMs / 1000)} s / ${Math.round(r.idealMs / 1000)} s) | ` +
        `${JSON.stringify(r.slowestOverMedian)} | ${r.actionsPerIteration} | ${JSON.stringify(r.meanWaitPerCallMs)} |`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const only = process.argv
    .find((a) => a.startsWith('--only='))
    ?.slice('--only='.length)
    .split(',');
  const log = (m: string) => process.stderr.write(`[admission] ${m}\n`);
  installQuietRuntime();
  const workDir = await makeWorkDir();
  const workspace = path.join(workDir, 'workspace');
  await fs.mkdir(workspace, { recursive: true });
  const server = await startMetricsServer(workDir, log);
  try {
    const bundlePath = await bundleBenchWorkflows(workDir);
    const client = await connectBenchClient(server);
    // ~14,000 input tokens per run (the bench's prompt, tools and growing tool results at 3 characters a
    // token): 60 runs take about 3 minutes at this limit, 1 with --quick.
    const limit = quick ? 900_000 : 300_000;
    const scenarios: Scenario[] = [
      { name: 'unthrottled', admission: true, inputTokensPerMinute: 1e9 },
      { name: 'admission on', admission: true, inputTokensPerMinute: limit },
      { name: 'admission off (retry on 429)', admission: false, inputTokensPerMinute: limit },
      {
        name: 'priorities (50 batch p5, 10 sessions p2)',
        admission: true,
        inputTokensPerMinute: limit,
        priorities: true,
      },
    ].filter((s) => !only || only.some((o) => s.name.startsWith(o)));
    const rows: ScenarioRow[] = [];
    for (const s of scenarios) rows.push(await runScenario(s, { ...server, bundlePath, workspace, client }, log));
    const out = path.join(__dirname, '..', '..', 'bench', 'results', `admission-${Date.now()}.json`);
    await fs.mkdir(path.dirname(out), { recursive: true }).catch(() => undefined);
    await fs.writeFile(out, JSON.stringify(rows, null, 2)).catch(() => undefined);
    process.stdout.write(`${formatAdmission(rows)}\n`);
    await client.connection.close();
  } finally {
    await server.stop();
  }
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
