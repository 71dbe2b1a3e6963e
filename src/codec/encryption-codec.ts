import {
  METADATA_ENCODING_KEY,
  ValueError,
  type Payload,
  type PayloadCodec,
  type SerializationContext,
} from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { CODEC_KEYS_ENV, type CodecKeys } from './keys';
import { METADATA_DECODE_ERROR_KEY } from './payload-converter';

/** Metadata `encoding` of an encrypted payload (the value Temporal's encryption samples use). */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
/** Metadata key naming the key that encrypted a payload (as in Temporal's encryption samples). */
export const METADATA_ENCRYPTION_KEY_ID = 'encryption-key-id';

const CIPHER = 'aes-256-gcm';
/** GCM's standard nonce size; a random nonce per payload (2^-32 collision bound after 2^32 payloads per key). */
export const IV_BYTES = 12;
export const AUTH_TAG_BYTES = 16;

const PayloadProto = temporal.api.common.v1.Payload;

function utf8(text: string): Uint8Array {
  return Buffer.from(text, 'utf8');
}

function isEncrypted(payload: Payload): boolean {
  const encoding = payload.metadata?.[METADATA_ENCODING_KEY];
  return encoding !== undefined && encoding !== null && Buffer.from(encoding).toString('utf8') === ENCRYPTED_ENCODING;
}

/**
 * AES-256-GCM payload codec with key ids. `encode` encrypts the whole original Payload (protobuf
 * encoded, so its metadata is hidden too) with the first key under a random 12-byte IV:
 * `data = IV ‖ ciphertext ‖ tag`, metadata `{encoding: binary/encrypted, encryption-key-id: <id>}`.
 * `decode` picks the key by id, so payloads written before a key rotation still read; payloads that
 * were never encrypted (histories from before the codec) pass through unchanged.
 *
 * With `tolerant` (the worker's codec), a workflow-owned payload it cannot decrypt (a start input,
 * signal, update or query argument from an outside client: garbage ciphertext, an unknown key id)
 * passes through with the reason in its metadata, for the payload converter to hand the workflow as
 * an undecodable value: throwing would fail every workflow task of that run. Activity payloads
 * stay strict, so a worker missing a key fails those tasks until it has the key.
 */
export class AesGcmCodec implements PayloadCodec {
  private readonly encryptKey: Buffer;

  constructor(
    private readonly config: CodecKeys,
    private readonly options: { tolerant?: boolean } = {},
  ) {
    const key = config.keys.get(config.encryptKeyId);
    if (!key) throw new ValueError(`encrypting key '${config.encryptKeyId}' is not among the codec keys`);
    this.encryptKey = key;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.encrypt(payload));
  }

  async decode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    const tolerate = this.options.tolerant === true && context?.type === 'workflow';
    return payloads.map((payload) => {
      if (!isEncrypted(payload)) return payload;
      if (!tolerate) return this.decrypt(payload);
      try {
        return this.decrypt(payload);
      } catch (err) {
        const reason = utf8((err as Error).message);
        return { ...payload, metadata: { ...payload.metadata, [METADATA_DECODE_ERROR_KEY]: reason } };
      }
    });
  }

  private encrypt(payload: Payload): Payload {
    const plaintext = PayloadProto.encode(payload).finish();
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(CIPHER, this.encryptKey, iv, { authTagLength: AUTH_TAG_BYTES });
    const data = Buffer.concat([iv, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
    return {
      metadata: {
        [METADATA_ENCODING_KEY]: utf8(ENCRYPTED_ENCODING),
        [METADATA_ENCRYPTION_KEY_ID]: utf8(this.config.encryptKeyId),
      },
      data,
    };
  }

  private decrypt(payload: Payload): Payload {
    const idBytes = payload.metadata?.[METADATA_ENCRYPTION_KEY_ID];
    if (!idBytes) {
      throw new ValueError(
        `Encrypted payload has no '${METADATA_ENCRYPTION_KEY_ID}' metadata: cannot tell which key to use`,
      );
    }
    const keyId = Buffer.from(idBytes).toString('utf8');
    const key = this.config.keys.get(keyId);
    if (!key) {
      throw new ValueError(
        `Payload was encrypted with key id '${keyId}', which is not in ${CODEC_KEYS_ENV} (known ids: ${[
          ...this.config.keys.keys(),
        ].join(', ')}). Add that key (after the encrypting one) to read it.`,
      );
    }
    const data = Buffer.from(payload.data ?? new Uint8Array());
    if (data.length < IV_BYTES + AUTH_TAG_BYTES) {
      throw new ValueError(
        `Encrypted payload (key id '${keyId}') is ${data.length} bytes, shorter than IV and tag (${IV_BYTES + AUTH_TAG_BYTES}): it is truncated`,
      );
    }
    const iv = data.subarray(0, IV_BYTES);
    const tag = data.subarray(data.length - AUTH_TAG_BYTES);
    const decipher = createDecipheriv(CIPHER, key, iv, { authTagLength: AUTH_TAG_BYTES });
    decipher.setAuthTag(tag);
    let plaintext: Buffer;
    try {
      plaintext = Buffer.concat([
        decipher.update(data.subarray(IV_BYTES, data.length - AUTH_TAG_BYTES)),
        decipher.final(),
      ]);
    } catch {
      throw new ValueError(
        `Encrypted payload (key id '${keyId}') failed authentication: it was altered, or the key with that id is not the one that encrypted it`,
      );
    }
    try {
      return PayloadProto.decode(plaintext);
    } catch {
      throw new ValueError(`Encrypted payload (key id '${keyId}') does not hold a payload once decrypted`);
    }
  }
}
