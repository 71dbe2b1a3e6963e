/**
 * An operator's stdio MCP server (the run's `mcpServers`, `--mcp-config`, the worker's file) runs
 * with the worker's rights, outside the sandbox: it must never start in, resolve a program from, or
 * import a module from a directory a run can write. For each launcher the docs show (`npx`, `node`,
 * `python3 -m`, `uvx`, a relative command, a relative PATH entry), the workspace holds a planted
 * look-alike that would write a marker file if it ran: none may run. And a server from the
 * worker's file still finds what lies beside that file.
 */
import { chmodSync, existsSync, promises as fs, symlinkSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createMcpRuntime, type McpRuntime } from '../../src/mcp';
import type { McpServerConfig } from '../../src/shared/mcp';
import { durableAgentCacheDir } from '../../src/safe-fs/operator-files';
import { tempWorkspace } from '../support/temporal';
import { WHERE_SERVER_SOURCE } from './support/probe-server';

jest.setTimeout(60_000);

let workspace: string;
/** Outside every workspace and root: where planted code would leave its marker, and the operator's own files. */
let outside: string;
const runtimes: McpRuntime[] = [];
beforeEach(async () => {
  workspace = await tempWorkspace('mcp-planted');
  outside = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'mcp-operator-')));
});
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
  await fs.rm(outside, { recursive: true, force: true });
});

/** A runtime whose workspace roots are the test's workspace (as a worker's roots hold every run's workspace). */
function runtime(options: Parameters<typeof createMcpRuntime>[0] = {}) {
  const r = createMcpRuntime({
    workspaceConfig: false,
    connectTimeoutMs: 8_000,
    workspaceRoots: [workspace],
    ...options,
  });
  runtimes.push(r);
  return r;
}
const marker = (name: string) => path.join(outside, `planted-${name}-ran`);
/** Node code that leaves the marker; what every planted look-alike runs. */
const leaveMarker = (name: string) => `require('node:fs').writeFileSync(${JSON.stringify(marker(name))}, 'ran');`;
const shellMarker = (name: string) => `#!/bin/sh\necho ran > '${marker(name)}'\n`;

async function plant(relative: string, content: string, executable = false): Promise<void> {
  const file = path.join(workspace, relative);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, content);
  if (executable) chmodSync(file, 0o755);
}

async function listOperator(servers: Record<string, McpServerConfig>, r = runtime()) {
  return (await r.listForRun({ runServers: servers, workspace, network: false })).servers;
}

test('npx does not run a package planted in the workspace node_modules', async () => {
  await plant(
    'node_modules/planted-mcp/package.json',
    JSON.stringify({ name: 'planted-mcp', version: '1.0.0', bin: { 'planted-mcp': 'cli.js' } }),
  );
  await plant('node_modules/planted-mcp/cli.js', `#!/usr/bin/env node\n${leaveMarker('npx')}\n`, true);
  await fs.mkdir(path.join(workspace, 'node_modules/.bin'), { recursive: true });
  symlinkSync('../planted-mcp/cli.js', path.join(workspace, 'node_modules/.bin/planted-mcp'));
  // Offline: npx may look for the package in its cache, never on the network.
  const [server] = await listOperator({
    planted: { command: 'npx', args: ['-y', 'planted-mcp'], env: { npm_config_offline: 'true' } },
  });
  expect(server!.error).toBeDefined();
  expect(existsSync(marker('npx'))).toBe(false);
});

test('node does not load a script or a package planted in the workspace', async () => {
  await plant('planted-server.js', leaveMarker('node-script'));
  await plant('node_modules/planted-mod/index.js', leaveMarker('node-require'));
  const servers = await listOperator({
    script: { command: 'node', args: ['planted-server.js'] },
    required: { command: 'node', args: ['-e', "require('planted-mod')"] },
    nodePath: { command: 'node', args: ['-e', "require('planted-mod')"], env: { NODE_PATH: 'node_modules' } },
  });
  expect(servers.every((s) => s.error !== undefined)).toBe(true);
  expect(existsSync(marker('node-script'))).toBe(false);
  expect(existsSync(marker('node-require'))).toBe(false);
});

test('python3 -m does not import a module planted in the workspace', async () => {
  await plant('planted_mod.py', `open(${JSON.stringify(marker('python'))}, 'w').write('ran')\n`);
  await plant('.python-version', 'system\n');
  const servers = await listOperator({
    module: { command: 'python3', args: ['-m', 'planted_mod'] },
    pythonPath: { command: 'python3', args: ['-m', 'planted_mod'], env: { PYTHONPATH: '.' } },
  });
  expect(servers.every((s) => s.error !== undefined)).toBe(true);
  expect(existsSync(marker('python'))).toBe(false);
});

test('uvx (a shim that resolves from its working directory, as uvx resolves a project) does not run a planted tool', async () => {
  // uvx is not installed here: this stand-in runs the module named by its argument from the working directory.
  const bin = path.join(outside, 'bin');
  await fs.mkdir(bin);
  await fs.writeFile(
    path.join(bin, 'uvx'),
    '#!/bin/sh\nexec python3 -c \'import runpy, sys; sys.path.insert(0, "."); runpy.run_module(sys.argv[1], run_name="__main__")\' "$@"\n',
  );
  chmodSync(path.join(bin, 'uvx'), 0o755);
  await plant('planted_tool.py', `open(${JSON.stringify(marker('uvx'))}, 'w').write('ran')\n`);
  const [server] = await listOperator({
    tool: { command: 'uvx', args: ['planted_tool'], env: { PATH: `${bin}${path.delimiter}${process.env.PATH}` } },
  });
  expect(server!.error).toBeDefined();
  expect(existsSync(marker('uvx'))).toBe(false);
});

test('a relative command, a relative PATH entry and a command inside the workspace are not run', async () => {
  await plant('server.sh', shellMarker('relative'), true);
  await plant('bin/planted-bin', shellMarker('path-entry'), true);
  await plant('abs.sh', shellMarker('absolute'), true);
  const servers = await listOperator({
    relative: { command: './server.sh' },
    pathEntry: { command: 'planted-bin', env: { PATH: `bin${path.delimiter}${process.env.PATH}` } },
    inWorkspace: { command: path.join(workspace, 'abs.sh') },
  });
  const byName = Object.fromEntries(servers.map((s) => [s.name, s]));
  expect(byName.relative!.error).toBeDefined();
  expect(byName.pathEntry!.error).toBeDefined();
  expect(byName.inWorkspace!.error).toMatch(/lies in a directory a run can write/);
  for (const name of ['relative', 'path-entry', 'absolute']) expect(existsSync(marker(name))).toBe(false);
});

test("the worker's file: a relative command runs beside the file, never the workspace's; search paths are cleaned", async () => {
  await plant('server.sh', shellMarker('worker-file'), true);
  await fs.writeFile(path.join(outside, 'where.js'), WHERE_SERVER_SOURCE);
  await fs.writeFile(path.join(outside, 'server.sh'), `#!/bin/sh\nexec '${process.execPath}' where.js\n`);
  chmodSync(path.join(outside, 'server.sh'), 0o755);
  const configFile = path.join(outside, 'mcp.json');
  await fs.writeFile(
    configFile,
    JSON.stringify({
      mcpServers: {
        mine: {
          command: './server.sh',
          env: {
            PATH: `.${path.delimiter}${path.join(workspace, 'bin')}${path.delimiter}/usr/bin:/bin`,
            NODE_PATH: 'x',
          },
        },
      },
    }),
  );
  const r = runtime({ configFile });
  const { servers } = await r.listForRun({ workspace, network: false });
  const mine = servers.find((s) => s.name === 'mine')!;
  expect(mine.error).toBeUndefined();
  const result = await r.call(
    { server: 'mine', tool: 'where', source: 'worker', sideEffect: 'read_only', toolsHash: mine.toolsHash },
    {},
    {
      workspace,
      network: false,
      toolUseId: 'toolu_where',
      signal: new AbortController().signal,
      heartbeat: () => {},
      timeoutMs: 10_000,
    },
  );
  const seen = JSON.parse(result.content) as Record<string, string | undefined>;
  expect(seen.cwd).toBe(outside);
  expect(seen.PATH).toBe('/usr/bin:/bin');
  expect(seen.NODE_PATH).toBe('');
  expect(seen.PYTHONSAFEPATH).toBe('1');
  expect(existsSync(marker('worker-file'))).toBe(false);
});

test("a run's server whose preferred directory is a root starts in a private empty directory", async () => {
  await fs.writeFile(path.join(outside, 'where.js'), WHERE_SERVER_SOURCE);
  // The worker's working directory is a root here: the run's server must not start there.
  const r = runtime({ workspaceRoots: [workspace, process.cwd()] });
  const { servers } = await r.listForRun({
    runServers: { where: { command: process.execPath, args: [path.join(outside, 'where.js')] } },
    workspace,
    network: false,
  });
  expect(servers[0]!.error).toBeUndefined();
  const result = await r.call(
    {
      server: 'where',
      tool: 'where',
      source: 'run',
      config: servers[0]!.config!,
      sideEffect: 'read_only',
      toolsHash: servers[0]!.toolsHash,
    },
    {},
    {
      workspace,
      network: false,
      toolUseId: 't',
      signal: new AbortController().signal,
      heartbeat: () => {},
      timeoutMs: 10_000,
    },
  );
  const seen = JSON.parse(result.content) as { cwd: string };
  expect(seen.cwd).not.toBe(workspace);
  expect(seen.cwd).not.toBe(process.cwd());
  // In the worker's protected cache, never the system's temporary directory (any user may write /tmp/node_modules).
  expect(path.dirname(seen.cwd)).toBe(path.join(durableAgentCacheDir(), 'mcp'));
  expect(await fs.readdir(seen.cwd)).toEqual([]);
});

test('an operator server that needs the workspace names it as ${DURABLE_AGENT_WORKSPACE}', async () => {
  await fs.writeFile(path.join(workspace, 'hello.txt'), 'hello from the workspace\n');
  const bin = path.join(__dirname, '..', '..', 'node_modules', '.bin', 'mcp-server-filesystem');
  const r = runtime();
  const { servers } = await r.listForRun({
    runServers: { files: { command: bin, args: ['${DURABLE_AGENT_WORKSPACE}'] } },
    workspace,
    network: false,
  });
  expect(servers[0]!.error).toBeUndefined();
  // What the run records is the configuration as written.
  expect(servers[0]!.config).toEqual({ command: bin, args: ['${DURABLE_AGENT_WORKSPACE}'] });
  const read = servers[0]!.tools.find((t) => t.tool === 'read_text_file')!;
  const result = await r.call(
    {
      server: 'files',
      tool: read.tool,
      source: 'run',
      config: servers[0]!.config!,
      sideEffect: read.sideEffect,
      toolsHash: servers[0]!.toolsHash,
    },
    { path: path.join(workspace, 'hello.txt') },
    {
      workspace,
      network: false,
      toolUseId: 't',
      signal: new AbortController().signal,
      heartbeat: () => {},
      timeoutMs: 10_000,
    },
  );
  expect(result).toEqual({ content: 'hello from the workspace\n', isError: false });
});
