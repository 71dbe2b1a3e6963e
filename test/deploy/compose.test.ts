/**
 * Issue 12, item 5: the deployment files are what the cluster test runs. docker-compose.yml runs the
 * Temporal server with the cluster test's configuration file (deploy/temporal/config/cluster.yaml),
 * schema and namespace scripts, certificate script and worker settings (deploy/worker.env); this test
 * checks the two agree, down to the configuration the server renders from each environment. There is
 * no Docker engine in CI: the compose file is checked as data, the setup script runs for real against
 * the test server, and `docker compose config` validates the file where compose is installed.
 */
import { Connection } from '@temporalio/client';
import { execFile, spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { cachedServerBinaries, TEMPORAL_SERVER_VERSION } from '../../scripts/cluster/binaries';
import { clusterServerEnv, serverArgs } from '../../scripts/cluster/cluster';
import { deployedWorkerEnv } from '../../scripts/cluster/deploy-files';
import { SEARCH_ATTRIBUTE_DEFINITIONS } from '../../src/shared/search-attributes';
import {
  COMPOSE_FILE,
  ROOT,
  composeCommand,
  dockerfileInstructions as instructions,
  dependsOn,
  environment,
  leaves,
  loadCompose,
  mounts,
  rawCompose,
  service,
  templateEnvNames,
} from '../support/cluster-compose';
import { testAddress } from '../support/temporal';

const execFileAsync = promisify(execFile);
const DEPLOY = path.join(ROOT, 'deploy');
const TEMPLATE = path.join(DEPLOY, 'temporal', 'config', 'cluster.yaml');
/** What compose needs set (the codec keys have no default: runs are encrypted). */
const REQUIRED = { DURABLE_AGENT_CODEC_KEYS: 'k1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' };
const VERSION = TEMPORAL_SERVER_VERSION.replace(/^v/, '');
/** The server environment of the test cluster, with made-up ports and paths. */
const testServerEnv = clusterServerEnv({
  dbPort: 15432,
  ports: [17233, 17243, 16933, 17234, 16934, 17235, 16935, 17239, 16939],
  certs: '/tmp/test-certs',
  deploy: DEPLOY,
});

describe('docker-compose.yml', () => {
  test('has PostgreSQL, certificates, schema, the Temporal server, setup, codec server, Web UI and workers, wired in order', async () => {
    const compose = await loadCompose(REQUIRED);
    expect(Object.keys(compose.services).sort()).toEqual([
      'certs',
      'codec-server',
      'postgresql',
      'temporal',
      'temporal-schema',
      'temporal-setup',
      'temporal-ui',
      'worker',
    ]);
    // PostgreSQL 15, the version the cluster test runs on (Debian's package).
    expect(service(compose, 'postgresql').image).toBe('postgres:15');
    expect(dependsOn(service(compose, 'temporal-schema'))).toEqual({ postgresql: 'service_healthy' });
    expect(dependsOn(service(compose, 'temporal'))).toEqual({
      'temporal-schema': 'service_completed_successfully',
      certs: 'service_completed_successfully',
    });
    expect(dependsOn(service(compose, 'temporal-setup'))).toEqual({ temporal: 'service_healthy' });
    expect(dependsOn(service(compose, 'temporal-ui'))).toEqual({ temporal: 'service_healthy' });
    expect(dependsOn(service(compose, 'worker'))).toEqual({ 'temporal-setup': 'service_completed_successfully' });
    // The Temporal images are the version the test builds from Go (and .ci/run caches).
    expect(service(compose, 'temporal').image).toBe(`temporalio/server:${VERSION}`);
    expect(service(compose, 'temporal-schema').image).toBe(`temporalio/admin-tools:${VERSION}`);
    expect(service(compose, 'temporal-setup').image).toBe(`temporalio/admin-tools:${VERSION}`);
    // `npm test`'s setup builds (and caches) that version through scripts/cluster/binaries.ts, which
    // names it (TEMPORAL_SERVER_VERSION): the images and the cluster test run the same server.
    expect(await fs.readFile(path.join(ROOT, 'scripts', 'ensure-setup.mjs'), 'utf8')).toContain(
      "path.join(root, 'dist', 'scripts', 'cluster', 'binaries.js')",
    );
  });

  test("the Temporal server runs the cluster test's configuration file, started the same way", async () => {
    const temporal = service(await loadCompose(REQUIRED), 'temporal');
    expect(mounts(temporal)['/deploy/temporal']).toBe('./deploy/temporal:ro');
    expect(temporal.working_dir).toBe('/deploy/temporal');
    expect(temporal.entrypoint).toEqual(['/bin/sh', '-c']);
    expect(temporal.command).toEqual([
      `BROADCAST_ADDRESS=$(hostname -i) exec temporal-server ${serverArgs('/deploy/temporal').join(' ')}`,
    ]);
    const env = environment(temporal);
    const template = await fs.readFile(TEMPLATE, 'utf8');
    const names = templateEnvNames(template);
    const required = /range \$name := list((?: "[A-Z_]+")+)/.exec(template)?.[1]?.match(/[A-Z_]+/g) ?? [];
    expect(required.length).toBeGreaterThan(0);
    for (const name of [...Object.keys(env), ...Object.keys(testServerEnv)])
      expect([name, names.has(name)]).toEqual([name, true]);
    for (const name of required) expect([name, env[name] ? 'set' : 'missing']).toEqual([name, 'set']);
    // The same settings; the test sets its ports, shard count, log level and dynamic config path
    // (compose keeps the template's defaults) and binds to loopback (compose to the container's address).
    const testOnly = Object.keys(testServerEnv).filter((n) => /_PORT$/.test(n) && n !== 'DB_PORT');
    const expected = Object.keys(testServerEnv)
      .filter((n) => !testOnly.includes(n) && !['NUM_HISTORY_SHARDS', 'LOG_LEVEL', 'DYNAMIC_CONFIG_FILE'].includes(n))
      .sort();
    expect(Object.keys(env).sort()).toEqual(expected);
    expect(env).toMatchObject({ TLS_CERT: '/certs/server.pem', TLS_KEY: '/certs/server.key', TLS_CA: '/certs/ca.pem' });
    expect(env.TLS_SERVER_NAME).toBe(testServerEnv.TLS_SERVER_NAME);
    expect(mounts(temporal)['/certs']).toBe('certs:ro');
  });

  test("rendered by the server itself, compose's and the test's configurations differ only in addresses, ports, paths and credentials", async () => {
    const { server } = cachedServerBinaries();
    await expect(fs.access(server)).resolves.toBeUndefined();
    const render = async (env: Record<string, string>) => {
      const { stdout } = await execFileAsync(server, [...serverArgs('.').slice(0, 6), 'render-config'], {
        cwd: path.join(DEPLOY, 'temporal'),
        env: { PATH: process.env.PATH ?? '', ...env },
      });
      return leaves(parse(stdout));
    };
    const composeEnv = environment(service(await loadCompose(REQUIRED), 'temporal'));
    const [fromCompose, fromTest] = await Promise.all([render(composeEnv), render(testServerEnv)]);
    expect([...fromCompose.keys()].sort()).toEqual([...fromTest.keys()].sort());
    const mayDiffer =
      /(connectAddr|password|user|certFile|keyFile|rootCaFiles\.\d+|clientCaFiles\.\d+|grpcPort|httpPort|membershipPort|bindOnIP|broadcastAddress|rpcAddress|httpAddress|dynamicConfigClient\.filepath|log\.level|numHistoryShards)$/;
    const differences = [...fromCompose.keys()].filter(
      (k) => !mayDiffer.test(k) && fromCompose.get(k) !== fromTest.get(k),
    );
    expect(differences.map((k) => `${k}: ${String(fromCompose.get(k))} vs ${String(fromTest.get(k))}`)).toEqual([]);
    // TLS on the frontend in both, and stock dynamic config (no eager activity dispatch).
    for (const rendered of [fromCompose, fromTest]) {
      expect(rendered.get('global.tls.frontend.server.certFile')).toMatch(/server\.pem$/);
      expect(rendered.get('global.tls.frontend.server.requireClientAuth')).toBe(false);
      expect(rendered.get('persistence.datastores.postgres-default.sql.pluginName')).toBe('postgres12');
    }
    const dynamic = await fs.readFile(path.join(DEPLOY, 'temporal', 'config', 'dynamicconfig', 'cluster.yaml'), 'utf8');
    expect(parse(dynamic) ?? {}).toEqual({});
  });

  test('certificates, schema and namespace come from the scripts the cluster test runs', async () => {
    const compose = await loadCompose(REQUIRED);
    const certs = service(compose, 'certs');
    expect(certs.entrypoint).toEqual(['/bin/sh', '/deploy/tls/make-certs.sh', '/certs', 'temporal', 'localhost']);
    expect(mounts(certs)).toEqual({ '/deploy/tls': './deploy/tls:ro', '/certs': 'certs' });
    const schema = service(compose, 'temporal-schema');
    expect(schema.entrypoint).toEqual(['/bin/sh', '/deploy/temporal/setup-schema.sh']);
    expect(mounts(schema)['/deploy/temporal']).toBe('./deploy/temporal:ro');
    // The schema step reaches the database the server uses.
    const serverEnv = environment(service(compose, 'temporal'));
    for (const name of ['DB_HOST', 'DB_PORT', 'DB_USER', 'DB_PASSWORD']) {
      expect([name, environment(schema)[name]]).toEqual([name, serverEnv[name]]);
    }
    const setup = service(compose, 'temporal-setup');
    expect(setup.entrypoint).toEqual(['/bin/sh', '/deploy/temporal/setup-namespace.sh']);
    expect(environment(setup)).toMatchObject({
      TEMPORAL_ADDRESS: 'temporal:7233',
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: '/certs/ca.pem',
      TEMPORAL_TLS_SERVER_NAME: 'temporal',
    });
    const script = await fs.readFile(path.join(DEPLOY, 'temporal', 'setup-namespace.sh'), 'utf8');
    const list = /DURABLE_AGENT_SEARCH_ATTRIBUTES:-([^}]*)\}/.exec(script)?.[1] ?? '';
    expect(
      list
        .split(/\s+/)
        .filter(Boolean)
        .map((pair) => ({ name: pair.split('=')[0], cliType: pair.split('=')[1] })),
    ).toEqual([...SEARCH_ATTRIBUTE_DEFINITIONS]);
  });

  test("workers and the codec server: the deployment's worker settings, TLS and codec keys, as the cluster test runs them", async () => {
    const raw = await rawCompose();
    for (const name of ['worker', 'codec-server']) {
      expect([name, environment(service(raw, name)).DURABLE_AGENT_CODEC_KEYS]).toEqual([
        name,
        expect.stringMatching(/^\$\{DURABLE_AGENT_CODEC_KEYS:\?/),
      ]);
    }
    await expect(loadCompose({})).rejects.toThrow(/DURABLE_AGENT_CODEC_KEYS/);
    const compose = await loadCompose(REQUIRED);
    const worker = service(compose, 'worker');
    expect(worker.env_file).toBe('deploy/worker.env');
    expect(Object.keys(deployedWorkerEnv()).length).toBeGreaterThan(0);
    // The chaos test and the cluster bench start their workers with that file too.
    expect(await fs.readFile(path.join(ROOT, 'test', 'cluster', 'chaos.test.ts'), 'utf8')).toContain(
      '...deployedWorkerEnv()',
    );
    expect(environment(worker)).toEqual({
      TEMPORAL_ADDRESS: 'temporal:7233',
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: 'durable-agent',
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: '/certs/ca.pem',
      TEMPORAL_TLS_SERVER_NAME: 'temporal',
      DURABLE_AGENT_CODEC_KEYS: REQUIRED.DURABLE_AGENT_CODEC_KEYS,
      ANTHROPIC_API_KEY: '',
      ANTHROPIC_BASE_URL: '',
      DURABLE_AGENT_MODEL: '',
    });
    expect(mounts(worker)).toEqual({ '/workspace': 'workspace', '/certs': 'certs:ro' });
    expect(worker.security_opt).toEqual(['seccomp=unconfined', 'apparmor=unconfined']);
    const codec = service(compose, 'codec-server');
    expect(codec.command).toEqual(['node', '/app/bin/durable-agent.js', 'codec-server', '--port', '8081']);
    const ui = environment(service(compose, 'temporal-ui'));
    expect(ui).toMatchObject({
      TEMPORAL_ADDRESS: 'temporal:7233',
      TEMPORAL_TLS_CA: '/certs/ca.pem',
      TEMPORAL_CODEC_ENDPOINT: 'http://localhost:8081',
    });
    expect(environment(codec).DURABLE_AGENT_CODEC_CORS_ORIGINS).toBe('http://localhost:8080');
  });

  test('the environment reaches the services and the published ports', async () => {
    const compose = await loadCompose({
      ...REQUIRED,
      TEMPORAL_NAMESPACE: 'agents',
      TEMPORAL_TASK_QUEUE: 'agents-q',
      ANTHROPIC_API_KEY: 'sk-test',
      POSTGRES_PASSWORD: 'pw',
      DURABLE_AGENT_WORKSPACE: '/srv/project',
      TEMPORAL_PORT: '17233',
      TEMPORAL_UI_PORT: '18080',
      CODEC_PORT: '18081',
    });
    expect(environment(service(compose, 'worker'))).toMatchObject({
      TEMPORAL_NAMESPACE: 'agents',
      TEMPORAL_TASK_QUEUE: 'agents-q',
      ANTHROPIC_API_KEY: 'sk-test',
    });
    expect(mounts(service(compose, 'worker'))['/workspace']).toBe('/srv/project');
    for (const name of ['postgresql', 'temporal-schema', 'temporal']) {
      const env = environment(service(compose, name));
      expect([name, env.POSTGRES_PASSWORD ?? env.DB_PASSWORD]).toEqual([name, 'pw']);
    }
    expect(environment(service(compose, 'temporal-setup')).TEMPORAL_NAMESPACE).toBe('agents');
    expect(environment(service(compose, 'temporal-ui'))).toMatchObject({
      TEMPORAL_DEFAULT_NAMESPACE: 'agents',
      TEMPORAL_CODEC_ENDPOINT: 'http://localhost:18081',
    });
    expect(environment(service(compose, 'codec-server')).DURABLE_AGENT_CODEC_CORS_ORIGINS).toBe(
      'http://localhost:18080',
    );
    expect(service(compose, 'temporal').ports).toEqual(['17233:7233']);
    expect(service(compose, 'temporal-ui').ports).toEqual(['18080:8080']);
    expect(service(compose, 'codec-server').ports).toEqual(['18081:8081']);
  });

  test('setup-namespace.sh, run for real, creates the namespace and registers the attributes, idempotently', async () => {
    const cli = process.env.DA_TEST_TEMPORAL_CLI;
    if (!cli) throw new Error('DA_TEST_TEMPORAL_CLI is not set: run the suite with `npm test`.');
    const namespace = `compose-${Date.now().toString(36)}`;
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/',
      TEMPORAL_CLI: cli,
      TEMPORAL_ADDRESS: testAddress(),
      TEMPORAL_NAMESPACE: namespace,
    };
    for (let run = 1; run <= 2; run++) {
      const { stdout } = await execFileAsync('/bin/sh', [path.join(DEPLOY, 'temporal', 'setup-namespace.sh')], {
        env,
        timeout: 90_000,
      });
      expect(stdout).toContain(`Namespace '${namespace}' ready`);
    }
    const connection = await Connection.connect({ address: testAddress() });
    try {
      const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
      expect(Object.keys(customAttributes ?? {}).sort()).toEqual(
        expect.arrayContaining(SEARCH_ATTRIBUTE_DEFINITIONS.map((d) => d.name)),
      );
    } finally {
      await connection.close();
    }
  }, 120_000);
});

describe('Dockerfile', () => {
  test('is multi-stage: the runtime stage runs the worker from the compiled build, with openssl and bubblewrap', async () => {
    const all = await instructions();
    const stages = all.filter((i) => i.op === 'FROM');
    expect(stages.map((s) => s.args)).toEqual([
      expect.stringMatching(/ AS build$/),
      expect.stringMatching(/ AS runtime$/),
    ]);
    const runtime = all.slice(all.lastIndexOf(stages[1]!));
    expect(JSON.parse(runtime.filter((i) => i.op === 'CMD').at(-1)?.args ?? 'null')).toEqual([
      'node',
      '/app/bin/durable-agent.js',
      'worker',
    ]);
    expect(runtime).toContainEqual({ op: 'COPY', args: '--from=build /app/dist ./dist' });
    expect(runtime).toContainEqual({ op: 'COPY', args: 'bin ./bin' });
    const apt = runtime.find((i) => i.op === 'RUN' && i.args.includes('apt-get install'))?.args ?? '';
    for (const pkg of ['tini', 'openssl', 'bubblewrap'])
      expect([pkg, apt.split(/\s+/).includes(pkg)]).toEqual([pkg, true]);
    expect(all.slice(0, all.indexOf(stages[1]!)).some((i) => i.op === 'RUN' && i.args === 'npm run build')).toBe(true);
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
    for (const source of sources) {
      await expect(fs.stat(path.join(ROOT, source))).resolves.toBeDefined();
      expect([source, ignored.filter((p) => source === p || source.startsWith(`${p}/`))]).toEqual([source, []]);
    }
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

const compose = composeCommand();
(compose ? test : test.skip)(
  compose
    ? `\`${[compose.cmd, ...compose.args].join(' ')} config\` accepts the file`
    : 'docker compose config accepts the file (skipped: neither the docker compose plugin nor docker-compose is installed)',
  () => {
    const result = spawnSync(compose!.cmd, [...compose!.args, '-f', COMPOSE_FILE, 'config', '--quiet'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, ...REQUIRED },
    });
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
  },
);
