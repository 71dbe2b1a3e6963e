/**
 * Findings (critical, high): "a worker's MCP configuration file may lie in a workspace" and "the
 * operator's agents folder may lie in a workspace". Every file the worker reads as its operator's
 * gets the rule the hooks settings file had: a workspace holding it is refused at run start and
 * before every call. These are the rules one by one; planted-operator-files.test.ts runs the attacks
 * whole. (Codec keys are read from the environment only: there is no file to protect.)
 */
import { mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { WorkspacePolicy, WorkspaceRefusedError, type WorkspacePolicyOptions } from '../../src/tools/workspace-roots';
import { HOME_TOOL_FOLDERS, operatorPaths } from '../../src/safe-fs/operator-files';
import { tempWorkspace } from '../support/temporal';

const tmp = realpathSync(os.tmpdir());
const nowhere = path.join(tmp, 'nowhere-h2', 'settings.json');
const policy = (options: Partial<WorkspacePolicyOptions> = {}) =>
  new WorkspacePolicy({ roots: [tmp], settingsFile: nowhere, env: {}, ...options });

async function refusal(p: WorkspacePolicy, workspace: string): Promise<WorkspaceRefusedError> {
  const error = await p.admit(workspace).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof WorkspaceRefusedError)) throw new Error(`${workspace} was admitted`);
  return error;
}

test.each([
  ['DURABLE_AGENT_MCP_CONFIG', (f: string) => ({ env: { DURABLE_AGENT_MCP_CONFIG: f } })],
  ["the worker's MCP option configFile", (f: string) => ({ mcpConfigFile: f })],
])(
  "a workspace holding the worker's MCP configuration file (%s), even one not written yet, is refused",
  async (_l, set) => {
    const ws = await tempWorkspace('opfiles-mcp');
    const file = path.join(ws, 'config', 'mcp.json');
    const error = await refusal(policy(set(file)), ws);
    expect(error.rule).toBe("worker's own files");
    expect(error.message).toContain(`it holds the worker's MCP configuration file (${file}; DURABLE_AGENT_MCP_CONFIG)`);
    expect(error.message).toContain("a file the model can write is never read as the operator's");
    // A folder beside it is a workspace like any other.
    mkdirSync(path.join(ws, 'project'));
    await expect(policy(set(file)).admit(path.join(ws, 'project'))).resolves.toBe(path.join(ws, 'project'));
  },
);

test.each([
  ['DURABLE_AGENT_AGENTS_DIR', (d: string) => ({ env: { DURABLE_AGENT_AGENTS_DIR: d } })],
  ['--agents-dir', (d: string) => ({ agentsDir: d })],
])("the operator's agents folder (%s): a workspace holding it, or inside it, is refused", async (_l, set) => {
  const ws = await tempWorkspace('opfiles-agents');
  const dir = path.join(ws, 'ops', 'agents');
  mkdirSync(path.join(dir, 'inner'), { recursive: true });
  const holding = await refusal(policy(set(dir)), ws);
  expect(holding.rule).toBe("worker's own files");
  expect(holding.message).toContain(`it holds the operator's agents folder (${dir}; DURABLE_AGENT_AGENTS_DIR`);
  expect((await refusal(policy(set(dir)), path.join(dir, 'inner'))).rule).toBe("worker's own files");
});

test('an operator file configured through a link that leads into a workspace is refused as it resolves', async () => {
  const ws = await tempWorkspace('opfiles-link');
  const elsewhere = await tempWorkspace('opfiles-link-config');
  // Dangling: writing through it would create the configuration in the workspace.
  symlinkSync(path.join(ws, 'cfg'), path.join(elsewhere, 'cfg'));
  const file = path.join(elsewhere, 'cfg', 'mcp.json');
  const error = await refusal(policy({ mcpConfigFile: file }), ws);
  expect(error.message).toContain(`(${file}, which resolves to ${path.join(ws, 'cfg', 'mcp.json')}`);
});

test("the Temporal profile where the worker reads it: XDG_CONFIG_HOME in a workspace makes it the workspace's", async () => {
  const ws = await tempWorkspace('opfiles-xdg');
  const error = await refusal(policy({ env: { XDG_CONFIG_HOME: path.join(ws, '.config') } }), ws);
  expect(error.message).toContain("the worker's Temporal connection profile");
  expect(error.message).toContain(path.join(ws, '.config', 'temporalio', 'temporal.toml'));
});

test('a root holding an operator file is named at start, each file with its setting', async () => {
  const root = await tempWorkspace('opfiles-root');
  const mcp = path.join(root, 'mcp.json');
  const agents = path.join(root, 'agents');
  const lines = await policy({ roots: [root], mcpConfigFile: mcp, agentsDir: agents }).rootsHoldingOwnFiles();
  expect(lines).toEqual([
    `the workspace root ${root} holds the worker's MCP configuration file (${mcp}): no workspace holding it is accepted`,
    `the workspace root ${root} holds the operator's agents folder (${agents}): no workspace holding it is accepted`,
  ]);
});

test("the operator's files: settings, MCP configuration, agents, Temporal profile, TLS files, SSH keys, cache and data; no codec key file", () => {
  const paths = operatorPaths({
    settingsFile: '/etc/da/settings.json',
    env: {
      DURABLE_AGENT_MCP_CONFIG: '/etc/da/mcp.json',
      DURABLE_AGENT_AGENTS_DIR: '/etc/da/agents',
      TEMPORAL_CONFIG_FILE: '/etc/da/temporal.toml',
      TEMPORAL_TLS_CLIENT_KEY_PATH: '/etc/da/client.key',
      DURABLE_AGENT_CODEC_KEYS: 'k:AAAA',
    },
  });
  expect(paths.map((p) => [p.setting, p.path])).toEqual([
    ['DURABLE_AGENT_SETTINGS', '/etc/da/settings.json'],
    ['DURABLE_AGENT_MCP_CONFIG', '/etc/da/mcp.json'],
    ['DURABLE_AGENT_AGENTS_DIR or --agents-dir', '/etc/da/agents'],
    ['TEMPORAL_CONFIG_FILE', '/etc/da/temporal.toml'],
    ['TEMPORAL_TLS_CLIENT_KEY_PATH', '/etc/da/client.key'],
    ['~/.ssh', path.join(os.homedir(), '.ssh')],
    ['XDG_CACHE_HOME', path.join(os.homedir(), '.cache', 'durable-agent')],
    ['XDG_DATA_HOME', path.join(os.homedir(), '.local', 'share', 'durable-agent')],
    // The home's tool folders (home-tool-folders.test.ts).
    ...HOME_TOOL_FOLDERS.map((folder) => ['HOME', path.join(os.homedir(), folder)]),
  ]);
});

test("durable-agent's cache (the Temporal CLI the CLI runs) and data folders are the operator's too", async () => {
  const ws = await tempWorkspace('opfiles-cache');
  const cache = policy({ env: { XDG_CACHE_HOME: path.join(ws, 'cache') } });
  expect((await refusal(cache, ws)).message).toContain("durable-agent's cache (the Temporal CLI it runs)");
  const data = policy({ env: { XDG_DATA_HOME: ws } });
  mkdirSync(path.join(ws, 'durable-agent', 'inner'), { recursive: true });
  expect((await refusal(data, path.join(ws, 'durable-agent', 'inner'))).message).toContain("durable-agent's data");
});
