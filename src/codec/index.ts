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

/**
 * The payload converter module, by path: Temporal's default converter, except that a client's
 * payload no converter can decode reaches the workflow as a value its handlers reject, instead of
 * failing the run's workflow tasks. Workflow bundles are built with it (`scripts/bundle-workflows.ts`).
 */
export const PAYLOAD_CONVERTER_PATH = require.resolve('./payload-converter');

/** The payload codec for `DURABLE_AGENT_CODEC_KEYS`, or `undefined` when the variable is unset/empty. */
export function codecFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  options: { tolerant?: boolean } = {},
): AesGcmCodec | undefined {
  const keys = parseCodecKeys(env[CODEC_KEYS_ENV]);
  return keys ? new AesGcmCodec(keys, options) : undefined;
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

/**
 * The data converter for workers: always the tolerant payload converter (`PAYLOAD_CONVERTER_PATH`),
 * and with `DURABLE_AGENT_CODEC_KEYS` set the encryption codec in its tolerant mode and the failure
 * converter: nothing an outside client sends fails a workflow task. Clients keep the strict
 * `dataConverterFromEnv`: what they read was written by the workflow.
 */
export function workerDataConverterFromEnv(env: NodeJS.ProcessEnv = process.env): DataConverter {
  const codec = codecFromEnv(env, { tolerant: true });
  return {
    payloadConverterPath: PAYLOAD_CONVERTER_PATH,
    ...(codec ? { payloadCodecs: [codec], failureConverterPath: FAILURE_CONVERTER_PATH } : {}),
  };
}
