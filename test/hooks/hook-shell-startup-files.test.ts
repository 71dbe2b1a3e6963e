/**
 * Finding (medium): "worker hooks source ~/.bashrc". An unsandboxed worker-file hook ran `bash -c`
 * with a socket pair on stdin, which bash takes for a remote shell: it sourced the worker user's
 * ~/.bashrc, so a secret exported there reached the hook despite the clean environment. Every hook
 * shell now starts with --norc --noprofile.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { group, makeHookBench, type HookBench } from './helpers';

const SECRET = `bashrc-secret-${process.pid}`;
let bench: HookBench;
let home: string;
const savedHome = process.env.HOME;

beforeEach(() => {
  bench = makeHookBench();
  // The worker's home, with every startup file bash might read exporting a secret.
  home = mkdtempSync(path.join(os.tmpdir(), 'hook-home-'));
  for (const file of ['.bashrc', '.bash_profile', '.profile', '.bash_login']) {
    writeFileSync(path.join(home, file), `export LEAKED_FROM_${file.replace(/\W/g, '')}=${SECRET}\n`);
  }
  process.env.HOME = home;
});
afterEach(() => {
  process.env.HOME = savedHome;
  rmSync(home, { recursive: true, force: true });
  bench.cleanup();
});

test('worker hooks source ~/.bashrc: an unsandboxed hook reads no startup file of the worker user', async () => {
  const dump = path.join(bench.outside, 'env.txt');
  // The command as written in the settings file (no script of its own): the hook's shell is what runs it.
  bench.workerHooks({ PreToolUse: [group('bash', `cat > /dev/null; env > ${dump}`)] });
  const call = { event: 'PreToolUse' as const, toolName: 'bash', toolInput: { command: 'ls' }, toolUseId: 'tu1' };
  expect(await bench.run(call)).toEqual({ decision: 'none', reports: [] });
  const env = readFileSync(dump, 'utf8');
  expect(env).toContain(`HOME=${home}`);
  expect(env).not.toContain(SECRET);
  expect(env).not.toContain('LEAKED_FROM');
});
