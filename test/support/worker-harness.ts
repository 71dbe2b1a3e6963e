/**
 * Child processes for fault-injection tests: TypeScript entry points run straight from source, and
 * worker processes a test can kill.
 *
 * The `.ts` require hook compiles each file with `@swc/core`, which is always installed because
 * `@temporalio/worker` depends on it (its workflow bundler uses it); it adds ~30 ms to a worker's
 * start. If it cannot be loaded the hook falls back to `typescript.transpileModule` (a direct dev
 * dependency; ~2 s slower per process). No ts-node/tsx is needed and nothing has to be built first.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';

function resolveOptional(id: string): string | undefined {
  try {
    return require.resolve(id);
  } catch {
    return undefined;
  }
}

/** Installs the `.ts` require hook, then runs `process.argv[1]`. Given to `node -e`. */
const TS_ENTRY = `
const fs = require('node:fs');
let compile;
try {
  const swc = require(${JSON.stringify(resolveOptional('@swc/core') ?? '@swc/core')});
  compile = (source, filename) => swc.transformSync(source, {
    filename,
    sourceMaps: 'inline',
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
  }).code;
} catch {
  const ts = require(${JSON.stringify(require.resolve('typescript'))});
  compile = (source, filename) => ts.transpileModule(source, {
    fileName: filename,
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
      isolatedModules: true,
      inlineSourceMap: true,
    },
  }).outputText;
}
require.extensions['.ts'] = function (module, filename) {
  module._compile(compile(fs.readFileSync(filename, 'utf8'), filename), filename);
};
require(require('node:path').resolve(process.argv[1]));
`;

/**
 * Runs a TypeScript file in a new Node process; `prefix`: a command that execs the rest (e.g.
 * `unshare -m … sh -c '…; exec "$@"' sh`, a worker in a mount namespace of its own).
 */
export function spawnTs(entry: string, args: string[], env: NodeJS.ProcessEnv, prefix: string[] = []): ChildProcess {
  const argv = [process.execPath, '--enable-source-maps', '-e', TS_ENTRY, entry, ...args];
  const [command, ...rest] = [...prefix, ...argv];
  return spawn(command!, rest, { env, stdio: ['ignore', 'pipe', 'pipe'] });
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** `Date.now()` at exit. */
  at: number;
}

/** A worker in its own process (test/support/worker-process.ts), with its output captured. */
export class WorkerProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<ExitStatus>;
  private lines: { at: number; text: string }[] = [];
  private waiters = new Set<() => void>();

  constructor(env: Record<string, string | undefined>, label = 'worker', prefix: string[] = []) {
    this.child = spawnTs(path.join(__dirname, 'worker-process.ts'), [], { ...process.env, ...env }, prefix);
    for (const stream of [this.child.stdout, this.child.stderr]) {
      let partial = '';
      stream?.on('data', (chunk: Buffer) => {
        const parts = (partial + chunk.toString('utf8')).split('\n');
        partial = parts.pop() ?? '';
        for (const text of parts) this.lines.push({ at: Date.now(), text });
        for (const wake of this.waiters) wake();
      });
    }
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code, signal) => {
        resolve({ code, signal, at: Date.now() });
        for (const wake of this.waiters) wake();
      }),
    );
    if (process.env.DA_TEST_SHOW_WORKERS === '1') {
      this.child.stdout?.on('data', (c: Buffer) => process.stderr.write(`[${label}] ${c.toString()}`));
      this.child.stderr?.on('data', (c: Buffer) => process.stderr.write(`[${label}!] ${c.toString()}`));
    }
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** Everything the process printed so far, stdout and stderr interleaved. */
  output(): string {
    return this.lines.map((l) => l.text).join('\n');
  }

  /** The first output line matching `pattern` (and its time), waiting up to `timeoutMs` for it. */
  async waitFor(pattern: RegExp, timeoutMs = 30_000): Promise<{ at: number; text: string }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const line = this.lines.find((l) => pattern.test(l.text));
      if (line) return line;
      if (this.child.exitCode !== null || this.child.signalCode !== null) {
        throw new Error(`worker exited before printing ${pattern}; output:\n${this.output()}`);
      }
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`worker did not print ${pattern} within ${timeoutMs} ms; output:\n${this.output()}`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiters.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(wake, Math.min(left, 500));
        this.waiters.add(wake);
      });
    }
  }

  /** Resolves once the worker polls its task queue. */
  ready(timeoutMs = 30_000): Promise<{ at: number; text: string }> {
    return this.waitFor(/^Worker polling task queue/, timeoutMs);
  }

  kill(signal: NodeJS.Signals): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
  }

  /** SIGKILL (if still running) and wait for the exit. */
  async stop(): Promise<ExitStatus> {
    this.kill('SIGKILL');
    return this.exited;
  }
}

/** Tracks the worker processes a test starts so `afterEach` can kill whatever is left. */
export class WorkerFleet {
  private readonly all: WorkerProcess[] = [];

  constructor(private readonly baseEnv: () => Record<string, string | undefined>) {}

  start(
    env: Record<string, string | undefined> = {},
    label = `worker${this.all.length + 1}`,
    prefix: string[] = [],
  ): WorkerProcess {
    const worker = new WorkerProcess({ ...this.baseEnv(), ...env }, label, prefix);
    this.all.push(worker);
    return worker;
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.all.splice(0).map((w) => w.stop()));
  }
}
