/**
 * docker-compose.yml as `docker compose` reads it (its own interpolation, no `.env` file), for
 * test/deploy/compose.test.ts: there is no Docker engine in CI, so the file is checked as data.
 */
import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';

export const ROOT = path.resolve(__dirname, '..', '..');
export const COMPOSE_FILE = path.join(ROOT, 'docker-compose.yml');

export interface Service {
  image?: string;
  build?: string | { context: string; dockerfile?: string };
  user?: string;
  working_dir?: string;
  env_file?: string | string[];
  environment?: Record<string, string | number | null> | string[];
  depends_on?: Record<string, { condition: string }> | string[];
  entrypoint?: string[] | string;
  command?: string[] | string;
  ports?: string[];
  volumes?: string[];
  healthcheck?: { test: string[] | string };
  security_opt?: string[];
}
export interface ComposeFile {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

/**
 * Compose's interpolation: `$$` is a literal `$`; `${VAR}`, `${VAR:-default}`, `${VAR-default}`,
 * `${VAR:?message}` (an error when unset or empty), `$VAR`.
 */
export function interpolate(value: string, env: Record<string, string | undefined>): string {
  return value.replace(
    /\$(?:(\$)|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))/g,
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
      if (op === ':?' && !set) throw new Error(`required variable ${key} is missing a value: ${fallback}`);
      if (op === '?' && set === undefined) throw new Error(`required variable ${key} is missing: ${fallback}`);
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

export async function rawCompose(): Promise<ComposeFile> {
  return parse(await fs.readFile(COMPOSE_FILE, 'utf8')) as ComposeFile;
}

/** The compose file as `docker compose` would see it with the given environment. */
export async function loadCompose(env: Record<string, string | undefined>): Promise<ComposeFile> {
  return interpolateDeep(await rawCompose(), env);
}

export function environment(service: Service): Record<string, string> {
  const env = service.environment ?? {};
  if (Array.isArray(env)) {
    return Object.fromEntries(env.map((line) => [line.split('=')[0], line.slice(line.indexOf('=') + 1)]));
  }
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === null ? '' : String(v)]));
}

export function service(compose: ComposeFile, name: string): Service {
  const found = compose.services[name];
  if (!found) throw new Error(`docker-compose.yml has no '${name}' service; it has ${Object.keys(compose.services)}`);
  return found;
}

export function dependsOn(svc: Service): Record<string, string> {
  const deps = svc.depends_on ?? {};
  if (Array.isArray(deps)) return Object.fromEntries(deps.map((d) => [d, 'service_started']));
  return Object.fromEntries(Object.entries(deps).map(([k, v]) => [k, v.condition]));
}

/** `host:container[:mode]` volume entries as a map from container path to `host[:mode]`. */
export function mounts(svc: Service): Record<string, string> {
  return Object.fromEntries(
    (svc.volumes ?? []).map((v) => {
      const [host = '', target = '', mode] = v.split(':');
      return [target, mode ? `${host}:${mode}` : host];
    }),
  );
}

/** Every `env "NAME"` the server's config template reads. */
export function templateEnvNames(template: string): Set<string> {
  return new Set([...template.matchAll(/env "([A-Z0-9_]+)"/g)].map((m) => m[1] as string));
}

/** Leaf paths of a parsed YAML document, `a.b.0.c` → value. */
export function leaves(value: unknown, prefix = ''): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      for (const [p, leaf] of leaves(v, prefix ? `${prefix}.${k}` : k)) out.set(p, leaf);
    }
  } else {
    out.set(prefix, value);
  }
  return out;
}

/** The Dockerfile's instructions (continuation lines joined, comments dropped). */
export async function dockerfileInstructions(): Promise<Array<{ op: string; args: string }>> {
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

/** `docker compose` or `docker-compose`, when either is installed. */
export function composeCommand(): { cmd: string; args: string[] } | undefined {
  if (spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status === 0)
    return { cmd: 'docker', args: ['compose'] };
  if (spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status === 0)
    return { cmd: 'docker-compose', args: [] };
  return undefined;
}
