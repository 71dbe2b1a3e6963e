/**
 * The sandbox's cost: milliseconds per bash call sandboxed (bubblewrap) and unsandboxed, measured
 * in the same run, interleaved call by call so that the machine's load hits both alike. The issue's
 * target: at most 20 ms added per call.
 *
 * Alone: `npx tsc -p tsconfig.build.json && node dist/bench/sandbox-figure.js [calls] [--before=DIR]`
 * or `npm run bench -- --only=sandbox`. `--before=DIR` names another build's output directory (the
 * `dist` of an earlier commit): its sandboxed bash tool runs in the same loop, call by call with the
 * others, so that a change is measured under the same load as what it replaces.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createBashTool } from '../src/tools';
import { detectSandbox } from '../src/sandbox';
import { distribution, ms, table, type Distribution } from './stats';

/** The target for the sandbox's added cost per call. */
export const SANDBOX_TARGET_MS = 20;
const DEFAULT_CALLS = 200;
const WARMUP_CALLS = 10;
/** A command that does a little of what real calls do: start a shell, run a program, print. */
const COMMAND = 'ls -la > /dev/null; echo done';

export interface SandboxFigure {
  calls: number;
  command: string;
  unsandboxed: Distribution;
  sandboxed: Distribution;
  /** Median sandboxed minus median unsandboxed. */
  addedMedianMs: number;
  targetMs: number;
  /** Set when bwrap cannot run here: then only the unsandboxed row is measured. */
  unavailable?: string;
  /** With `--before`: the other build's sandboxed calls, and its median minus the unsandboxed one. */
  before?: { dir: string; sandboxed: Distribution; addedMedianMs: number };
}

type BashTool = ReturnType<typeof createBashTool>;

/** Runs `calls` bash calls of each kind, alternating, and returns their distributions. */
export async function measureSandbox(calls = DEFAULT_CALLS, beforeDir?: string): Promise<SandboxFigure> {
  const workspace = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'da-bench-sandbox-')));
  const status = detectSandbox({ DURABLE_AGENT_SANDBOX: 'bwrap' });
  const tools: Record<'off' | 'bwrap' | 'before', BashTool | undefined> = {
    off: createBashTool({ sandbox: 'off' }),
    bwrap: createBashTool({ sandbox: 'bwrap' }),
    before: beforeDir ? beforeTool(beforeDir) : undefined,
  };
  const times: Record<'off' | 'bwrap' | 'before', number[]> = { off: [], bwrap: [], before: [] };
  const modes =
    status.mode === 'bwrap'
      ? (['off', 'bwrap', ...(beforeDir ? ['before' as const] : [])] as const)
      : (['off'] as const);
  try {
    for (let i = 0; i < WARMUP_CALLS + calls; i++) {
      for (const mode of i % 2 ? [...modes].reverse() : modes) {
        const ctx = {
          workspace,
          signal: new AbortController().signal,
          heartbeat: () => {},
          toolUseId: `bench_${i}`,
        };
        const started = performance.now();
        const result = await (tools[mode] as BashTool).execute({ command: COMMAND }, ctx);
        const elapsed = performance.now() - started;
        const content = typeof result === 'string' ? result : result.content;
        if (!content.includes('done')) throw new Error(`bash (${mode}) did not run the command: ${content}`);
        if (i >= WARMUP_CALLS) times[mode].push(elapsed);
      }
    }
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
  const unsandboxed = distribution(times.off);
  const sandboxed = distribution(times.bwrap);
  return {
    calls,
    command: COMMAND,
    unsandboxed,
    sandboxed,
    addedMedianMs: sandboxed.median - unsandboxed.median,
    targetMs: SANDBOX_TARGET_MS,
    ...(status.mode === 'bwrap' ? {} : { unavailable: status.detail }),
    ...(beforeDir && times.before.length
      ? {
          before: {
            dir: beforeDir,
            sandboxed: distribution(times.before),
            addedMedianMs: distribution(times.before).median - unsandboxed.median,
          },
        }
      : {}),
  };
}

/** The sandboxed bash tool of another build (`--before=DIR`: that build's output directory). */
function beforeTool(dir: string): BashTool {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const other = require(path.resolve(dir, 'src', 'tools')) as { createBashTool: typeof createBashTool };
  return other.createBashTool({ sandbox: 'bwrap' });
}

/** The figure as report lines. */
export function formatSandboxFigure(figure: SandboxFigure): string[] {
  const row = (label: string, d: Distribution) => [label, String(d.n), ms(d.median), ms(d.p95), ms(d.mean)];
  const lines = [
    `Sandbox cost: ms per bash call ('${figure.command}'), ${figure.calls} calls each, interleaved in one run`,
    table([
      ['mode', 'n', 'median', 'p95', 'mean'],
      row('unsandboxed (DURABLE_AGENT_SANDBOX=off)', figure.unsandboxed),
      row('bubblewrap sandbox (default)', figure.sandboxed),
      ...(figure.before ? [row(`bubblewrap sandbox, build in ${figure.before.dir}`, figure.before.sandboxed)] : []),
    ]),
  ];
  if (figure.before) {
    lines.push(`Added per call (median) by the build in ${figure.before.dir}: ${ms(figure.before.addedMedianMs)} ms.`);
  }
  if (figure.unavailable) lines.push(`Sandbox not measured: ${figure.unavailable}`);
  else {
    const met = figure.addedMedianMs <= figure.targetMs ? 'met' : 'NOT met';
    lines.push(`Added per call (median): ${ms(figure.addedMedianMs)} ms; target ≤ ${figure.targetMs} ms: ${met}.`);
  }
  return lines;
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const before = args.find((a) => a.startsWith('--before='))?.slice('--before='.length);
  const calls = Number(args.find((a) => !a.startsWith('--')) ?? DEFAULT_CALLS);
  measureSandbox(Number.isInteger(calls) && calls > 0 ? calls : DEFAULT_CALLS, before).then(
    (figure) => {
      process.stdout.write(`${formatSandboxFigure(figure).join('\n')}\n`);
      process.exit(0);
    },
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
