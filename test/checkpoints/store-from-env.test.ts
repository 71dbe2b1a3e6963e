import * as os from 'node:os';
import * as path from 'node:path';
import {
  DirectoryStore,
  EncryptedStore,
  VerifiedStore,
  parseCheckpointsSetting,
  storeFromEnv,
} from '../../src/checkpoints';

/** `DURABLE_AGENT_CHECKPOINTS`: off, a directory, s3://bucket/prefix, the default; hostile values refused. */

test('unset or empty: the embedded store under the data folder (XDG_DATA_HOME honoured)', () => {
  expect(parseCheckpointsSetting(undefined, {})).toEqual({
    kind: 'directory',
    path: path.join(os.homedir(), '.local/share/durable-agent/checkpoints'),
  });
  expect(parseCheckpointsSetting('  ', { XDG_DATA_HOME: '/srv/data' })).toEqual({
    kind: 'directory',
    path: '/srv/data/durable-agent/checkpoints',
  });
  // A relative XDG_DATA_HOME is invalid per the XDG spec and ignored.
  expect(parseCheckpointsSetting('', { XDG_DATA_HOME: 'rel' })).toEqual({
    kind: 'directory',
    path: path.join(os.homedir(), '.local/share/durable-agent/checkpoints'),
  });
  expect(storeFromEnv({ XDG_DATA_HOME: '/srv/data' })).toBeInstanceOf(DirectoryStore);
});

test('off, a directory, and s3://bucket/prefix', () => {
  expect(parseCheckpointsSetting('off', {})).toEqual({ kind: 'off' });
  expect(storeFromEnv({ DURABLE_AGENT_CHECKPOINTS: 'OFF' })).toBeUndefined();
  expect(parseCheckpointsSetting('/var/lib/da/ckpt/', {})).toEqual({ kind: 'directory', path: '/var/lib/da/ckpt' });
  expect(parseCheckpointsSetting('s3://my-bucket', {})).toEqual({ kind: 's3', bucket: 'my-bucket', prefix: '' });
  expect(parseCheckpointsSetting('s3://my.bucket/team/a/', {})).toEqual({
    kind: 's3',
    bucket: 'my.bucket',
    prefix: 'team/a',
  });
  const s3 = storeFromEnv({
    DURABLE_AGENT_CHECKPOINTS: 's3://bkt/runs',
    AWS_ENDPOINT_URL: 'http://127.0.0.1:9000',
    AWS_ACCESS_KEY_ID: 'a',
    AWS_SECRET_ACCESS_KEY: 'b',
  });
  expect(s3).toBeInstanceOf(VerifiedStore);
  expect(s3!.description).toBe('s3://bkt/runs');
  const encrypted = storeFromEnv({
    DURABLE_AGENT_CHECKPOINTS: 's3://bkt/runs',
    DURABLE_AGENT_CODEC_KEYS: `k9:${Buffer.alloc(32, 7).toString('base64')}`,
  });
  expect(encrypted).toBeInstanceOf(EncryptedStore);
  expect(encrypted!.description).toBe('s3://bkt/runs (encrypted, key id k9)');
});

test.each([
  ['relative/dir', /is not an absolute path/],
  ['~/checkpoints', /is not an absolute path \('~' and relative paths are not expanded\)/],
  ['/', /must not be '\/'/],
  ['/tmp/a\nb', /contains a control character/],
  ['file:///tmp/x', /names an unsupported scheme/],
  ['https://example.com/x', /names an unsupported scheme/],
  ['S3://bucket/x', /is not of the form s3:\/\/bucket\/prefix/],
  ['s3:bucket', /is not of the form s3:\/\/bucket\/prefix/],
  ['s3://', /is not a bucket name/],
  ['s3://Upper/x', /is not a bucket name/],
  ['s3://a..b/x', /is not a bucket name/],
  ['s3://bucket/../x', /key prefix .* must be '\/'-separated names/],
  ['s3://bucket/a//b', /key prefix .* must be '\/'-separated names/],
  ['s3://bucket/a?b', /key prefix .* must be '\/'-separated names/],
  ['s3://bucket/é', /key prefix .* must be '\/'-separated names/],
  [`s3://bucket/${'a'.repeat(600)}`, /longer than 512 characters/],
  [`/${'a'.repeat(5000)}`, /longer than 4096 bytes/],
])('%j is refused with a message saying what is accepted', (value, message) => {
  expect(() => parseCheckpointsSetting(value, {})).toThrow(message);
  expect(() => storeFromEnv({ DURABLE_AGENT_CHECKPOINTS: value })).toThrow(/DURABLE_AGENT_CHECKPOINTS/);
});

test('a malformed endpoint or codec key list stops the worker with the variable named', () => {
  expect(() => storeFromEnv({ DURABLE_AGENT_CHECKPOINTS: 's3://bkt/p', AWS_ENDPOINT_URL: 'localhost:9000' })).toThrow(
    /AWS_ENDPOINT_URL="localhost:9000" is not an http:\/\/ or https:\/\/ URL/,
  );
  expect(() => storeFromEnv({ DURABLE_AGENT_CHECKPOINTS: '/tmp/x', DURABLE_AGENT_CODEC_KEYS: 'nokey' })).toThrow(
    /DURABLE_AGENT_CODEC_KEYS entry 1 of 1 has no ':'/,
  );
});
