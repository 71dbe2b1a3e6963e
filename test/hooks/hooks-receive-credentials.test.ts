/**
 * Finding (medium): "worker hooks receive TEMPORAL_GRPC_META_* (credentials)". The hook
 * environment was the worker's minus a list of known secrets, so any credential under another
 * name reached every worker hook. Hooks now get a clean environment built from a short list.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { hookEnv } from '../../src/hooks';
import { group, makeHookBench, type HookBench } from './helpers';

const SECRETS = {
  TEMPORAL_GRPC_META_AUTHORIZATION: 'Bearer grpc-meta-secret',
  TEMPORAL_CODEC_AUTH: 'codec-secret',
  AWS_SECRET_ACCESS_KEY: 'aws-secret',
  GITHUB_TOKEN: 'ghp-secret',
  ANTHROPIC_API_KEY: 'sk-ant-secret',
  DURABLE_AGENT_CODEC_KEYS: 'k1:c2VjcmV0',
  // A credential under a name no list could know.
  [`DA_UNLISTED_${process.pid}`]: `unlisted-secret-${process.pid}`,
};

let bench: HookBench;
beforeEach(() => {
  bench = makeHookBench();
  Object.assign(process.env, SECRETS);
});
afterEach(() => {
  for (const name of Object.keys(SECRETS)) delete process.env[name];
  bench.cleanup();
});

test('worker hooks receive TEMPORAL_GRPC_META_* (credentials): a worker hook gets a clean environment', async () => {
  const dump = path.join(bench.outside, 'env.txt');
  bench.workerHooks({ PreToolUse: [group('bash', bench.script('env.sh', `cat > /dev/null\nenv > ${dump}`))] });
  const call = { event: 'PreToolUse' as const, toolName: 'bash', toolInput: { command: 'ls' }, toolUseId: 'tu1' };
  expect(await bench.run(call)).toEqual({ decision: 'none', reports: [] });
  const env = readFileSync(dump, 'utf8');
  for (const [name, value] of Object.entries(SECRETS)) {
    expect(env).not.toContain(name);
    expect(env).not.toContain(value);
  }
  const names = env
    .split('\n')
    .filter(Boolean)
    .map((line) => line.slice(0, line.indexOf('=')));
  // What a hook still gets: where it runs and how text is spelt (bash adds PWD, SHLVL and _ itself).
  expect(names).toEqual(expect.arrayContaining(['PATH', 'HOME', 'CLAUDE_PROJECT_DIR', 'DURABLE_AGENT_PROJECT_DIR']));
});

test('the hook environment is built from the allowed names, whatever else the worker has', () => {
  const env = hookEnv('/ws', { PATH: '/bin', LC_ALL: 'C', TEMPORAL_GRPC_META_X: 'y', SOME_TOKEN: 't' });
  expect(env).toEqual({ PATH: '/bin', LC_ALL: 'C', CLAUDE_PROJECT_DIR: '/ws', DURABLE_AGENT_PROJECT_DIR: '/ws' });
});
