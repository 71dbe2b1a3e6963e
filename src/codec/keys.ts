/**
 * The codec's keys, read from `DURABLE_AGENT_CODEC_KEYS="id2:<base64 32 bytes>,id1:<…>"`: the first key
 * encrypts, every key decrypts (so payloads written before a rotation still read). Errors name the
 * variable, the entry and the rule; they never repeat key material.
 */

/** The environment variable that holds the codec keys. */
export const CODEC_KEYS_ENV = 'DURABLE_AGENT_CODEC_KEYS';

/** AES-256 takes a 32-byte key. */
export const CODEC_KEY_BYTES = 32;

/**
 * Key ids travel in every payload's metadata and are shown in errors: short, printable, no separators
 * of the variable's own syntax.
 */
const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;
/** Standard base64 (what `openssl rand -base64 32` prints), padding optional. */
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

export interface CodecKeys {
  /** The id of the key that encrypts new payloads (the first in the list). */
  encryptKeyId: string;
  /** Every key by id, the encrypting one included. */
  keys: ReadonlyMap<string, Buffer>;
}

export class CodecKeysError extends Error {
  override readonly name = 'CodecKeysError';
}

const FORMAT = `${CODEC_KEYS_ENV} must be a comma-separated list of <key id>:<base64 of ${CODEC_KEY_BYTES} random bytes>, the encrypting key first (generate one with: openssl rand -base64 32)`;

/**
 * Parses the keys variable's value. `undefined` or an empty value means no codec (payloads stay
 * plaintext); anything else must be a valid key list or this throws a `CodecKeysError`.
 */
export function parseCodecKeys(value: string | undefined): CodecKeys | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const keys = new Map<string, Buffer>();
  let encryptKeyId: string | undefined;
  const entries = value.split(',');
  entries.forEach((raw, index) => {
    const entry = raw.trim();
    const where = `${CODEC_KEYS_ENV} entry ${index + 1} of ${entries.length}`;
    if (entry === '') throw new CodecKeysError(`${where} is empty. ${FORMAT}.`);
    const colon = entry.indexOf(':');
    if (colon < 0) throw new CodecKeysError(`${where} has no ':' between key id and key. ${FORMAT}.`);
    const id = entry.slice(0, colon).trim();
    const encoded = entry.slice(colon + 1).trim();
    if (!KEY_ID.test(id)) {
      throw new CodecKeysError(
        `${where}: the key id must be 1-64 characters of letters, digits, '.', '_' or '-'. ${FORMAT}.`,
      );
    }
    if (keys.has(id)) {
      throw new CodecKeysError(`${where}: key id '${id}' appears twice; each key id must be unique.`);
    }
    if (!BASE64.test(encoded)) {
      throw new CodecKeysError(`${where} (key id '${id}'): the key is not standard base64. ${FORMAT}.`);
    }
    const key = Buffer.from(encoded, 'base64');
    if (key.length !== CODEC_KEY_BYTES) {
      throw new CodecKeysError(
        `${where} (key id '${id}'): the key decodes to ${key.length} bytes; AES-256 needs exactly ${CODEC_KEY_BYTES}. ${FORMAT}.`,
      );
    }
    keys.set(id, key);
    encryptKeyId ??= id;
  });
  if (encryptKeyId === undefined) throw new CodecKeysError(`${CODEC_KEYS_ENV} has no keys. ${FORMAT}.`);
  return { encryptKeyId, keys };
}
