import { Connection } from '@temporalio/client';
import { execFile, spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { SEARCH_ATTRIBUTE_DEFINITIONS } from '../../src/shared/search-attributes';
import { testAddress } from '../support/temporal';

/**
 * The deployment files: docker-compose.yml (Temporal + PostgreSQL + UI + setup + worker) and the
 * worker's Dockerfile. There is no Docker engine in CI, so the compose file is checked structurally,
 * its search-attribute setup script is run for real (with the Temporal CLI) against the test server,
 * and `docker compose config` validates it where the compose plugin (or docker-compose) exists.
 */

const ROOT = path.resolve(__dirname, '..', '..');
const COMPOSE_FILE = path.join(ROOT, 'docker-compose.yml');
const execFileAsync = promisify(execFile);

interface Service {
  image?: string;
  build?: string | { context: string; dockerfile?: string };
  environment?: Record<string, string | number | null> | string[];
  depends_on?: Record<string, { condition: string }> | string[];
  entrypoint?: string[] | string;
  command?: string[] | string;
  ports?: string[];
  volumes?: string[];
  healthcheck?: { test: string[] | string };
}
interface ComposeFile {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

/** temporal.api.enums.v1.IndexedValueType, by the CLI's spelling of the type. */
const INDEXED_VALUE_TYPES: Record<string, number> = {
  Text: 1,
  Keyword: 2,
  Int: 3,
  Double: 4,
  Bool: 5,
  Datetime: 6,
  KeywordList: 7,
};

/** Compose's own interpolation: `$$` is a literal `$`; `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `$VAR`. */
function interpolate(value: string, env: Record<string, string | undefined>): string {
  return value.replace(
    /\$(?:(\$)|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))/g,
    (
      _m,
      dollar: string | undefined,
      name: string | undefined,
      op: string | undefined,
      fallback = '',
      bare?: string,
    ) => {
      if (dollar) return '$';
      const key = (name ?? bare) as string;
      const set = env[key];
      if (op === ':-') return set ? set : fallback;
      if (op === '-') return set !== undefined ? set : fallback;
      return set ?? '';
    },
  );
}

function interpolateDeep<T>(value: T, env: Record<string, string | undefined>): T {
  if (typeof value === 'string') return interpolate(value, env) as T;
  if (Array.isArray(value)) return value.map((v) => interpolateDeep(v, env)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolateDeep(v, env)])) as T;
  }
  return value;
}

/** The compose file as `docker compose` would see it with the given environment (no `.env` file). */
async function loadCompose(env: Record<string, string | undefined> = {}): Promise<ComposeFile> {
  return interpolateDeep(parse(await fs.readFile(COMPOSE_FILE, 'utf8')) as ComposeFile, env);
}

function environment(service: Service): Record<string, string> {
  const env = service.environment ?? {};
  if (Array.isArray(env)) {
    return Object.fromEntries(env.map((line) => [line.split('=')[0], line.slice(line.indexOf('=') + 1)]));
  }
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === null ? '' : String(v)]));
}

function service(compose: ComposeFile, name: string): Service {
  const found = compose.services[name];
  if (!found) throw new Error(`docker-compose.yml has no '${name}' service; it has ${Object.keys(compose.services)}`);
  return found;
}

function dependsOn(svc: Service): Record<string, string> {
  const deps = svc.depends_on ?? {};
  if (Array.isArray(deps)) return Object.fromEntries(deps.map((d) => [d, 'service_started']));
  return Object.fromEntries(Object.entries(deps).map(([k, v]) => [k, v.condition]));
}

/** `DurableAgentStatus=Keyword …` as the setup step's environment lists it. */
function registeredSearchAttributes(svc: Service): Array<{ name: string; cliType: string }> {
  const list = environment(svc).DURABLE_AGENT_SEARCH_ATTRIBUTES ?? '';
  return list
    .split(/\s+/)
    .filter(Boolean)
    .map((pair) => {
      const [name = '', cliType = ''] = pair.split('=');
      return { name, cliType };
    });
}

/** The script a `['/bin/sh', '-c']` entrypoint runs. */
function shellScript(svc: Service): string {
  expect(svc.entrypoint).toEqual(['/bin/sh', '-c']);
  // A string command would be split into words by compose; the script must be one list item.
  expect(Array.isArray(svc.command) && svc.command.length === 1).toBe(true);
  return (svc.command as string[])[0] as string;
}

describe('docker-compose.yml', () => {
  test('has Temporal on PostgreSQL, the schema and setup steps, the Web UI and a worker, wired in order', async () => {
    const compose = await loadCompose();
    expect(Object.keys(compose.services).sort()).toEqual(
      ['postgresql', 'temporal', 'temporal-schema', 'temporal-setup', 'temporal-ui', 'worker'].sort(),
    );

    const postgres = service(compose, 'postgresql');
    expect(postgres.image).toMatch(/^postgres:\d+/);
    expect(postgres.volumes?.some((v) => v.endsWith(':/var/lib/postgresql/data'))).toBe(true);
    expect(postgres.healthcheck).toBeDefined();

    const schema = service(compose, 'temporal-schema');
    expect(schema.image).toMatch(/^temporalio\/admin-tools:\d/);
    expect(dependsOn(schema)).toEqual({ postgresql: 'service_healthy' });
    const schemaScript = shellScript(schema);
    expect(schemaScript).toMatch(/temporal-sql-tool --plugin postgres12 --ep postgresql/);
    for (const step of ['create', 'setup-schema -v 0.0', 'update-schema -d']) expect(schemaScript).toContain(step);
    expect(schemaScript).toContain('/etc/temporal/schema/postgresql/v12/$dir/versioned');

    const server = service(compose, 'temporal');
    expect(server.image).toMatch(/^temporalio\/server:\d/);
    expect(dependsOn(server)).toEqual({ 'temporal-schema': 'service_completed_successfully' });
    expect(environment(server)).toMatchObject({
      DB: 'postgres12',
      POSTGRES_SEEDS: 'postgresql',
      BIND_ON_IP: '0.0.0.0',
    });
    expect(server.ports).toEqual(['7233:7233']);
    expect(server.healthcheck).toBeDefined();

    const ui = service(compose, 'temporal-ui');
    expect(ui.image).toMatch(/^temporalio\/ui:\d/);
    expect(environment(ui).TEMPORAL_ADDRESS).toBe('temporal:7233');
    expect(ui.ports).toEqual(['8080:8080']);

    const setup = service(compose, 'temporal-setup');
    expect(setup.image).toBe(schema.image);
    expect(dependsOn(setup)).toEqual({ temporal: 'service_healthy' });
    expect(environment(setup)).toMatchObject({ TEMPORAL_ADDRESS: 'temporal:7233', TEMPORAL_NAMESPACE: 'default' });
  });

  test('the worker is built from the Dockerfile and configured by environment, with a workspace volume', async () => {
    const compose = await loadCompose();
    const worker = service(compose, 'worker');
    expect(worker.build === '.' || (typeof worker.build === 'object' && worker.build.context === '.')).toBe(true);
    expect(dependsOn(worker)).toEqual({ 'temporal-setup': 'service_completed_successfully' });
    expect(environment(worker)).toEqual({
      TEMPORAL_ADDRESS: 'temporal:7233',
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: 'durable-agent',
      ANTHROPIC_API_KEY: '',
      ANTHROPIC_BASE_URL: '',
      DURABLE_AGENT_MODEL: '',
    });
    expect(worker.volumes).toEqual(['workspace:/workspace']);
    expect(compose.volumes).toHaveProperty('workspace');
  });

  test('the environment reaches the worker, the setup step and the published ports', async () => {
    const compose = await loadCompose({
      TEMPORAL_NAMESPACE: 'agents',
      TEMPORAL_TASK_QUEUE: 'agents-q',
      ANTHROPIC_API_KEY: 'sk-test',
      ANTHROPIC_BASE_URL: 'http://fake:9000',
      DURABLE_AGENT_MODEL: 'claude-haiku-5-5',
      DURABLE_AGENT_WORKSPACE: '/srv/project',
      TEMPORAL_PORT: '17233',
      TEMPORAL_UI_PORT: '18080',
    });
    expect(environment(service(compose, 'worker'))).toEqual({
      TEMPORAL_ADDRESS: 'temporal:7233',
      TEMPORAL_NAMESPACE: 'agents',
      TEMPORAL_TASK_QUEUE: 'agents-q',
      ANTHROPIC_API_KEY: 'sk-test',
      ANTHROPIC_BASE_URL: 'http://fake:9000',
      DURABLE_AGENT_MODEL: 'claude-haiku-5-5',
    });
    expect(service(compose, 'worker').volumes).toEqual(['/srv/project:/workspace']);
    expect(environment(service(compose, 'temporal-setup')).TEMPORAL_NAMESPACE).toBe('agents');
    expect(environment(service(compose, 'temporal-ui')).TEMPORAL_DEFAULT_NAMESPACE).toBe('agents');
    expect(service(compose, 'temporal').ports).toEqual(['17233:7233']);
    expect(service(compose, 'temporal-ui').ports).toEqual(['18080:8080']);
  });

  test('the setup step registers exactly the search attributes the workflow keeps current', async () => {
    const setup = service(await loadCompose(), 'temporal-setup');
    expect(registeredSearchAttributes(setup)).toEqual([...SEARCH_ATTRIBUTE_DEFINITIONS]);
    expect(shellScript(setup)).toContain('temporal operator search-attribute create');
  });

  test('the setup script, run for real, creates the namespace and registers the attributes, idempotently', async () => {
    const cli = process.env.DA_TEST_TEMPORAL_CLI;
    if (!cli) throw new Error('DA_TEST_TEMPORAL_CLI is not set: run the suite with `npm test`.');
    const setup = service(await loadCompose(), 'temporal-setup');
    const namespace = `compose-${Date.now().toString(36)}`;
    const env = {
      ...process.env,
      ...environment(setup),
      TEMPORAL_ADDRESS: testAddress(),
      TEMPORAL_NAMESPACE: namespace,
      // The CLI binary is called `temporal`, as in the admin-tools image.
      PATH: `${path.dirname(cli)}:${process.env.PATH ?? ''}`,
    };
    const script = shellScript(setup);
    for (let run = 1; run <= 2; run++) {
      const { stdout } = await execFileAsync('/bin/sh', ['-c', script], { env, timeout: 90_000 });
      expect(stdout).toContain(`Namespace '${namespace}' ready`);
    }

    const connection = await Connection.connect({ address: testAddress() });
    try {
      const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
      for (const { name, cliType } of SEARCH_ATTRIBUTE_DEFINITIONS) {
        expect([name, customAttributes?.[name]]).toEqual([name, INDEXED_VALUE_TYPES[cliType]]);
      }
    } finally {
      await connection.close();
    }
  }, 120_000);
});

describe('Dockerfile', () => {
  async function instructions(): Promise<Array<{ op: string; args: string }>> {
    const text = (await fs.readFile(path.join(ROOT, 'Dockerfile'), 'utf8')).replace(/\\\n/g, ' ');
    return text
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('#'))
      .map((line) => {
        const [op = '', ...rest] = line.split(/\s+/);
        return { op: op.toUpperCase(), args: rest.join(' ') };
      });
  }

  test('is multi-stage: the runtime stage runs the worker from the compiled build and works in /workspace', async () => {
    const all = await instructions();
    const stages = all.filter((i) => i.op === 'FROM');
    expect(stages.map((s) => s.args)).toEqual([
      expect.stringMatching(/ AS build$/),
      expect.stringMatching(/ AS runtime$/),
    ]);
    const runtime = all.slice(all.lastIndexOf(stages[1]!));
    const cmd = runtime.filter((i) => i.op === 'CMD').at(-1);
    expect(JSON.parse(cmd?.args ?? 'null')).toEqual(['node', '/app/bin/durable-agent.js', 'worker']);
    // bin/durable-agent.js loads ../dist/src/cli/main.js; the worker loads dist/workflow-bundle.js.
    expect(runtime).toContainEqual({ op: 'WORKDIR', args: '/app' });
    expect(runtime).toContainEqual({ op: 'COPY', args: '--from=build /app/dist ./dist' });
    expect(runtime).toContainEqual({ op: 'COPY', args: 'bin ./bin' });
    expect(runtime.some((i) => i.op === 'RUN' && /npm ci --omit=dev/.test(i.args))).toBe(true);
    const build = all.slice(0, all.indexOf(stages[1]!));
    expect(build.some((i) => i.op === 'RUN' && i.args === 'npm run build')).toBe(true);
    // The compose file mounts the workspace where the worker's default workspace (its cwd) is.
    expect(runtime.filter((i) => i.op === 'WORKDIR').at(-1)?.args).toBe('/workspace');
    expect(runtime.filter((i) => i.op === 'USER').at(-1)?.args).toBe('node');
  });

  test('copies only files that exist and that .dockerignore lets into the build context', async () => {
    const ignored = (await fs.readFile(path.join(ROOT, '.dockerignore'), 'utf8'))
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    const copies = (await instructions()).filter((i) => i.op === 'COPY' && !i.args.startsWith('--from'));
    const sources = copies.flatMap((c) => c.args.split(/\s+/).slice(0, -1));
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      await expect(fs.stat(path.join(ROOT, source))).resolves.toBeDefined();
      expect([source, ignored.filter((p) => source === p || source.startsWith(`${p}/`))]).toEqual([source, []]);
    }
    // What `npm run build` needs: the compiler configs, the sources and the bundling script.
    for (const needed of [
      'package.json',
      'package-lock.json',
      'tsconfig.json',
      'tsconfig.build.json',
      'src',
      'scripts',
    ]) {
      expect(sources).toContain(needed);
    }
  });
});

function composeCommand(): { cmd: string; args: string[] } | undefined {
  const plugin = spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' });
  if (plugin.status === 0) return { cmd: 'docker', args: ['compose'] };
  const standalone = spawnSync('docker-compose', ['version'], { stdio: 'ignore' });
  if (standalone.status === 0) return { cmd: 'docker-compose', args: [] };
  return undefined;
}

const compose = composeCommand();
const withCompose = compose ? test : test.skip;
withCompose(
  compose
    ? `\`${[compose.cmd, ...compose.args].join(' ')} config\` accepts the file`
    : 'docker compose config accepts the file (skipped: neither the docker compose plugin nor docker-compose is installed)',
  async () => {
    const { cmd, args } = compose!;
    const result = spawnSync(cmd, [...args, '-f', COMPOSE_FILE, 'config', '--quiet'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, ANTHROPIC_API_KEY: '' },
    });
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
  },
);
