/**
 * Issue 12, item 2: durable-agent on a real cluster under chaos. The Temporal server built from its
 * Go module on PostgreSQL, TLS on, configured by the deployment's own files (scripts/cluster/); three
 * `durable-agent worker` processes with the deployment's worker settings (deploy/worker.env); 30 runs
 * at once, each writing and editing files in its own workspace and appending to a side-effect log
 * with bash; workers SIGKILLed at random and restarted; the Temporal server restarted once and
 * PostgreSQL crashed (immediate stop) and restarted once, while runs are in flight.
 *
 * Proven: 30/30 runs complete with the scripted final answer; no side effect happens twice (each
 * bash command appends lines no other command writes; a mutating tool whose attempt may have run is
 * reported as of unknown outcome, never run again); no completed model call is made again.
 *
 * "Repeated completed model call", measured from the model's side: every response carries a serial,
 * and the conversation the workflow keeps (visible in every later request, and in the final text)
 * names the response of each turn the run ACCEPTED, i.e. recorded in its history. A request for a
 * turn that arrives after that accepted response was fully sent is a repeat of a completed call.
 * Requests cut off by a kill, or answered but never recorded (the worker died before reporting), are
 * retries the durable loop must make; they are counted and printed, not failed.
 *
 * Seeded: DA_CHAOS_SEED=<n> replays the same kill schedule (timing still varies with the machine).
 */
import { Client, Connection, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { deployedWorkerEnv } from '../../scripts/cluster/deploy-files';
import { startCluster, type Cluster } from '../../scripts/cluster/cluster';
import { dataConverterFromEnv } from '../../src/codec';
import { WORKFLOW_TYPE, type AgentRunInput, type AgentRunResult } from '../../src/shared';
import { quietRuntime, tempWorkspace, testBundlePath } from '../support/temporal';
import { WorkerFleet, type WorkerProcess } from '../support/worker-harness';
import { acceptedSerials, startChaosModel, toolResults, type ChaosModel, type ToolCall } from './chaos-model';

const RUNS = 30;
const WORKERS = 3;
const TURNS = 6; // five tool turns, then the final answer
const TEST_BUDGET_MS = 8 * 60_000;
jest.setTimeout(TEST_BUDGET_MS + 60_000);

const seed = Number(process.env.DA_CHAOS_SEED) || Math.floor(Math.random() * 2 ** 31);
const random = mulberry32(seed);
const between = (min: number, max: number) => min + Math.floor(random() * (max - min));

const runName = (i: number) => `chaos-run-${String(i + 1).padStart(2, '0')}`;

/** Turn k's tool call: bash appends lines only this call writes; files are written, then edited. */
function script(run: string, turn: number): ToolCall | undefined {
  switch (turn) {
    case 1:
      return bash(`echo '${run} t1 start' >> effects.log; sleep 2; echo '${run} t1 end' >> effects.log`);
    case 2:
      return { name: 'write_file', input: { path: 'notes.md', content: `${run} draft\n` } };
    case 3:
      return { name: 'edit_file', input: { path: 'notes.md', old_string: 'draft', new_string: 'final' } };
    case 4:
      return bash(`echo "${run} t4 $(cat notes.md)" >> effects.log; sleep 2`);
    case 5:
      return bash(`sleep 2; echo '${run} t5' >> effects.log`);
    default:
      return undefined;
  }
}
const bash = (command: string): ToolCall => ({ name: 'bash', input: { command } });

let cluster: Cluster;
let model: ChaosModel;
let connection: Connection;
let client: Client;
const taskQueue = `chaos-${Date.now().toString(36)}`;
/** Payloads encrypted, as the deployment runs (compose requires DURABLE_AGENT_CODEC_KEYS). */
const codecEnv = { DURABLE_AGENT_CODEC_KEYS: `chaos:${randomBytes(32).toString('base64')}` };
const log = (m: string) => process.stderr.write(`[chaos] ${m}\n`);

beforeAll(async () => {
  quietRuntime();
  cluster = await startCluster({ log });
  model = await startChaosModel({ script, latencyMs: () => between(200, 900) });
  connection = await Connection.connect(cluster.connectionOptions());
  client = new Client({ connection, namespace: cluster.namespace, dataConverter: dataConverterFromEnv(codecEnv) });
}, 10 * 60_000);

afterAll(async () => {
  await connection?.close();
  await model?.close();
  await cluster?.stop();
});

test(`${RUNS} runs on ${WORKERS} workers survive worker kills, a server restart and a PostgreSQL crash`, async () => {
  log(`seed ${seed} (DA_CHAOS_SEED=${seed} replays the schedule)`);
  const began = Date.now();
  const fleet = new WorkerFleet(() => ({
    ...cluster.env,
    ...deployedWorkerEnv(),
    ...codecEnv,
    TEMPORAL_TASK_QUEUE: taskQueue,
    DA_TEST_WORKFLOW_BUNDLE: testBundlePath(),
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: 'sk-chaos',
    DA_TEST_HEALTH_CHECK_MS: '1000',
    DA_TEST_RETRY_MS: '500',
  }));
  const workers: WorkerProcess[] = Array.from({ length: WORKERS }, () => fleet.start());
  try {
    await Promise.all(workers.map((w) => w.ready(120_000)));

    const runs = await Promise.all(
      Array.from({ length: RUNS }, async (_, i) => {
        const name = runName(i);
        const workspace = await tempWorkspace(name);
        const input: AgentRunInput = {
          prompt: `${name}: follow the script.`,
          model: 'claude-sonnet-5-5',
          workspace,
          maxIterations: 20,
          // Liveness in seconds, not a minute, so a killed worker's calls are retried soon; not fewer,
          // as a loaded machine (CI runs other test files alongside) delays heartbeats by seconds.
          timeouts: { modelHeartbeatSeconds: 10, toolHeartbeatSeconds: 10 },
        };
        const handle = await client.workflow.start(WORKFLOW_TYPE, {
          taskQueue,
          workflowId: `${taskQueue}-${name}`,
          args: [input],
        });
        return { name, workspace, handle };
      }),
    );

    // The chaos: a polling worker SIGKILLed every 2-5 s (and a new one started); the Temporal server
    // restarted once a quarter of the turns are asked, PostgreSQL crashed once half are.
    const events: string[] = [];
    let done = false;
    let finished = 0;
    const progress = () => new Set(model.calls.map((c) => `${c.run}/${c.turn}`)).size / (RUNS * TURNS);
    const event = (text: string) => {
      events.push(text);
      log(text);
    };
    const ticker = setInterval(
      () =>
        log(
          `${(progress() * 100).toFixed(0)} % of turns asked, ${finished}/${RUNS} runs done, ${model.calls.length} model requests`,
        ),
      20_000,
    );
    const at = () => `${((Date.now() - began) / 1000).toFixed(0)} s, ${(progress() * 100).toFixed(0)} % of turns`;
    const restarts = (async () => {
      let serverRestarted = false;
      let postgresRestarted = false;
      while (!done && !postgresRestarted) {
        await sleep(500);
        if (!serverRestarted && progress() >= 0.25) {
          serverRestarted = true;
          const when = at();
          const t0 = Date.now();
          await cluster.restartServer();
          event(`server restart at ${when} (${finished} runs done; down ${Date.now() - t0} ms)`);
        } else if (serverRestarted && progress() >= 0.5) {
          postgresRestarted = true;
          const when = at();
          const t0 = Date.now();
          await cluster.restartPostgres('immediate');
          event(`PostgreSQL crash + restart at ${when} (${finished} runs done; down ${Date.now() - t0} ms)`);
        }
      }
      return { serverRestarted, postgresRestarted };
    })();
    const kills = (async () => {
      while (!done) {
        await sleep(between(2000, 5000));
        // Kill only a worker that is polling, and keep one polling: a new process takes tens of
        // seconds to start on a loaded machine, and killing starting ones would test nothing.
        const polling = await pollingWorkers(workers);
        if (done || polling.length < 2) continue;
        const i = polling[between(0, polling.length)]!;
        const victim = workers[i]!;
        victim.kill('SIGKILL');
        await victim.exited;
        workers[i] = fleet.start();
        event(`SIGKILL worker ${i + 1} (pid ${victim.pid}) at ${at()}`);
      }
    })();

    const deadline = began + TEST_BUDGET_MS - 30_000;
    const results = await Promise.all(
      runs.map(async (run) => {
        const result = await resultOf(run.handle, deadline).catch((err: Error) => err);
        finished += 1;
        return { ...run, result };
      }),
    );
    done = true;
    clearInterval(ticker);
    const [chaosDone] = await Promise.all([restarts, kills]);
    for (const r of results) {
      if (!(r.result instanceof Error)) continue;
      const turns = model.calls.filter((c) => c.run === r.name).map((c) => c.turn);
      log(`${r.name} did not complete (${r.result.message}); its last model turn: ${Math.max(0, ...turns)}`);
    }

    // 30/30 complete, each with the script's final answer.
    const outcomes = results.map((r) =>
      r.result instanceof Error ? `${r.name}: ${r.result.message}` : `${r.name}: ${r.result.exitReason}`,
    );
    expect(outcomes).toEqual(results.map((r) => `${r.name}: completed`));
    const finalTexts = new Map(results.map((r) => [r.name, (r.result as AgentRunResult).finalText]));
    for (const [name, text] of finalTexts)
      expect(text).toMatch(new RegExp(`^${name} turn ${TURNS} \\(response #\\d+\\): done$`));
    // The chaos happened while runs were in flight.
    expect(chaosDone).toEqual({ serverRestarted: true, postgresRestarted: true });
    expect(events.filter((e) => e.startsWith('SIGKILL')).length).toBeGreaterThanOrEqual(3);
    expect(events.filter((e) => !e.startsWith('SIGKILL')).every((e) => !e.includes(`(${RUNS} runs done`))).toBe(true);

    // No completed model call made again.
    const accepted = acceptedSerials(model.calls, finalTexts);
    const bySerial = new Map(model.calls.map((c) => [c.serial, c]));
    for (const run of runs) {
      for (let turn = 1; turn <= TURNS; turn++)
        expect([run.name, turn, accepted.has(`${run.name}/${turn}`)]).toEqual([run.name, turn, true]);
    }
    const repeated = model.calls.filter((c) => {
      const answer = bySerial.get(accepted.get(`${c.run}/${c.turn}`) ?? -1);
      return answer?.completedAt !== undefined && c.arrivedAt > answer.completedAt;
    });
    expect(repeated.map((c) => `${c.run}/${c.turn} #${c.serial}`)).toEqual([]);
    const unrecorded = model.calls.filter(
      (c) => c.completedAt !== undefined && accepted.get(`${c.run}/${c.turn}`) !== c.serial,
    ).length;
    log(
      `${model.calls.length} model requests for ${RUNS * TURNS} turns: ` +
        `${model.calls.filter((c) => c.completedAt === undefined).length} cut off, ` +
        `${unrecorded} answered but not recorded (worker gone), 0 repeated after being recorded`,
    );

    // No side effect twice: every line of every log is unique, and a tool that reported success left its lines once.
    let unknownOutcomes = 0;
    for (const run of runs) {
      const lines = (await fs.readFile(path.join(run.workspace, 'effects.log'), 'utf8').catch(() => ''))
        .split('\n')
        .filter(Boolean);
      const duplicates = lines.filter((line, i) => lines.indexOf(line) !== i);
      if (duplicates.length)
        log(`${run.name} ran a side effect twice; its activities:\n${await activityTrace(run.handle)}`);
      expect([run.name, duplicates]).toEqual([run.name, []]);
      const outcome = (turn: number) => {
        const serial = accepted.get(`${run.name}/${turn}`)!;
        const next = model.calls.find((c) => c.serial === accepted.get(`${run.name}/${turn + 1}`))!;
        return toolResults(next).get(`toolu_${serial}`);
      };
      const expectations: Array<[number, string[]]> = [
        [1, [`${run.name} t1 start`, `${run.name} t1 end`]],
        [4, [`${run.name} t4 ${run.name} ${outcome(3)?.is_error ? '' : 'final'}`.trimEnd()]],
        [5, [`${run.name} t5`]],
      ];
      for (const [turn, expected] of expectations) {
        const result = outcome(turn);
        expect([run.name, turn, result !== undefined]).toEqual([run.name, turn, true]);
        if (result?.is_error) {
          unknownOutcomes += 1;
          expect(result.text).toMatch(/unknown/i);
        } else if (turn !== 4 || !outcome(3)?.is_error) {
          for (const line of expected)
            expect([run.name, line, lines.filter((l) => l === line).length]).toEqual([run.name, line, 1]);
        }
      }
      // The edit, when it reported success, is what the file holds: the write was not run again after it.
      if (!outcome(3)?.is_error && !outcome(2)?.is_error) {
        expect(await fs.readFile(path.join(run.workspace, 'notes.md'), 'utf8')).toBe(`${run.name} final\n`);
      }
    }
    log(
      `${unknownOutcomes} bash calls reported as of unknown outcome (their attempt was cut off); took ${((Date.now() - began) / 1000).toFixed(0)} s`,
    );
  } finally {
    await fleet.stopAll();
  }
});

/** A run's result, waiting through server restarts (the client's own retries give up after seconds). */
async function resultOf(handle: WorkflowHandle, deadline: number): Promise<AgentRunResult> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), deadline - Date.now());
  try {
    for (;;) {
      try {
        return (await client.withAbortSignal(abort.signal, () => handle.result())) as AgentRunResult;
      } catch (err) {
        if (abort.signal.aborted) throw new Error('still running at the test deadline');
        if (err instanceof WorkflowFailedError) throw err;
        await sleep(1000);
      }
    }
  } finally {
    clearTimeout(timer);
  }
}

/** A run's activity events (type, attempt, worker, time): what to look at when a side effect ran twice. */
async function activityTrace(handle: WorkflowHandle): Promise<string> {
  const history = await handle.fetchHistory();
  const types = new Map<string, string>();
  const lines: string[] = [];
  for (const e of history.events ?? []) {
    const time = new Date(Number(e.eventTime?.seconds ?? 0) * 1000 + (e.eventTime?.nanos ?? 0) / 1e6)
      .toISOString()
      .slice(11, 23);
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (scheduled)
      types.set(
        String(e.eventId),
        `${scheduled.activityType?.name} ${scheduled.activityId} on ${scheduled.taskQueue?.name}`,
      );
    const started = e.activityTaskStartedEventAttributes;
    if (started)
      lines.push(
        `${time} started ${types.get(String(started.scheduledEventId))} attempt ${started.attempt} by ${started.identity}`,
      );
    const ended =
      e.activityTaskCompletedEventAttributes ??
      e.activityTaskFailedEventAttributes ??
      e.activityTaskTimedOutEventAttributes ??
      e.activityTaskCanceledEventAttributes;
    const timeout = e.activityTaskTimedOutEventAttributes?.failure?.timeoutFailureInfo?.timeoutType;
    if (ended) {
      const what = e.activityTaskCompletedEventAttributes
        ? 'completed'
        : timeout
          ? `timed out (type ${timeout})`
          : 'failed/canceled';
      lines.push(`${time} ${what} ${types.get(String(ended.scheduledEventId))}`);
    }
    if (e.workflowTaskFailedEventAttributes || e.workflowTaskTimedOutEventAttributes)
      lines.push(`${time} ${String(e.eventType)}`);
  }
  return lines.join('\n');
}

/** Indexes of the workers that poll their task queue (printed it) and are still alive. */
async function pollingWorkers(workers: WorkerProcess[]): Promise<number[]> {
  const polling: number[] = [];
  for (const [i, w] of workers.entries()) {
    const alive = w.child.exitCode === null && w.child.signalCode === null;
    if (
      alive &&
      (await w.ready(1).then(
        () => true,
        () => false,
      ))
    )
      polling.push(i);
  }
  return polling;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A small seeded PRNG (mulberry32), so a failing schedule can be replayed. */
function mulberry32(a: number): () => number {
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
