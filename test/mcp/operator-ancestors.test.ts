/**
 * An operator's stdio MCP server must not find, going up from its working directory or through its
 * HOME, anything a run can write (issue 44, review of the fix). npx, node and Python look for
 * `node_modules/`, `package.json`, `.venv` in every directory going up; Python runs the user site's
 * `usercustomize.py` from `~/.local`. Here a workspace root holds the system's temporary directory
 * (as a worker with `--workspace-root /tmp` does) and another run planted `node_modules/` there, or
 * the worker's HOME lies in a root and a run planted its user site: no planted code may run.
 */
import { chmodSync, existsSync, promises as fs, symlinkSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import { createMcpRuntime, type McpRuntime } from '../../src/mcp';
import { resolveEndpoint } from '../../src/mcp/endpoint';
import type { McpServerConfig } from '../../src/shared/mcp';

jest.setTimeout(60_000);

/** A workspace root; the system's temporary directory lies in it during a test. */
let root: string;
/** Outside every root: markers, the worker's cache. */
let outside: string;
const saved = { ...process.env };
const runtimes: McpRuntime[] = [];
beforeEach(async () => {
  root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'mcp-anc-root-')));
  outside = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'mcp-anc-out-')));
  process.env.XDG_CACHE_HOME = path.join(outside, 'cache');
});
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
  jest.restoreAllMocks();
  for (const name of ['HOME', 'XDG_CACHE_HOME']) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
  await fs.rm(root, { recursive: true, force: true });
  await fs.rm(outside, { recursive: true, force: true });
});

const marker = (name: string) => path.join(outside, `planted-${name}-ran`);

async function write(file: string, content: string, executable = false): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, content);
  if (executable) chmodSync(file, 0o755);
}

/** A run's servers, listed by a worker whose roots are `root` and its own working directory (as `run`'s inline worker). */
async function listRunServers(servers: Record<string, McpServerConfig>) {
  const r = createMcpRuntime({
    workspaceConfig: false,
    connectTimeoutMs: 8_000,
    workspaceRoots: [root, process.cwd()],
  });
  runtimes.push(r);
  const workspace = path.join(root, 'this-run');
  await fs.mkdir(workspace, { recursive: true });
  return (await r.listForRun({ runServers: servers, workspace, network: false })).servers;
}

test("npx in the private directory does not run a package another run planted in the root's node_modules", async () => {
  // The system's temporary directory lies in the root: before the fix the private directory was there.
  // (os.tmpdir() reads the real environment, which a test's process.env is not.)
  jest.spyOn(jest.requireActual<typeof os>('node:os'), 'tmpdir').mockReturnValue(root);
  const pkg = path.join(root, 'node_modules', 'planted-anc');
  await write(
    path.join(pkg, 'package.json'),
    JSON.stringify({ name: 'planted-anc', version: '1.0.0', bin: { 'planted-anc': 'cli.js' } }),
  );
  await write(
    path.join(pkg, 'cli.js'),
    `#!/usr/bin/env node\nrequire('node:fs').writeFileSync(${JSON.stringify(marker('npx'))}, 'ran');\n`,
    true,
  );
  await fs.mkdir(path.join(root, 'node_modules', '.bin'));
  symlinkSync('../planted-anc/cli.js', path.join(root, 'node_modules', '.bin', 'planted-anc'));
  const [server] = await listRunServers({
    planted: { command: 'npx', args: ['-y', 'planted-anc'], env: { npm_config_offline: 'true' } },
  });
  expect(server!.error).toBeDefined();
  expect(existsSync(marker('npx'))).toBe(false);
});

test('the private directory lies in the worker cache; one inside a root is refused naming XDG_CACHE_HOME', async () => {
  const unsafe = [root];
  const context = (privateDir: () => string) => ({
    source: 'run' as const,
    workspace: path.join(root, 'ws'),
    network: false,
    env: {},
    sandbox: { mode: 'off' as const, detail: '' },
    limits: {},
    unsafeDirs: unsafe,
    operatorDir: root,
    privateDir,
  });
  const { PrivateDirectory } = await import('../../src/mcp/operator-launch');
  const good = new PrivateDirectory();
  try {
    const ok = resolveEndpoint({ command: 'node' }, context(() => good.path) as never);
    expect(ok.ok && ok.endpoint.transport === 'stdio' && ok.endpoint.cwd).toBe(good.path);
    expect(path.dirname(good.path)).toBe(path.join(outside, 'cache', 'durable-agent', 'mcp'));
  } finally {
    good.remove();
  }
  const bad = new PrivateDirectory({ XDG_CACHE_HOME: path.join(root, 'cache') });
  try {
    const refused = resolveEndpoint({ command: 'node' }, context(() => bad.path) as never);
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.error).toMatch(/lies in .*a directory a run can write.*XDG_CACHE_HOME/s);
  } finally {
    bad.remove();
  }
  // A root named node_modules beside an ancestor of the preferred directory is found by npx too.
  const beside = resolveEndpoint({ command: 'node' }, {
    ...context(() => good.path),
    unsafeDirs: [path.join(root, 'node_modules')],
    operatorDir: path.join(root, 'op'),
  } as never);
  expect(beside.ok && beside.endpoint.transport === 'stdio' && beside.endpoint.cwd).toBe(good.path);
  good.remove();
});

test("python's user site under a HOME that lies in a root is not run (PYTHONNOUSERSITE)", async () => {
  const version = execFileSync('python3', ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], {
    encoding: 'utf8',
  }).trim();
  const home = path.join(root, 'home');
  await write(
    path.join(home, '.local', 'lib', `python${version}`, 'site-packages', 'usercustomize.py'),
    `open(${JSON.stringify(marker('usersite'))}, 'w').write('ran')\n`,
  );
  process.env.HOME = home;
  const [server] = await listRunServers({ py: { command: 'python3', args: ['-c', 'pass'] } });
  expect(server!.error).toBeDefined();
  expect(existsSync(marker('usersite'))).toBe(false);
});

test("a HOME that lies in a root: the server's npm, uv and XDG folders move to the private directory", () => {
  const home = path.join(root, 'home');
  const privateDir = path.join(outside, 'cache', 'private');
  process.env.HOME = home;
  const again = resolveEndpoint({ command: 'node', env: { XDG_CONFIG_HOME: '/etc/op-config' } }, {
    source: 'worker',
    workspace: path.join(root, 'ws'),
    network: false,
    env: {},
    sandbox: { mode: 'off', detail: '' },
    limits: {},
    unsafeDirs: [root],
    operatorDir: outside,
    privateDir: () => privateDir,
  } as never);
  if (!again.ok || again.endpoint.transport !== 'stdio') throw new Error('not started');
  const env = again.endpoint.env!;
  expect(env.HOME).toBe(home);
  expect(env.PYTHONNOUSERSITE).toBe('1');
  for (const name of ['npm_config_cache', 'UV_CACHE_DIR', 'XDG_CACHE_HOME', 'XDG_DATA_HOME']) {
    expect(env[name]!.startsWith(privateDir + path.sep)).toBe(true);
    expect(existsSync(env[name]!)).toBe(true);
  }
  // What the server's own env sets stays.
  expect(env.XDG_CONFIG_HOME).toBe('/etc/op-config');
});
