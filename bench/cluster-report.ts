import type { ClusterFigure } from './cluster-figure';
import { mib, table } from './stats';

/** Issue 12's cluster figures as text, with the command that reproduces them. */
export function formatClusterFigure(figure: ClusterFigure): string {
  const out = [`Cluster figures (issue 12) · ${figure.server} · reproduce: npm run bench -- --only=cluster`];
  const t = figure.throughput;
  if (t) {
    out.push(
      '',
      `(a) ${t.runs} concurrent runs × ${t.iterations} iterations at ${t.modelLatencyMs} ms model latency over ${t.workers} worker processes`,
      table([
        [
          'completed',
          'wall',
          'ideal',
          'wall / ideal',
          'iterations/s',
          'run p50 / p95',
          'peak RSS per worker',
          'worker CPU',
        ],
        [
          `${t.completed}/${t.runs}`,
          `${(t.wallMs / 1000).toFixed(1)} s`,
          `${(t.idealMs / 1000).toFixed(1)} s`,
          `${(t.wallMs / t.idealMs).toFixed(1)}×`,
          t.iterationsPerSecond.toFixed(0),
          `${(t.runDurationMs.median / 1000).toFixed(1)} / ${(t.runDurationMs.p95 / 1000).toFixed(1)} s`,
          t.workerPeakRssBytes.map((b) => mib(b)).join(', '),
          t.workerCpuMs.map((c) => `${(c / 1000).toFixed(0)} s`).join(', '),
        ],
      ]),
    );
  }
  out.push(
    '',
    '(b) history of one 60-iteration run reading a 5 KB file each turn (all executions of the chain)',
    table([
      ['server', 'workers', 'settings', 'outcome', 'executions', 'history', 'per iteration', 'vs 1 worker'],
      ...figure.history.map((r) => [
        r.server,
        String(r.workers),
        r.label,
        r.outcome,
        String(r.executions),
        mib(r.totalBytes),
        `${(r.bytesPerIteration / 1024).toFixed(1)} KiB`,
        r.vsOneWorker === undefined ? '' : `${r.vsOneWorker.toFixed(2)}×`,
      ]),
    ]),
  );
  return out.join('\n');
}
