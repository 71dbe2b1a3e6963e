import type { DataConverter } from '@temporalio/common';
import { AesGcmCodec } from './encryption-codec';
import { CODEC_KEYS_ENV, parseCodecKeys } from './keys';

export { AesGcmCodec, ENCRYPTED_ENCODING, METADATA_ENCRYPTION_KEY_ID } from './encryption-codec';
export { CODEC_KEYS_ENV, CodecKeysError, parseCodecKeys, type CodecKeys } from './keys';

/**
 * The failure converter module, by path: `DataConverter` takes it as a path because the worker bundles
 * it into the workflow sandbox (failures raised by workflow code are converted there).
 */
export const FAILURE_CONVERTER_PATH = require.resolve('./failure-converter');

/** The payload codec for `DURABLE_AGENT_CODEC_KEYS`, or `undefined` when the variable is unset/empty. */
export function codecFromEnv(env: NodeJS.ProcessEnv = process.env): AesGcmCodec | undefined {
  const keys = parseCodecKeys(env[CODEC_KEYS_ENV]);
  return keys ? new AesGcmCodec(keys) : undefined;
}

/**
 * The data converter for clients and workers: with `DURABLE_AGENT_CODEC_KEYS` set, payloads are
 * encrypted (AES-256-GCM) and failure messages and stack traces too; unset or empty, `undefined`
 * (the SDK's default converter, plaintext). Throws a `CodecKeysError` naming the rule when the
 * variable is malformed. A worker given this must bundle its workflows with `failureConverterPath`
 * (a prebuilt `workflowBundle` made without it leaves workflow failure messages in plaintext).
 */
export function dataConverterFromEnv(env: NodeJS.ProcessEnv = process.env): DataConverter | undefined {
  const codec = codecFromEnv(env);
  if (!codec) return undefined;
  return { payloadCodecs: [codec], failureConverterPath: FAILURE_CONVERTER_PATH };
}
