import type { ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { spawnTs } from '../support/worker-harness';

export interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** This process's environment without any `TEMPORAL_*` setting, on the offline model, plus `extra`. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('TEMPORAL_')) env[key] = value;
  return { ...env, ANTHROPIC_API_KEY: '', DURABLE_AGENT_MODEL: 'offline-demo', ...extra };
}

export function outcome(child: ChildProcess): Promise<Outcome> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

/** The one `error: …` line on stderr; fails the test on a stack trace or a second error line. */
export function oneLineError(out: Outcome): string {
  const lines = out.stderr.trim().split('\n');
  expect(lines.filter((l) => /^\s+at /.test(l))).toEqual([]);
  const errors = lines.filter((l) => l.startsWith('error: '));
  expect(errors).toHaveLength(1);
  return errors[0]!;
}

/**
 * `durable-agent` (cli-entry.ts) and dedicated workers (worker-entry.ts) from source, with a clean
 * environment plus `base` and what each call adds; `killAll()` for `afterAll`.
 */
export class ConnectionProcesses {
  private readonly children: ChildProcess[] = [];

  constructor(private readonly base: () => Record<string, string>) {}

  spawn(entry: 'cli-entry.ts' | 'worker-entry.ts', args: string[], env: Record<string, string>): ChildProcess {
    const child = spawnTs(path.join(__dirname, entry), args, cleanEnv({ ...this.base(), ...env }));
    this.children.push(child);
    return child;
  }

  /** `durable-agent <args>` with only `env` (and the base) as its Temporal settings. */
  durableAgent(args: string[], env: Record<string, string>): Promise<Outcome> {
    return outcome(this.spawn('cli-entry.ts', args, env));
  }

  /** A dedicated worker; resolves once it polls, or rejects with what it printed. */
  async startWorker(env: Record<string, string>): Promise<ChildProcess> {
    const bundle = process.env.DA_TEST_WORKFLOW_BUNDLE;
    const child = this.spawn('worker-entry.ts', [], { ...(bundle ? { DA_TEST_WORKFLOW_BUNDLE: bundle } : {}), ...env });
    let output = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on('data', (c: Buffer) => {
        output += c.toString();
        if (/Worker polling task queue/.test(output)) resolve();
      });
      child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
      child.on('exit', (code) => reject(new Error(`worker exited ${code}: ${output}`)));
    });
    return child;
  }

  killAll(): void {
    for (const child of this.children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}
