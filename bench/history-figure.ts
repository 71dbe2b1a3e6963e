import { uniqueName, settle, startRun, type BenchContext } from './context';
import { measureChain, type ChainSize, type History } from './history';
import { createBenchModel } from './scenario';
import { createBenchWorker, withWorkers, type Subject } from './workers';

export interface HistoryCase {
  iterations: number;
  outputBytes: number;
}

export interface HistoryRow extends HistoryCase {
  subject: Subject;
  /** From start to the end of the chain (or to its failure). */
  wallMs: number;
  /** The run returned a result; false for a run the server terminated or that failed. */
  ok: boolean;
  error?: string;
  size: ChainSize;
}

export interface HistoryFigure {
  rows: HistoryRow[];
  /** The histories of the runs that completed, for the replay figure (failed ones are dropped). */
  completed: Array<{ row: HistoryRow; histories: History[] }>;
}

/**
 * The cases (8 KiB outputs at 50, 100, 200 iterations), then two past the point where the
 * server suggests continue-as-new (about 4,096 events): 400 with 8 KiB outputs and 500 with 1 KiB.
 */
export function historyCases(quick: boolean): HistoryCase[] {
  const kb8 = [50, 100, 200, 400].map((iterations) => ({ iterations, outputBytes: 8 * 1024 }));
  return quick ? kb8.slice(0, 2) : [...kb8, { iterations: 500, outputBytes: 1024 }];
}

/**
 * Figure 1: history events and bytes after N iterations, ours vs naive. Every case of both subjects
 * runs at once; a naive run the server terminates at its history limit is a data point.
 */
export async function measureHistory(
  ctx: BenchContext,
  cases: HistoryCase[],
  subjects: Subject[] = ['ours', 'naive'],
): Promise<HistoryFigure> {
  const calls = cases.reduce((n, c) => n + c.iterations + 1, 0) + 16;
  const queues = { ours: uniqueName('history-ours'), naive: uniqueName('history-naive') };
  const workers = [];
  for (const subject of subjects) {
    workers.push(
      await createBenchWorker({
        connection: ctx.connection,
        taskQueue: queues[subject],
        bundlePath: ctx.bundlePath,
        subject,
        model: createBenchModel({ calls }),
        workspace: ctx.workspace,
        eager: true,
      }),
    );
  }
  const timeoutMs = (ctx.quick ? 120 : 300) * 1000;
  const measured = await withWorkers(workers, () =>
    Promise.all(
      subjects.flatMap((subject) =>
        cases.map(async (c) => {
          const started = performance.now();
          const handle = await startRun(ctx.client, { subject, taskQueue: queues[subject], ...c });
          const settled = await settle(handle, timeoutMs);
          const wallMs = performance.now() - started;
          const { size, histories } = await measureChain(ctx.client, handle.workflowId, handle.firstExecutionRunId);
          ctx.log(
            `history: ${subject} ${c.iterations} × ${c.outputBytes} B → ${size.outcome}, ` +
              `${size.totalEvents} events, ${size.totalBytes} B (${(wallMs / 1000).toFixed(1)} s)`,
          );
          const row: HistoryRow = {
            subject,
            ...c,
            wallMs,
            ok: settled.ok,
            ...(settled.error ? { error: settled.error } : {}),
            size,
          };
          return { row, histories };
        }),
      ),
    ),
  );

  return { rows: measured.map((m) => m.row), completed: measured.filter((m) => m.row.ok) };
}
