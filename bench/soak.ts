/**
 * `npm run soak`: many concurrent runs under random worker SIGKILLs and injected provider faults,
 * on real worker processes (`durable-agent worker`, the production command) and a real Temporal
 * dev server, with the deterministic fake agent API of soak-api.ts. Reports:
 *
 * - runs completed with the right answer / total
 * - duplicated side effects: bash steps whose `start` line appears more than once (must be 0)
 * - repeated completed model calls: requests for a run's turn made after the call for that turn
 *   was recorded as completed in the run's history (must be 0)
 * - p50/p95 time from a killed worker's replacement being ready to the run making progress again
 *   (its next model request or tool start), over the runs that had a model call or a tool running
 *   on the killed worker; also from the kill itself
 *
 *   npm run soak                              50 runs, defaults below
 *   npm run soak -- --runs 20 --seed 42       flags: --runs N --workers N --steps N --kill-every D
 *                                             --restart-after D --fault-rate P --heartbeat S|default
 *                                             --seed N --timeout D (durations: 500ms, 3s, 2m)
 *
 * Defaults: 3 workers, 6 steps, a kill every ~2 s (uniform 0.5-1.5×), replacement 1 s after the
 * kill, fault rate 0.15, heartbeat timeouts 5 s (the run's `timeouts`; `default` keeps the product's
 * 60 s model / 30 s tool), timeout 10 m.
 *
 * It starts its own in-memory dev server unless TEMPORAL_ADDRESS (or a profile) names one. Exits 1
 * when a run did not complete right, a side effect was duplicated or a completed model call was repeated.
 */
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, openSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { devServerArgs, freePort, waitUntilReachable } from '../src/server/dev-server';
import { findTemporalCli } from '../src/server/temporal-cli';
import { WORKFLOW_TYPE, type AgentRunInput, type AgentRunResult } from '../src/shared';
import { parseDurationSetting } from '../src/worker';
import { benchConnectionFor, connectBenchClient, externalServer } from './server';
import { FAULT_KINDS, expectedAnswer, startSoakApi, type ApiRequest } from './soak-api';
import { percentile, table } from './stats';
import { baseActivityName } from '../src/shared/activity-names';

const BIN = path.resolve(__dirname, '..', '..', 'bin', 'durable-agent.js');
const log = (line: string) => process.stderr.write(`[soak] ${line}\n`);

interface Options {
  runs: number;
  workers: number;
  steps: number;
  killEveryMs: number;
  restartAfterMs: number;
  faultRate: number;
  heartbeatSeconds: number;
  seed: number;
  timeoutMs: number;
}

function options(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      runs: { type: 'string', default: '50' },
      workers: { type: 'string', default: '3' },
      steps: { type: 'string', default: '6' },
      'kill-every': { type: 'string', default: '2s' },
      'restart-after': { type: 'string', default: '1s' },
      'fault-rate': { type: 'string', default: '0.15' },
      heartbeat: { type: 'string', default: '5' },
      seed: { type: 'string' },
      timeout: { type: 'string', default: '10m' },
    },
  });
  const int = (name: string, raw: string | undefined, min: number, max: number): number => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new Error(`--${name} must be a whole number from ${min} to ${max}`);
    return n;
  };
  const duration = (name: string, raw: string | undefined, min: number, max: number) =>
    parseDurationSetting(`--${name}`, raw, { min, max }) ?? min;
  const faultRate = Number(values['fault-rate']);
  if (!(faultRate >= 0 && faultRate <= 0.5)) throw new Error('--fault-rate must be a probability from 0 to 0.5');
  return {
    runs: int('runs', values.runs, 1, 2000),
    workers: int('workers', values.workers, 1, 20),
    steps: int('steps', values.steps, 1, 20),
    killEveryMs: duration('kill-every', values['kill-every'], 100, 600_000),
    restartAfterMs: duration('restart-after', values['restart-after'], 0, 600_000),
    faultRate,
    heartbeatSeconds: values.heartbeat === 'default' ? 0 : int('heartbeat', values.heartbeat, 2, 600),
    seed: values.seed !== undefined ? int('seed', values.seed, 0, 2 ** 31) : Math.floor(Math.random() * 1e9),
    timeoutMs: duration('timeout', values.timeout, 10_000, 6 * 3_600_000),
  };
}

/** mulberry32: a small seeded PRNG, so a seed reproduces the faults and the kill schedule. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** One `durable-agent worker` process. */
class SoakWorker {
  readonly child: ChildProcess;
  readonly ready: Promise<number>;
  readonly exited: Promise<number>;

  constructor(
    readonly id: string,
    env: NodeJS.ProcessEnv,
    logDir: string,
  ) {
    this.child = spawn(process.execPath, [BIN, 'worker'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = createWriteStream(path.join(logDir, `worker-${id}.log`));
    this.child.stdout?.pipe(out);
    this.child.stderr?.pipe(out);
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve(Date.now())));
    this.ready = new Promise((resolve, reject) => {
      let seen = '';
      this.child.stdout?.on('data', (c: Buffer) => {
        seen += c.toString();
        if (/^Worker polling task queue/m.test(seen)) resolve(Date.now());
      });
      void this.exited.then(() => reject(new Error(`worker ${id} exited before it was ready`)));
    });
    this.ready.catch(() => undefined);
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }
}

interface Kill {
  victim: string;
  killAt: number;
  replacement: string;
  readyAt?: number;
}

interface EffectLine {
  kind: 'start' | 'end';
  run: string;
  step: number;
  worker: string;
  at: number;
}

async function main(): Promise<number> {
  const opts = options(process.argv.slice(2));
  const random = seeded(opts.seed);
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'durable-agent-soak-'));
  const logDir = path.join(workDir, 'logs');
  await fs.mkdir(logDir, { recursive: true });
  log(`work dir ${workDir} (worker logs in logs/)`);

  let server: ChildProcess | undefined;
  // A server the environment names (address or profile, with TLS or an API key), else one of our own.
  const external = externalServer();
  let address = external?.address;
  if (!address) {
    const cli = await findTemporalCli({ log });
    address = `127.0.0.1:${await freePort()}`;
    const out = openSync(path.join(logDir, 'temporal-server.log'), 'a');
    server = spawn(cli, devServerArgs({ address, headless: true }), { stdio: ['ignore', out, out] });
    await waitUntilReachable(address, 60_000, server);
    log(`started a Temporal dev server at ${address}`);
  } else {
    log(`using the ${external?.description}`);
  }

  const api = await startSoakApi({ steps: opts.steps, faultRate: opts.faultRate, random });
  const client = await connectBenchClient({ connection: external?.connection ?? benchConnectionFor(address) });
  const connection = client.connection;
  const taskQueue = `soak-${stamp}-${opts.seed}`;

  const generation = new Map<number, number>();
  const slots: SoakWorker[] = [];
  const spawnWorker = (slot: number): SoakWorker => {
    const gen = (generation.get(slot) ?? 0) + 1;
    generation.set(slot, gen);
    const id = `w${slot}.${gen}`;
    const worker = new SoakWorker(
      id,
      {
        ...process.env,
        TEMPORAL_ADDRESS: address,
        TEMPORAL_TASK_QUEUE: taskQueue,
        ANTHROPIC_BASE_URL: `${api.url}/w/${id}`,
        ANTHROPIC_API_KEY: 'sk-soak',
        DA_WORKER_ID: id,
        DURABLE_AGENT_MODEL_IDLE_TIMEOUT: '3s',
        DURABLE_AGENT_SHUTDOWN_GRACE: '2s',
      },
      logDir,
    );
    slots[slot] = worker;
    return worker;
  };
  for (let slot = 0; slot < opts.workers; slot++) spawnWorker(slot);
  await Promise.all(slots.map((w) => w.ready));
  log(`${opts.workers} workers ready on task queue ${taskQueue}`);

  // Runs
  const runs = Array.from({ length: opts.runs }, (_, i) => `soak-${stamp}-${String(i + 1).padStart(3, '0')}`);
  const finished = new Map<string, { result?: AgentRunResult; error?: string; at: number }>();
  const startedAt = Date.now();
  const handles = await Promise.all(
    runs.map(async (run) => {
      const workspace = path.join(workDir, 'ws', run);
      await fs.mkdir(workspace, { recursive: true });
      const input: AgentRunInput = {
        prompt: `soak run ${run}: run the steps, then check effects.log`,
        model: 'claude-sonnet-5-5',
        workspace,
        tools: ['bash', 'read_file'],
        maxIterations: 4 * opts.steps + 10,
        ...(opts.heartbeatSeconds
          ? { timeouts: { modelHeartbeatSeconds: opts.heartbeatSeconds, toolHeartbeatSeconds: opts.heartbeatSeconds } }
          : {}),
      };
      const handle = await client.workflow.start(WORKFLOW_TYPE, { taskQueue, workflowId: run, args: [input] });
      void handle.result().then(
        (result: AgentRunResult) => finished.set(run, { result, at: Date.now() }),
        (err: Error) => finished.set(run, { error: err.message, at: Date.now() }),
      );
      return handle;
    }),
  );
  log(`started ${runs.length} runs`);
  const deadline = startedAt + opts.timeoutMs;
  const allDone = () => finished.size === runs.length || Date.now() > deadline;

  // Chaos: every ~killEvery, SIGKILL a random running worker; its replacement starts restartAfter
  // later. Kills do not wait for replacements, so at times every worker may be down.
  const kills: Kill[] = [];
  const restarts: Promise<void>[] = [];
  const chaos = (async () => {
    while (!allDone()) {
      await sleep(opts.killEveryMs * (0.5 + random()));
      if (allDone()) break;
      const live = slots.map((w, slot) => ({ w, slot })).filter(({ w }) => w.alive);
      const pick = live[Math.floor(random() * live.length)];
      if (!pick) continue;
      pick.w.child.kill('SIGKILL');
      const kill: Kill = { victim: pick.w.id, killAt: Date.now(), replacement: '' };
      kills.push(kill);
      restarts.push(
        (async () => {
          await pick.w.exited;
          await sleep(opts.restartAfterMs);
          const next = spawnWorker(pick.slot);
          kill.replacement = next.id;
          try {
            kill.readyAt = await next.ready;
          } catch {
            // killed again before it was ready: no restart time for this kill
          }
        })(),
      );
    }
    await Promise.all(restarts);
  })();

  const progress = setInterval(() => {
    log(`${finished.size}/${runs.length} runs finished, ${kills.length} kills, ${api.requests.length} model requests`);
  }, 10_000);
  while (!allDone()) await sleep(200);
  clearInterval(progress);
  await chaos;
  const wallMs = Date.now() - startedAt;
  log(`runs finished after ${(wallMs / 1000).toFixed(1)} s; stopping workers`);
  await Promise.all(
    slots.map(async (w) => {
      if (!w.alive) return;
      w.child.kill('SIGTERM');
      await Promise.race([w.exited, sleep(15_000).then(() => w.child.kill('SIGKILL'))]);
    }),
  );

  // Analysis
  const effects = new Map<string, EffectLine[]>();
  for (const run of runs) effects.set(run, await readEffects(path.join(workDir, 'ws', run, 'effects.log')));
  const completedRight = runs.filter((run) => {
    const r = finished.get(run)?.result;
    return r?.exitReason === 'completed' && r.finalText === expectedAnswer(run, opts.steps);
  });
  let duplicated = 0;
  for (const lines of effects.values()) {
    const starts = new Map<string, number>();
    for (const l of lines)
      if (l.kind === 'start') starts.set(`${l.run}/${l.step}`, (starts.get(`${l.run}/${l.step}`) ?? 0) + 1);
    for (const n of starts.values()) duplicated += Math.max(0, n - 1);
  }
  const history = await historyFacts(
    client,
    handles.map((h) => h.workflowId),
  );
  const repeats = repeatedCompletedCalls(api.requests, history.completedMessageIds);
  const recovery = recoveryTimes(kills, api.requests, effects, finished);

  const faults = new Map<string, number>();
  for (const r of api.requests) if (r.outcome !== 'ok') faults.set(r.outcome, (faults.get(r.outcome) ?? 0) + 1);
  const faultTotal = [...faults.values()].reduce((a, b) => a + b, 0);
  const lostResponses = api.requests.filter(
    (r) => r.outcome === 'ok' && r.finishedAt !== undefined && !history.completedMessageIds.has(r.messageId ?? ''),
  ).length;
  const seconds = (ms: number) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : 'n/a');
  const dist = (values: number[]) =>
    values.length
      ? `p50 ${seconds(percentile(values, 50))} · p95 ${seconds(percentile(values, 95))} · max ${seconds(Math.max(...values))}`
      : 'n/a';
  const command =
    `npm run soak -- --runs ${opts.runs} --workers ${opts.workers} --steps ${opts.steps} ` +
    `--kill-every ${opts.killEveryMs}ms --restart-after ${opts.restartAfterMs}ms --fault-rate ${opts.faultRate} ` +
    `--heartbeat ${opts.heartbeatSeconds || 'default'} --seed ${opts.seed}`;

  const rows: string[][] = [
    ['figure', 'value'],
    ['runs completed with the right answer', `${completedRight.length} / ${runs.length}`],
    ['duplicated side effects (bash steps started twice)', String(duplicated)],
    ['repeated completed model calls', String(repeats)],
    ['worker SIGKILLs', String(kills.length)],
    ['runs with a call or tool in flight on a killed worker', String(recovery.fromRestart.length)],
    ['replacement worker ready → run progresses', dist(recovery.fromRestart)],
    ['SIGKILL → run progresses', dist(recovery.fromKill)],
    ['killed worker → replacement ready', dist(kills.filter((k) => k.readyAt).map((k) => k.readyAt! - k.killAt))],
    [
      'provider faults injected',
      `${faultTotal} of ${api.requests.length} model requests (${FAULT_KINDS.filter((k) => faults.get(k))
        .map((k) => `${k}: ${faults.get(k)}`)
        .join(', ')})`,
    ],
    ['mutating steps answered "outcome unknown"', String(history.unknownOutcomes)],
    ['model answers lost with a killed worker (legitimately asked again)', String(lostResponses)],
    ['wall time', seconds(wallMs)],
  ];
  const settings =
    `${opts.runs} runs × ${opts.steps} bash steps (+ a read and the answer), ${opts.workers} worker processes, ` +
    `a SIGKILL every ~${seconds(opts.killEveryMs)} (replacement after ${seconds(opts.restartAfterMs)}), ` +
    `fault rate ${opts.faultRate}, heartbeat timeouts ` +
    `${opts.heartbeatSeconds ? `${opts.heartbeatSeconds} s` : 'the defaults (model 60 s, tool 30 s)'}, seed ${opts.seed}`;
  process.stdout.write(`\nSoak: ${settings}\n\n${table(rows)}\n\nReproduce: ${command}\n`);
  const failures = runs.filter((run) => !completedRight.includes(run));
  for (const run of failures.slice(0, 10)) {
    const f = finished.get(run);
    process.stdout.write(
      `  not right: ${run}: ${f?.result ? `${f.result.exitReason}: ${f.result.finalText.slice(0, 120)}` : (f?.error ?? 'unfinished')}\n`,
    );
  }

  const resultsDir = path.resolve(__dirname, '..', '..', 'bench', 'results');
  await fs.mkdir(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `soak-${stamp}.json`);
  await fs.writeFile(
    file,
    JSON.stringify(
      {
        options: opts,
        command,
        figures: Object.fromEntries(rows.slice(1)),
        kills,
        recovery,
        faults: Object.fromEntries(faults),
        notRight: failures.map((run) => ({
          run,
          finished: finished.get(run),
          requests: api.requests.filter((r) => r.run === run),
          effects: effects.get(run),
        })),
      },
      null,
      2,
    ),
  );
  process.stdout.write(`Details: ${file}\n`);

  await connection.close();
  await api.close();
  if (server) {
    server.kill('SIGTERM');
    await new Promise((r) => server!.once('exit', r));
  }
  return failures.length === 0 && duplicated === 0 && repeats === 0 ? 0 : 1;
}

async function readEffects(file: string): Promise<EffectLine[]> {
  let text = '';
  try {
    text = await fs.readFile(file, 'utf8');
  } catch {
    return [];
  }
  const lines: EffectLine[] = [];
  for (const line of text.split('\n')) {
    const m = /^(start|end) (\S+) (\d+) (\S+) (\d+)$/.exec(line.trim());
    if (m)
      lines.push({ kind: m[1] as 'start' | 'end', run: m[2]!, step: Number(m[3]), worker: m[4]!, at: Number(m[5]) });
  }
  return lines;
}

/** What the runs' histories say: the model answers recorded as completed, and unknown outcomes reported. */
async function historyFacts(
  client: Client,
  workflowIds: string[],
): Promise<{ completedMessageIds: Set<string>; unknownOutcomes: number }> {
  const completedMessageIds = new Set<string>();
  let unknownOutcomes = 0;
  for (const id of workflowIds) {
    const history = await client.workflow.getHandle(id).fetchHistory();
    const types = new Map<string, string>();
    for (const event of history.events ?? []) {
      const scheduled = event.activityTaskScheduledEventAttributes;
      if (scheduled?.activityType?.name)
        types.set(String(event.eventId), baseActivityName(scheduled.activityType.name));
      const completed = event.activityTaskCompletedEventAttributes;
      const payload = completed?.result?.payloads?.[0];
      if (!completed || !payload) continue;
      const type = types.get(String(completed.scheduledEventId));
      const value = defaultPayloadConverter.fromPayload<Record<string, unknown>>(payload);
      // A run's first call (firstModelCall) holds its answer in `response`.
      const answer = type === 'firstModelCall' ? (value.response as Record<string, unknown> | undefined) : value;
      if ((type === 'callModel' || type === 'firstModelCall') && typeof answer?.id === 'string')
        completedMessageIds.add(answer.id);
      if (
        type === 'runTool' &&
        value.isError === true &&
        /outcome of this \w+ call is unknown/.test(String(value.content))
      ) {
        unknownOutcomes += 1;
      }
    }
  }
  return { completedMessageIds, unknownOutcomes };
}

/** Requests for a run's turn that arrived after the request whose answer history recorded for that turn. */
function repeatedCompletedCalls(requests: ApiRequest[], completed: Set<string>): number {
  const completedAt = new Map<string, number>();
  for (const r of requests)
    if (r.messageId && completed.has(r.messageId)) completedAt.set(`${r.run}/${r.turn}`, r.receivedAt);
  return requests.filter((r) => {
    const at = completedAt.get(`${r.run}/${r.turn}`);
    return at !== undefined && r.receivedAt > at;
  }).length;
}

/**
 * For each kill, the runs that had a model call (request open at the kill) or a tool (a step that
 * started on the victim and had not ended before the kill) in flight on the killed worker, and the
 * time to their next sign of progress: a model request, a step starting, or the run ending.
 */
function recoveryTimes(
  kills: Kill[],
  requests: ApiRequest[],
  effects: Map<string, EffectLine[]>,
  finished: Map<string, { at: number }>,
): { fromRestart: number[]; fromKill: number[] } {
  const fromRestart: number[] = [];
  const fromKill: number[] = [];
  for (const kill of kills) {
    const k = kill.killAt;
    const hit = new Set<string>();
    for (const r of requests) {
      if (r.worker === kill.victim && r.receivedAt < k && (r.closedAt === undefined || r.closedAt >= k)) hit.add(r.run);
    }
    for (const [run, lines] of effects) {
      for (const start of lines) {
        if (start.kind !== 'start' || start.worker !== kill.victim || start.at >= k) continue;
        const ended = lines.some(
          (l) => l.kind === 'end' && l.step === start.step && l.worker === kill.victim && l.at < k,
        );
        if (!ended) hit.add(run);
      }
    }
    for (const run of hit) {
      const times = [
        ...requests.filter((r) => r.run === run && r.receivedAt > k).map((r) => r.receivedAt),
        ...(effects.get(run) ?? []).filter((l) => l.kind === 'start' && l.at > k).map((l) => l.at),
        ...[finished.get(run)?.at ?? Infinity].filter((t) => t > k),
      ];
      const next = Math.min(...times);
      if (!Number.isFinite(next)) continue;
      fromKill.push(next - k);
      if (kill.readyAt !== undefined) fromRestart.push(Math.max(0, next - kill.readyAt));
    }
  }
  return { fromRestart, fromKill };
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`soak failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(2);
  },
);
