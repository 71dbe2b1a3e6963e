import * as os from 'node:os';
import * as path from 'node:path';
import { CODEC_KEYS_ENV, parseCodecKeys } from '../codec/keys';
import { EncryptedStore } from './encrypted-store';
import { DirectoryObjects, DirectoryStore, VerifiedStore } from './objects';
import { S3Objects } from './s3-store';
import type { CheckpointStore } from './store';

/**
 * Which checkpoint store a worker uses, from `DURABLE_AGENT_CHECKPOINTS`:
 * - unset or empty: the embedded default, `$XDG_DATA_HOME/durable-agent/checkpoints`
 *   (`~/.local/share/durable-agent/checkpoints` without XDG_DATA_HOME);
 * - `off`: no checkpoints;
 * - an absolute directory path: the embedded store there;
 * - `s3://bucket/prefix`: S3-compatible storage, endpoint and credentials from the AWS SDK's standard
 *   environment (`AWS_ENDPOINT_URL`, `AWS_REGION` (default us-east-1), `AWS_ACCESS_KEY_ID`,
 *   `AWS_SECRET_ACCESS_KEY`); with `AWS_ENDPOINT_URL` set, path-style addressing (MinIO, SeaweedFS).
 * With `DURABLE_AGENT_CODEC_KEYS` set, whatever the store, contents and manifests are encrypted with
 * those keys before they leave the worker.
 */

export const CHECKPOINTS_ENV = 'DURABLE_AGENT_CHECKPOINTS';

export type CheckpointsSetting =
  { kind: 'off' } | { kind: 'directory'; path: string } | { kind: 's3'; bucket: string; prefix: string };

const ACCEPTED = `${CHECKPOINTS_ENV} accepts 'off', an absolute directory path, or s3://bucket/prefix (unset: the default directory)`;
/** S3's bucket naming rules (lowercase letters, digits, '.', '-'; 3 to 63; a letter or digit at each end). */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
/** Key prefix segments: printable ASCII without the characters S3 and its clones treat specially. */
const PREFIX_SEGMENT = /^[A-Za-z0-9!_.*'()=+,;:@$ -]+$/;
const MAX_PREFIX = 512;
const MAX_DIRECTORY = 4096;

export class CheckpointsSettingError extends Error {
  override readonly name = 'CheckpointsSettingError';
}

function shown(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}

/** The default embedded store's directory. */
export function defaultCheckpointsDirectory(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_DATA_HOME;
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.local', 'share');
  return path.join(base, 'durable-agent', 'checkpoints');
}

/** Parses the variable's value; throws a `CheckpointsSettingError` saying what is accepted. */
export function parseCheckpointsSetting(
  value: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): CheckpointsSetting {
  const text = (value ?? '').trim();
  if (text === '') return { kind: 'directory', path: defaultCheckpointsDirectory(env) };
  if (text.toLowerCase() === 'off') return { kind: 'off' };
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(text)) {
    throw new CheckpointsSettingError(`${CHECKPOINTS_ENV} contains a control character. ${ACCEPTED}.`);
  }
  if (/^s3:/i.test(text)) return parseS3(text);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    throw new CheckpointsSettingError(`${CHECKPOINTS_ENV}=${shown(text)} names an unsupported scheme. ${ACCEPTED}.`);
  }
  if (!path.isAbsolute(text)) {
    throw new CheckpointsSettingError(
      `${CHECKPOINTS_ENV}=${shown(text)} is not an absolute path ('~' and relative paths are not expanded). ${ACCEPTED}.`,
    );
  }
  if (Buffer.byteLength(text) > MAX_DIRECTORY) {
    throw new CheckpointsSettingError(`${CHECKPOINTS_ENV} is longer than ${MAX_DIRECTORY} bytes. ${ACCEPTED}.`);
  }
  const resolved = path.resolve(text);
  if (resolved === '/') throw new CheckpointsSettingError(`${CHECKPOINTS_ENV} must not be '/'. ${ACCEPTED}.`);
  return { kind: 'directory', path: resolved };
}

function parseS3(text: string): CheckpointsSetting {
  const match = /^s3:\/\/([^/]*)(?:\/(.*))?$/.exec(text);
  if (!match || text.slice(0, 5) !== 's3://') {
    throw new CheckpointsSettingError(
      `${CHECKPOINTS_ENV}=${shown(text)} is not of the form s3://bucket/prefix. ${ACCEPTED}.`,
    );
  }
  const bucket = match[1] ?? '';
  if (!BUCKET.test(bucket) || bucket.includes('..')) {
    throw new CheckpointsSettingError(
      `${CHECKPOINTS_ENV}: ${shown(bucket)} is not a bucket name (3 to 63 lowercase letters, digits, '.' or '-', starting and ending with a letter or digit).`,
    );
  }
  const prefix = (match[2] ?? '').replace(/\/+$/, '');
  if (prefix.length > MAX_PREFIX) {
    throw new CheckpointsSettingError(`${CHECKPOINTS_ENV}: the key prefix is longer than ${MAX_PREFIX} characters.`);
  }
  if (prefix !== '') {
    for (const segment of prefix.split('/')) {
      if (segment === '' || segment === '.' || segment === '..' || !PREFIX_SEGMENT.test(segment)) {
        throw new CheckpointsSettingError(
          `${CHECKPOINTS_ENV}: the key prefix ${shown(prefix)} must be '/'-separated names of printable ASCII (no empty, '.' or '..' names, no '\\', '#', '?', '%', '&', quotes or brackets).`,
        );
      }
    }
  }
  return { kind: 's3', bucket, prefix };
}

export interface StoreFromEnvOptions {
  /** S3 call bounds (tests shorten them). */
  s3?: { maxAttempts?: number; connectTimeoutMs?: number; requestTimeoutMs?: number; callTimeoutMs?: number };
}

/**
 * The worker's checkpoint store from its environment, or `undefined` when checkpoints are off.
 * Throws (`CheckpointsSettingError`, `CodecKeysError`) on a value it does not accept, so a worker
 * refuses to start misconfigured rather than running without the checkpoints it was asked for.
 */
export function storeFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  options: StoreFromEnvOptions = {},
): CheckpointStore | undefined {
  const setting = parseCheckpointsSetting(env[CHECKPOINTS_ENV], env);
  if (setting.kind === 'off') return undefined;
  const keys = parseCodecKeys(env[CODEC_KEYS_ENV]);
  if (setting.kind === 'directory') {
    return keys ? new EncryptedStore(new DirectoryObjects(setting.path), keys) : new DirectoryStore(setting.path);
  }
  const endpoint = env.AWS_ENDPOINT_URL?.trim() || undefined;
  if (endpoint !== undefined && !/^https?:\/\/[^\s/]+/i.test(endpoint)) {
    throw new CheckpointsSettingError(
      `AWS_ENDPOINT_URL=${shown(endpoint)} is not an http:// or https:// URL (it names the S3-compatible server for ${CHECKPOINTS_ENV}).`,
    );
  }
  const objects = new S3Objects({
    bucket: setting.bucket,
    prefix: setting.prefix,
    endpoint,
    region: env.AWS_REGION?.trim() || env.AWS_DEFAULT_REGION?.trim() || 'us-east-1',
    // From the environment given (the SDK's own chain reads process.env, profiles and instance roles).
    credentials:
      env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY
        ? {
            accessKeyId: env.AWS_ACCESS_KEY_ID,
            secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
            ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
          }
        : undefined,
    ...options.s3,
  });
  return keys ? new EncryptedStore(objects, keys) : new VerifiedStore(objects);
}
