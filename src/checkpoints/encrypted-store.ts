import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { AUTH_TAG_BYTES, IV_BYTES } from '../codec/encryption-codec';
import { CODEC_KEYS_ENV, type CodecKeys } from '../codec/keys';
import {
  checkName,
  DEFAULT_OBJECT_BOUNDS,
  WHAT,
  type ObjectBounds,
  type ObjectKind,
  type ObjectStore,
} from './objects';
import { sha256, type CheckpointStore } from './store';

/**
 * A checkpoint store whose bytes are encrypted before they leave the worker, with the codec's keys
 * (`DURABLE_AGENT_CODEC_KEYS`: the first key encrypts, every key decrypts): AES-256-GCM under a
 * random 12-byte nonce, as the payload codec does. Names stay the plaintext's SHA-256, so unchanged
 * contents are still found and uploaded once; the store sees which names exist and their sizes,
 * never a byte of content or a path.
 *
 * An object is `MAGIC ‖ key id length (1 byte) ‖ key id ‖ nonce ‖ ciphertext ‖ tag`, with the kind
 * and name as associated data (an object copied under another name fails authentication). A read
 * decrypts with the key its id names, then checks the plaintext's hash against the name. An object
 * without the magic is one stored before encryption was turned on: it is read as plaintext and
 * checked against its name just the same.
 */

const MAGIC = Buffer.from('DAck1\n', 'latin1');
const CIPHER = 'aes-256-gcm';
/** The most an object grows by: magic, id length and a 64-character key id, nonce, tag. */
export const ENCRYPTION_OVERHEAD = MAGIC.length + 1 + 64 + IV_BYTES + AUTH_TAG_BYTES;

export class EncryptedStore implements CheckpointStore {
  readonly description: string;
  private readonly encryptKey: Buffer;

  constructor(
    readonly objects: ObjectStore,
    private readonly keys: CodecKeys,
    private readonly bounds: ObjectBounds = DEFAULT_OBJECT_BOUNDS,
  ) {
    const key = keys.keys.get(keys.encryptKeyId);
    if (!key) throw new Error(`The encrypting key '${keys.encryptKeyId}' is not among the codec keys.`);
    this.encryptKey = key;
    this.description = `${objects.description} (encrypted, key id ${keys.encryptKeyId})`;
  }

  hasBlob(hash: string): Promise<boolean> {
    checkName('blob', hash);
    return this.objects.has('blob', hash);
  }

  putBlob(hash: string, data: Buffer): Promise<void> {
    return this.put('blob', hash, data);
  }

  getBlob(hash: string): Promise<Buffer> {
    return this.get('blob', hash);
  }

  putManifest(id: string, bytes: Buffer): Promise<void> {
    return this.put('manifest', id, bytes);
  }

  getManifest(id: string): Promise<Buffer> {
    return this.get('manifest', id);
  }

  private async put(kind: ObjectKind, name: string, plaintext: Buffer): Promise<void> {
    checkName(kind, name);
    if (sha256(plaintext) !== name)
      throw new Error(`Refusing to store ${WHAT[kind]} ${name}: its bytes hash otherwise.`);
    // Write-once below: an existing object (a ciphertext of the same plaintext) is kept.
    await this.objects.put(kind, name, this.seal(kind, name, plaintext));
  }

  private async get(kind: ObjectKind, name: string): Promise<Buffer> {
    checkName(kind, name);
    const stored = await this.objects.get(kind, name, this.bounds[kind] + ENCRYPTION_OVERHEAD);
    const plaintext = isSealed(stored) ? this.open(kind, name, stored) : stored;
    if (plaintext.length > this.bounds[kind]) {
      throw new Error(`The checkpoint store's ${WHAT[kind]} ${name} is over its ${this.bounds[kind]}-byte bound.`);
    }
    if (sha256(plaintext) !== name) {
      throw new Error(`The checkpoint store's ${WHAT[kind]} ${name} is corrupt or was altered (its hash differs).`);
    }
    return plaintext;
  }

  private seal(kind: ObjectKind, name: string, plaintext: Buffer): Buffer {
    const id = Buffer.from(this.keys.encryptKeyId, 'utf8');
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(CIPHER, this.encryptKey, iv, { authTagLength: AUTH_TAG_BYTES });
    cipher.setAAD(Buffer.from(`${kind}/${name}`, 'latin1'));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([MAGIC, Buffer.from([id.length]), id, iv, body, cipher.getAuthTag()]);
  }

  private open(kind: ObjectKind, name: string, stored: Buffer): Buffer {
    const what = `The checkpoint store's ${WHAT[kind]} ${name}`;
    const idLength = stored[MAGIC.length] ?? 0;
    const idEnd = MAGIC.length + 1 + idLength;
    if (idLength === 0 || stored.length < idEnd + IV_BYTES + AUTH_TAG_BYTES) {
      throw new Error(`${what} is encrypted but truncated (${stored.length} bytes).`);
    }
    const keyId = stored.subarray(MAGIC.length + 1, idEnd).toString('utf8');
    const key = this.keys.keys.get(keyId);
    if (!key) {
      throw new Error(
        `${what} was encrypted with key id '${keyId.replace(/[^\x20-\x7e]/g, '?').slice(0, 64)}', which is not in ${CODEC_KEYS_ENV} (known ids: ${[
          ...this.keys.keys.keys(),
        ].join(', ')}). Add that key (after the encrypting one) to read it.`,
      );
    }
    const iv = stored.subarray(idEnd, idEnd + IV_BYTES);
    const decipher = createDecipheriv(CIPHER, key, iv, { authTagLength: AUTH_TAG_BYTES });
    decipher.setAAD(Buffer.from(`${kind}/${name}`, 'latin1'));
    decipher.setAuthTag(stored.subarray(stored.length - AUTH_TAG_BYTES));
    try {
      return Buffer.concat([
        decipher.update(stored.subarray(idEnd + IV_BYTES, stored.length - AUTH_TAG_BYTES)),
        decipher.final(),
      ]);
    } catch {
      throw new Error(
        `${what} failed authentication with key id '${keyId}': it was altered or moved, or the key with that id is not the one that encrypted it.`,
      );
    }
  }
}

function isSealed(stored: Buffer): boolean {
  return stored.length >= MAGIC.length && stored.subarray(0, MAGIC.length).equals(MAGIC);
}
