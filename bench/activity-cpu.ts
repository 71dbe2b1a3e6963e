import { Context } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { ActivityExecuteInput, Next, ActivityInboundCallsInterceptor } from '@temporalio/worker';
import { createActivities } from '../src/activities';
import type { ModelProvider } from '../src/models/types';
import { baseActivityName } from '../src/shared/activity-names';
import type { ModelResponse } from '../src/shared/messages';
import { uniqueName } from './context';
import { createNaiveActivities } from './naive-activities';
import { createBenchModel, createBenchRegistry } from './scenario';
import { bundleBenchWorkflows, connectBenchClient, connectBenchWorker, makeWorkDir, startBenchServer } from './server';
import { median } from './stats';
import { installQuietRuntime, runOnce, type Subject } from './workers';

const ITERATIONS = 10;
const OUTPUT_BYTES = 1024;
/** Runs in flight at once in the throughput figure: each replayed run gets one of as many conversation ids. */
const CONCURRENT = 200;

interface Call {
  type: string;
  isLocal: boolean;
  /** The call's arguments as JSON, with the run's conversation id in place of `{{run}}`. */
  args: string;
}

interface Recording {
  calls: Call[];
  /** The model's responses, in the order it gave them. */
  responses: ModelResponse[];
}

/**
 * `npm run build && node dist/bench/activity-cpu.js [runs=2000] [rounds=3]`: what the activity side
 * of one run costs on a worker's main thread, ours against the naive loop, without a server. It
 * records one run of each in the throughput shape (10 iterations, 1 KiB tool output, a
 * regular-activity tool) on a live worker, keeping each activity call's arguments and each model
 * response; then, in this process, it calls the same activities with the same arguments `runs` times
 * per round through the SDK's MockActivityEnvironment (the activity context and its
 * AsyncLocalStorage, as on a worker), the model giving the recorded responses, and prints the
 * process's CPU per run. Each replayed run uses one of 200 conversation ids in turn, as 200
 * concurrent runs share a worker's conversation cache.
 *
 * It leaves out what both loops pay alike on a worker (the SDK's task handling and payload
 * conversion), so it shows ours' own activity code: the conversation cache, the workspace check,
 * run start, heartbeats and cancel watches. `node --cpu-prof dist/bench/activity-cpu.js` profiles it.
 */
async function main(): Promise<void> {
  const [runs = 2000, rounds = 3] = process.argv.slice(2).map(Number);
  const log = (m: string) => process.stderr.write(`[activity-cpu] ${m}\n`);
  installQuietRuntime();
  const workDir = await makeWorkDir();
  try {
    const recordings = await record(workDir, log);
    const cpu: Record<Subject, number[]> = { ours: [], naive: [] };
    for (let round = 0; round <= rounds; round++) {
      for (const subject of ['ours', 'naive'] as const) {
        const ms = await replay(subject, recordings.get(subject)!, workDir, runs);
        if (round > 0) cpu[subject].push(ms / runs);
      }
    }
    const line = (subject: Subject) => {
      const perRun = median(cpu[subject]);
      const calls = recordings.get(subject)!.calls.length;
      return (
        `${subject.padEnd(5)}  ${perRun.toFixed(3).padStart(6)} ms per run, ${(perRun / ITERATIONS).toFixed(4)} ms per iteration` +
        ` (rounds: ${cpu[subject].map((v) => v.toFixed(3)).join(', ')}; ${calls} activity calls per run)`
      );
    };
    process.stdout.write(
      `Activity CPU of one run, replayed (${ITERATIONS} iterations × ${OUTPUT_BYTES} B, ${runs} runs × ${rounds} rounds, median):\n` +
        `${line('ours')}\n${line('naive')}\n` +
        `ours − naive: ${(median(cpu.ours) - median(cpu.naive)).toFixed(3)} ms per run\n` +
        `reproduce: npm run build && node dist/bench/activity-cpu.js ${runs} ${rounds}\n`,
    );
  } finally {
    await import('node:fs/promises').then((fs) => fs.rm(workDir, { recursive: true, force: true }));
  }
}

/** One live run of each subject, with each activity call's arguments and each model response. */
async function record(workDir: string, log: (m: string) => void): Promise<Map<Subject, Recording>> {
  const server = await startBenchServer('embedded', workDir, log);
  const bundlePath = await bundleBenchWorkflows(workDir);
  const connection = await connectBenchWorker(server);
  const client = await connectBenchClient(server);
  const recordings = new Map<Subject, Recording>();
  try {
    for (const subject of ['ours', 'naive'] as const) {
      const taskQueue = uniqueName(`activity-cpu-${subject}`);
      const recording: Recording = { calls: [], responses: [] };
      const model = recordingModel(createBenchModel({ calls: ITERATIONS + 4 }), recording.responses);
      const recorder = (ctx: Context): { inbound: ActivityInboundCallsInterceptor } => ({
        inbound: {
          execute: async (input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>) => {
            if (ctx.info.attempt === 1) {
              recording.calls.push({
                type: baseActivityName(ctx.info.activityType),
                isLocal: ctx.info.isLocal,
                args: JSON.stringify(input.args),
              });
            }
            return next(input);
          },
        },
      });
      const { workflowId } = await runOnce(client, {
        connection,
        taskQueue,
        bundlePath,
        subject,
        model,
        workspace: workDir,
        eager: true,
        workerOptions: { interceptors: { activity: [recorder] } },
        iterations: ITERATIONS,
        outputBytes: OUTPUT_BYTES,
      });
      // The run's ids (conversation and tool-result keys) become a placeholder each replayed run fills in.
      for (const call of recording.calls) call.args = call.args.split(workflowId).join('{{run}}');
      log(`${subject}: ${recording.calls.map((c) => c.type).join(', ')}`);
      recordings.set(subject, recording);
    }
  } finally {
    await client.connection.close();
    await connection.close();
    await server.stop();
  }
  return recordings;
}

/** The model, keeping a copy of each response it gives. */
function recordingModel(model: ModelProvider, responses: ModelResponse[]): ModelProvider {
  return {
    name: model.name,
    call: async (request, options) => {
      const response = await model.call(request, options);
      responses.push(structuredClone(response));
      return response;
    },
  };
}

/** A model that gives the recorded responses in turn, from the first again after the last. */
function replayingModel(responses: ModelResponse[]): ModelProvider {
  let next = 0;
  return {
    name: 'replayed',
    call: async () => {
      const response = responses[next % responses.length]!;
      next += 1;
      return structuredClone(response);
    },
  };
}

/**
 * Calls the recorded activities `runs` times; the process's CPU meanwhile, in ms. Each batch of
 * runs gets fresh arguments, parsed before the clock runs for it: a live worker receives them
 * decoded, and the naive loop's (its whole conversation each call) would cost most to copy.
 */
async function replay(subject: Subject, recording: Recording, workDir: string, runs: number): Promise<number> {
  const model = replayingModel(recording.responses);
  const tools = createBenchRegistry();
  const activities: Record<string, (...args: never[]) => Promise<unknown>> =
    subject === 'ours'
      ? createActivities({ models: () => model, tools, defaultWorkspace: workDir, cancelWatchMs: 0 })
      : createNaiveActivities({ models: () => model, tools, workspace: workDir });
  const local = new MockActivityEnvironment({ isLocal: true });
  const regular = new MockActivityEnvironment({ isLocal: false });
  let cpuMs = 0;
  for (let done = 0; done < runs; done += CONCURRENT) {
    const batch = Math.min(CONCURRENT, runs - done);
    const argsOf = Array.from({ length: batch }, (_, i) =>
      recording.calls.map((call) => JSON.parse(call.args.split('{{run}}').join(`bench-run-${i}`)) as never[]),
    );
    const before = process.cpuUsage();
    for (const args of argsOf) {
      for (let i = 0; i < recording.calls.length; i++) {
        const call = recording.calls[i]!;
        const fn = activities[call.type];
        if (!fn) throw new Error(`${subject} has no activity ${call.type}`);
        await (call.isLocal ? local : regular).run(fn, ...args[i]!);
      }
    }
    const used = process.cpuUsage(before);
    cpuMs += (used.user + used.system) / 1000;
  }
  return cpuMs;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
