import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ACTIONS_COMMAND, formatActions, measureActions } from './actions-figure';
import { startMetricsServer } from './actions-metrics';
import { measureCluster, type ClusterFigure } from './cluster-figure';
import { formatClusterFigure } from './cluster-report';
import type { BenchContext } from './context';
import { historyCases, measureHistory, type HistoryFigure } from './history-figure';
import { measureOverhead } from './overhead-figure';
import { measureReplay, type ReplayTarget } from './replay-figure';
import { formatReport, type BenchResults } from './report';
import {
  bundleBenchWorkflows,
  connectBenchClient,
  connectBenchWorker,
  externalServer,
  makeWorkDir,
  startBenchServer,
  type BenchServer,
} from './server';
import { formatMcpFigure, measureMcp, type McpFigure } from './mcp-figure';
import { formatSubagentFigure, measureSubagents, type SubagentFigure } from './subagents';
import { formatIdleFigure, measureIdle, type IdleFigure } from './idle-figure';
import { measureSandbox } from './sandbox-figure';
import { measureSearch } from './search-figure';
import { formatStream, measureStream } from './stream-figure';
import {
  measureThroughput,
  throughputRounds,
  throughputShape,
  throughputSideBySide,
  throughputWarmup,
} from './throughput-figure';
import { installQuietRuntime } from './workers';

/**
 * `npm run bench`: the figures of issue 4 (history, overhead, throughput, replay) and issue 11
 * (sandbox cost per bash call, grep/glob engine), ours (agentWorkflow on the production worker) side by side
 * with a naive baseline, on a local Temporal dev server with the scripted model.
 *
 *   npm run bench                         all six figures (about 8 minutes on 2 CPUs)
 *   npm run bench -- --quick              smaller runs, a smoke test (about 2 minutes)
 *   npm run bench -- --only=overhead,replay
 *   npm run bench -- --only=mcp           a durable MCP call against a direct SDK client call (about 30 s)
 *   npm run bench -- --only=subagents     10 parallel subagents against 1, and history bytes per subagent
 *   npm run bench -- --only=actions       billable actions by type (the server's `action` metric): loops, one
 *                                         MCP call, a streamed call followed live, ours and naive, and how late
 *                                         an interrupt stops that call (about 2½ minutes)
 *   npm run bench -- --only=idle          1,000 waiting sessions on one worker: its memory against its
 *                                         workflow cache bound (not in the default set; a few minutes)
 *   npm run bench -- --only=cluster       issue 12's figures on a real cluster (Temporal server from Go on
 *                                         PostgreSQL, TLS, 3 worker processes): not in the default set, as
 *                                         it needs PostgreSQL and the Go-built server (.ci/run) and takes
 *                                         about 10 minutes on 2 CPUs
 *   npm run bench -- --out=FILE           where the JSON goes (default bench/results/bench-<time>.json)
 *
 * TEMPORAL_ADDRESS points it at an existing server instead of starting one. The throughput figure takes
 * BENCH_THROUGHPUT (variants), BENCH_THROUGHPUT_SHAPE, BENCH_THROUGHPUT_ROUNDS,
 * BENCH_THROUGHPUT_SIDE_BY_SIDE and BENCH_THROUGHPUT_WARMUP (bench/throughput-figure.ts).
 */
const FIGURES = [
  'history',
  'overhead',
  'throughput',
  'replay',
  'sandbox',
  'search',
  'stream',
  'mcp',
  'subagents',
  'actions',
  'idle',
  'cluster',
] as const;
type Figure = (typeof FIGURES)[number];
/** What `npm run bench` runs without --only: everything but the cluster, stream, subagents, actions and idle (see above). */
const DEFAULT_FIGURES: readonly Figure[] = FIGURES.filter(
  (f) => !['cluster', 'stream', 'subagents', 'actions', 'idle'].includes(f),
);

interface Args {
  only: Set<Figure>;
  quick: boolean;
  out?: string;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { only: new Set(DEFAULT_FIGURES), quick: false };
  for (const arg of argv) {
    const [flag, value] = arg.split('=', 2);
    if (flag === '--quick') args.quick = true;
    else if (flag === '--out' && value) args.out = value;
    else if (flag === '--only' && value) {
      const wanted = value.split(',').map((s) => s.trim());
      const unknown = wanted.filter((w) => !(FIGURES as readonly string[]).includes(w));
      if (unknown.length) throw new Error(`Unknown figure(s) ${unknown.join(', ')}; choose from ${FIGURES.join(', ')}`);
      args.only = new Set(wanted as Figure[]);
    } else {
      throw new Error(
        `Unknown argument '${arg}'. Usage: npm run bench -- [--quick] [--only=${FIGURES.join(',')}] [--out=FILE]`,
      );
    }
  }
  return args;
}

const repoRoot = path.resolve(__dirname, '..', '..');
const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  // A bad shape is refused before anything starts.
  if (args.only.has('throughput')) {
    throughputShape();
    throughputRounds();
    throughputSideBySide();
    throughputWarmup(args.quick);
  }
  const began = performance.now();
  installQuietRuntime();
  const workDir = await makeWorkDir();
  const cleanups: Array<() => Promise<void>> = [() => fs.rm(workDir, { recursive: true, force: true })];
  try {
    const workspace = path.join(workDir, 'workspace');
    await fs.mkdir(workspace);
    log('bundling the workflows (agentWorkflow + naive baseline)…');
    const bundlePath = await bundleBenchWorkflows(workDir);
    const open = async (server: BenchServer): Promise<BenchContext> => {
      cleanups.unshift(() => server.stop());
      const ctx = await connectContext(server, { bundlePath, workspace, quick: args.quick, log });
      cleanups.unshift(ctx.close);
      log(`server: ${server.description}`);
      return ctx;
    };
    const results: BenchResults & {
      cluster?: ClusterFigure;
      mcp?: McpFigure;
      subagents?: SubagentFigure;
      idle?: IdleFigure;
    } = {
      meta: describeRun(args, 'none'),
    };
    // Issue 12: on a cluster of its own (and the dev server it compares with); first, on a quiet machine.
    if (args.only.has('cluster')) {
      results.cluster = await measureCluster({ bundlePath, workspace, workDir, quick: args.quick, log });
      results.meta.server = results.cluster.server;
    }
    const external = externalServer();
    const needsServer = ['history', 'overhead', 'throughput', 'replay', 'stream', 'mcp', 'idle'].some((f) =>
      args.only.has(f as Figure),
    );
    const ctx = needsServer ? await open(external ?? (await startBenchServer('embedded', workDir, log))) : undefined;
    if (ctx) results.meta.server = ctx.server;

    let history: HistoryFigure | undefined;
    if (ctx && args.only.has('history')) {
      history = await measureHistory(ctx, historyCases(args.quick));
      results.history = history.rows;
    }
    if (ctx && args.only.has('overhead')) {
      results.overhead = [{ server: ctx.server, ...(await measureOverhead(ctx)) }];
      // The same figure on the dev server's stock settings, where its transfer-queue poll limit sets the pace.
      if (!external) {
        const stock = await open(await startBenchServer('stock', workDir, log));
        results.overhead.push({ server: stock.server, ...(await measureOverhead(stock)) });
      }
    }
    if (ctx && args.only.has('throughput')) results.throughput = await measureThroughput(ctx);
    if (ctx && args.only.has('replay')) {
      // Replay needs a 200-iteration history; without figure 1 in this run, make one.
      history ??= await measureHistory(ctx, [{ iterations: args.quick ? 100 : 200, outputBytes: 8 * 1024 }], ['ours']);
      results.replay = await measureReplay(ctx, replayTargets(history));
    }

    // Tool costs (issue 11): no Temporal server involved.
    if (args.only.has('sandbox')) results.sandbox = await measureSandbox(args.quick ? 40 : 200);
    if (args.only.has('search')) results.search = await measureSearch();
    // Live output (issue 13): what a streamed answer adds to history, and how fresh the live text is.
    if (ctx && args.only.has('stream')) process.stdout.write(`${formatStream(await measureStream(ctx))}\n`);
    // MCP tools (issue 21): a durable MCP call against a direct SDK client call on the same server.
    if (ctx && args.only.has('mcp')) {
      results.mcp = await measureMcp(ctx);
      process.stdout.write(`${formatMcpFigure(results.mcp).join('\n')}\n`);
    }
    // Subagents (issue 22): parallel task calls, and what each adds to its parent's history.
    if (args.only.has('subagents')) {
      // On a dev server of its own with metrics: the figure counts billable actions too.
      const metrics = await startMetricsServer(workDir, log);
      results.subagents = await measureSubagents(await open(metrics), metrics.metricsUrl);
      process.stdout.write(`${formatSubagentFigure(results.subagents).join('\n')}\n`);
    }

    // Billable actions (issue 19): on a dev server of its own whose counters nothing else moves.
    if (args.only.has('actions')) {
      const metrics = await startMetricsServer(workDir, log);
      const actionsCtx = await open(metrics);
      const figure = await measureActions(actionsCtx, metrics.metricsUrl);
      (results as { actions?: unknown }).actions = { ...figure, command: ACTIONS_COMMAND };
      process.stdout.write(`${formatActions(figure)}\n`);
    }

    // Idle sessions (issue 19): what waiting sessions cost a worker, against its workflow cache bound.
    if (ctx && args.only.has('idle')) {
      results.idle = await measureIdle(ctx);
      process.stdout.write(`${formatIdleFigure(results.idle).join('\n')}\n`);
    }

    results.meta.totalSeconds = Math.round((performance.now() - began) / 1000);
    results.meta.loadAverageAtEnd = loadAverage();
    process.stdout.write(`\n${formatReport(results)}\n`);
    if (results.cluster) process.stdout.write(`\n${formatClusterFigure(results.cluster)}\n`);
    const out =
      args.out ?? path.join(repoRoot, 'bench', 'results', `bench-${results.meta.date.replace(/[:.]/g, '-')}.json`);
    await fs.mkdir(path.dirname(out), { recursive: true });
    await fs.writeFile(out, JSON.stringify(results, null, 2) + '\n');
    process.stdout.write(`\nJSON: ${path.relative(process.cwd(), out) || out} · took ${results.meta.totalSeconds} s\n`);
  } finally {
    for (const cleanup of cleanups) await cleanup().catch((err) => log(`cleanup: ${String(err)}`));
  }
}

/** Worker and client connections to one server, and what the figures need besides. */
async function connectContext(
  server: BenchServer,
  shared: Pick<BenchContext, 'bundlePath' | 'workspace' | 'quick' | 'log'>,
): Promise<BenchContext & { close(): Promise<void> }> {
  const connection = await connectBenchWorker(server);
  // Naive histories run to tens of MB: pages of them exceed gRPC's default 4 MB message limit.
  const client = await connectBenchClient(server, { 'grpc.max_receive_message_length': 256 * 1024 * 1024 });
  const clientConnection = client.connection;
  return {
    ...shared,
    client,
    connection,
    address: server.address,
    server: server.description,
    serverCpuMs: () => server.cpuMs(),
    async close() {
      await clientConnection.close();
      await connection.close();
    },
  };
}

/** Ours at 200 iterations and beyond (the longest, in a quick run), and the longest naive run that completed. */
function replayTargets(history: HistoryFigure): ReplayTarget[] {
  const byLength = (subject: 'ours' | 'naive') =>
    history.completed.filter((c) => c.row.subject === subject).sort((a, b) => a.row.iterations - b.row.iterations);
  const ours = byLength('ours');
  const oursLong = ours.filter((c) => c.row.iterations >= 200);
  return [...(oursLong.length ? oursLong : ours.slice(-1)), ...byLength('naive').slice(-1)].map(target);
}

function target(c: HistoryFigure['completed'][number]): ReplayTarget {
  const { row } = c;
  return { label: `${row.subject} · ${row.iterations} × ${row.outputBytes / 1024} KiB`, ...c };
}

/** The throughput figure's variables, when set, so the printed command reproduces the run. */
function shapeEnv(): string {
  const variants = process.env.BENCH_THROUGHPUT?.trim();
  const shape = process.env.BENCH_THROUGHPUT_SHAPE?.trim() ? throughputShape() : undefined;
  const rounds = throughputRounds();
  return (
    (shape ? `BENCH_THROUGHPUT_SHAPE=${shape.iterations}x${shape.outputBytes} ` : '') +
    (variants ? `BENCH_THROUGHPUT=${variants.replace(/\s+/g, '')} ` : '') +
    (rounds > 1 ? `BENCH_THROUGHPUT_ROUNDS=${rounds} ` : '') +
    (throughputSideBySide() ? 'BENCH_THROUGHPUT_SIDE_BY_SIDE=1 ' : '') +
    (process.env.BENCH_THROUGHPUT_WARMUP?.trim() ? `BENCH_THROUGHPUT_WARMUP=${throughputWarmup(false)} ` : '')
  );
}

function describeRun(args: Args, server: string): BenchResults['meta'] {
  const cpus = os.cpus();
  const flags = [
    ...(args.quick ? ['--quick'] : []),
    ...(!sameSet(args.only, DEFAULT_FIGURES) ? [`--only=${[...args.only].join(',')}`] : []),
  ];
  return {
    date: new Date().toISOString(),
    commit: gitDescription(),
    node: process.version,
    machine: `${os.platform()} ${os.arch()} · ${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}`,
    server,
    command: `${shapeEnv()}npm run bench${flags.length ? ` -- ${flags.join(' ')}` : ''}`,
    loadAverageAtStart: loadAverage(),
  };
}

function sameSet(a: ReadonlySet<Figure>, b: readonly Figure[]): boolean {
  return a.size === b.length && b.every((f) => a.has(f));
}

/** 1-minute load average: other work on the machine shows up in every timing figure. */
function loadAverage(): number {
  return Math.round((os.loadavg()[0] ?? 0) * 100) / 100;
}

function gitDescription(): string {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot }).toString().trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: repoRoot }).toString().trim();
    return dirty ? `${sha} + uncommitted changes in src/` : sha;
  } catch {
    return 'unknown';
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
