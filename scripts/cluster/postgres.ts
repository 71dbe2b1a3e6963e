import { execFile, spawn } from 'node:child_process';
import { existsSync, promises as fs, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';

/**
 * A throwaway PostgreSQL server in a directory of its own (Debian's `postgresql` package: initdb and
 * pg_ctl from /usr/lib/postgresql/<version>/bin). It listens on 127.0.0.1:<port> (for Temporal) and
 * on a unix socket in its directory. Both refuse to run as root: as root every command runs as the
 * `postgres` user (`runuser`), with the data and socket directories owned by it.
 *
 * The superuser is `temporal` with trust authentication on loopback only: a test server, never
 * reachable from elsewhere. fsync is off: a restart (even `immediate`, a crash of the postmaster)
 * loses nothing, as the operating system keeps the written pages; only a machine crash would.
 */
export const POSTGRES_USER = 'temporal';

export interface PostgresOptions {
  /** A directory of its own (created; must be empty or missing). */
  dir: string;
  port: number;
  log?: (m: string) => void;
}

export type StopMode = 'smart' | 'fast' | 'immediate';

export class Postgres {
  private constructor(
    readonly port: number,
    readonly dataDir: string,
    readonly socketDir: string,
    private readonly bin: string,
    private readonly logFile: string,
  ) {}

  static async start(options: PostgresOptions): Promise<Postgres> {
    const bin = postgresBinDir();
    await fs.mkdir(options.dir, { recursive: true });
    const dataDir = path.join(options.dir, 'data');
    const socketDir = path.join(options.dir, 'socket');
    await fs.mkdir(socketDir);
    const pg = new Postgres(options.port, dataDir, socketDir, bin, path.join(options.dir, 'postgres.log'));
    if (asRoot()) {
      // The postgres user must reach its directories through the (root-owned) parents.
      await fs.chmod(options.dir, 0o755);
      await fs.chmod(path.dirname(options.dir), 0o755).catch(() => {});
      await promisify(execFile)('chown', ['postgres:postgres', options.dir, socketDir]);
    }
    options.log?.(`initdb ${dataDir}`);
    await pg.run('initdb', ['-D', dataDir, '-U', POSTGRES_USER, '--auth=trust', '-E', 'UTF8', '--no-sync']);
    await pg.up();
    return pg;
  }

  /** `host:port` for clients. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  async up(): Promise<void> {
    const settings = [
      `port=${this.port}`,
      'listen_addresses=127.0.0.1',
      `unix_socket_directories=${this.socketDir}`,
      'max_connections=300',
      'fsync=off',
      'shared_buffers=64MB',
    ];
    await this.run('pg_ctl', [
      '-D',
      this.dataDir,
      '-l',
      this.logFile,
      '-w',
      '-t',
      '120',
      '-o',
      settings.map((s) => `-c ${s}`).join(' '),
      'start',
    ]);
  }

  async down(mode: StopMode = 'fast'): Promise<void> {
    await this.run('pg_ctl', ['-D', this.dataDir, '-m', mode, '-w', '-t', '120', 'stop']);
  }

  async restart(mode: StopMode = 'fast'): Promise<void> {
    await this.down(mode);
    await this.up();
  }

  /** Stops it if running (ignores a server already stopped). */
  async stop(): Promise<void> {
    if (existsSync(path.join(this.dataDir, 'postmaster.pid'))) await this.down('fast').catch(() => {});
  }

  /** The server's log so far (for failure messages). */
  async logTail(lines = 40): Promise<string> {
    const text = await fs.readFile(this.logFile, 'utf8').catch(() => '');
    return text.split('\n').slice(-lines).join('\n');
  }

  private run(tool: string, args: string[]): Promise<void> {
    const program = path.join(this.bin, tool);
    const [cmd, argv] = asRoot() ? ['runuser', ['-u', 'postgres', '--', program, ...args]] : [program, args];
    return new Promise((resolve, reject) => {
      // pg_ctl start leaves the postmaster running with our pipes open unless its output goes to the log.
      const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'], cwd: '/' });
      let output = '';
      const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000));
      child.stdout.on('data', keep);
      child.stderr.on('data', keep);
      child.on('error', reject);
      child.on('exit', (code) => {
        if (code === 0) resolve();
        else reject(new Error(`${tool} ${args.join(' ')} exited with ${code}: ${output.trim()}`));
      });
    });
  }
}

function asRoot(): boolean {
  return process.getuid?.() === 0;
}

/** `PG_BIN`, else the newest /usr/lib/postgresql/<version>/bin (Debian), else initdb on PATH. */
export function postgresBinDir(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base)
    ? readdirSync(base)
        .filter((v) => existsSync(path.join(base, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions[0]) return path.join(base, versions[0], 'bin');
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && existsSync(path.join(dir, 'initdb'))) return dir;
  }
  throw new Error(
    "PostgreSQL's initdb was not found (looked in /usr/lib/postgresql/*/bin and on PATH). Install it: " +
      "'sudo apt-get install postgresql' (Debian/Ubuntu), or set PG_BIN to the directory holding initdb and pg_ctl.",
  );
}
