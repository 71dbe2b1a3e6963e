import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';

/** The built CLI, as a user runs it (`npm test` builds dist/ first). */
export const CLI_BIN = path.resolve(__dirname, '..', '..', 'bin', 'durable-agent.js');

export interface CliOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliProcess {
  child: ChildProcess;
  /** Output so far. */
  stdout(): string;
  stderr(): string;
  done: Promise<CliOutcome>;
}

/** Runs `durable-agent <args>` with `env` on top of this process's environment. */
export function runCli(args: string[], env: Record<string, string | undefined>, cwd?: string): CliProcess {
  const child = spawn(process.execPath, [CLI_BIN, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(cwd ? { cwd } : {}),
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    done: new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr }))),
  };
}
