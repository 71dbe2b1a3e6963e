import { defaultPayloadConverter, METADATA_ENCODING_KEY, type Payload } from '@temporalio/common';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import {
  AesGcmCodec,
  CODEC_KEYS_ENV,
  ENCRYPTED_ENCODING,
  METADATA_ENCRYPTION_KEY_ID,
  codecFromEnv,
  dataConverterFromEnv,
  parseCodecKeys,
} from '../../src/codec';

const key = () => randomBytes(32).toString('base64');
const codecOf = (value: string) => new AesGcmCodec(parseCodecKeys(value)!);
const text = (p: Payload | undefined) => Buffer.from(p?.data ?? []).toString('utf8');
const meta = (p: Payload | undefined, k: string) => Buffer.from(p?.metadata?.[k] ?? []).toString('utf8');

describe('AES-256-GCM payload codec', () => {
  const k1 = key();
  const k2 = key();

  test('round trip restores the payload, metadata included, and hides both', async () => {
    const codec = codecOf(`id1:${k1}`);
    const original = defaultPayloadConverter.toPayload({ prompt: 'SECRET-PROMPT-7f3a' });
    const [encoded] = await codec.encode([original]);
    expect(meta(encoded, METADATA_ENCODING_KEY)).toBe(ENCRYPTED_ENCODING);
    expect(meta(encoded, METADATA_ENCRYPTION_KEY_ID)).toBe('id1');
    expect(Object.keys(encoded!.metadata!).sort()).toEqual([METADATA_ENCODING_KEY, METADATA_ENCRYPTION_KEY_ID].sort());
    // Neither the value nor the original encoding (json/plain) is readable.
    expect(Buffer.from(encoded!.data!).includes('SECRET-PROMPT-7f3a')).toBe(false);
    expect(Buffer.from(encoded!.data!).includes('json/plain')).toBe(false);
    const [decoded] = await codec.decode([encoded!]);
    expect(defaultPayloadConverter.fromPayload(decoded!)).toEqual({ prompt: 'SECRET-PROMPT-7f3a' });
    expect(meta(decoded, METADATA_ENCODING_KEY)).toBe('json/plain');
  });

  test('every payload gets its own random IV: the same value encrypts differently each time', async () => {
    const codec = codecOf(`id1:${k1}`);
    const p = defaultPayloadConverter.toPayload('same');
    const [a, b] = await codec.encode([p, p]);
    expect(Buffer.from(a!.data!).subarray(0, 12).equals(Buffer.from(b!.data!).subarray(0, 12))).toBe(false);
    expect(Buffer.from(a!.data!).equals(Buffer.from(b!.data!))).toBe(false);
  });

  test('any payload survives the round trip (property)', async () => {
    const codec = codecOf(`id1:${k1}`);
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.string({ minLength: 1 }), fc.uint8Array()),
        fc.option(fc.uint8Array(), { nil: undefined }),
        async (metadata, data) => {
          const payload: Payload = { metadata, data };
          const [decoded] = await codec.decode(await codec.encode([payload]));
          expect(Object.keys(decoded!.metadata ?? {}).sort()).toEqual(Object.keys(metadata).sort());
          for (const [k, v] of Object.entries(metadata))
            expect(Buffer.from(decoded!.metadata![k]!)).toEqual(Buffer.from(v));
          expect(Buffer.from(decoded!.data ?? [])).toEqual(Buffer.from(data ?? []));
        },
      ),
      { numRuns: 200 },
    );
  });

  test('rotation: the first key encrypts, payloads written with an older key still decrypt', async () => {
    const before = codecOf(`id1:${k1}`);
    const [old] = await before.encode([defaultPayloadConverter.toPayload('written before rotation')]);
    const after = codecOf(`id2:${k2},id1:${k1}`);
    const [fresh] = await after.encode([defaultPayloadConverter.toPayload('written after rotation')]);
    expect(meta(fresh, METADATA_ENCRYPTION_KEY_ID)).toBe('id2');
    const decoded = await after.decode([old!, fresh!]);
    expect(decoded.map((p) => defaultPayloadConverter.fromPayload(p))).toEqual([
      'written before rotation',
      'written after rotation',
    ]);
  });

  test('a payload whose key id is unknown fails with the id and the known ids, not a crypto error', async () => {
    const [old] = await codecOf(`id1:${k1}`).encode([defaultPayloadConverter.toPayload('x')]);
    await expect(codecOf(`id2:${k2}`).decode([old!])).rejects.toThrow(
      `Payload was encrypted with key id 'id1', which is not in ${CODEC_KEYS_ENV} (known ids: id2)`,
    );
  });

  test('tampering is detected: a flipped bit anywhere, a swapped key id, a truncated payload', async () => {
    const codec = codecOf(`id2:${k2},id1:${k1}`);
    const [encoded] = await codec.encode([defaultPayloadConverter.toPayload('integrity')]);
    const data = Buffer.from(encoded!.data!);
    for (const index of [0, 11, 12, data.length - 17, data.length - 1]) {
      const altered = Buffer.from(data);
      altered[index]! ^= 1;
      await expect(codec.decode([{ ...encoded, data: altered }])).rejects.toThrow(/failed authentication/);
    }
    const relabelled = {
      ...encoded,
      metadata: { ...encoded!.metadata, [METADATA_ENCRYPTION_KEY_ID]: Buffer.from('id1') },
    };
    await expect(codec.decode([relabelled])).rejects.toThrow(/key id 'id1'\) failed authentication/);
    await expect(codec.decode([{ ...encoded, data: data.subarray(0, 20) }])).rejects.toThrow(/truncated/);
    const noId = { metadata: { [METADATA_ENCODING_KEY]: Buffer.from(ENCRYPTED_ENCODING) }, data };
    await expect(codec.decode([noId])).rejects.toThrow(/no 'encryption-key-id' metadata/);
  });

  test('payloads without the encryption metadata pass through unchanged (histories from before the codec)', async () => {
    const codec = codecOf(`id1:${k1}`);
    const plain = defaultPayloadConverter.toPayload({ old: 'plaintext run' });
    const empty: Payload = {};
    const [a, b] = await codec.decode([plain, empty]);
    expect(a).toBe(plain);
    expect(b).toBe(empty);
    expect(text(a)).toContain('plaintext run');
  });
});

describe('dataConverterFromEnv', () => {
  test('unset or empty: no data converter (the SDK default, plaintext)', () => {
    expect(dataConverterFromEnv({})).toBeUndefined();
    expect(dataConverterFromEnv({ [CODEC_KEYS_ENV]: '' })).toBeUndefined();
    expect(codecFromEnv({ [CODEC_KEYS_ENV]: '  ' })).toBeUndefined();
  });

  test('set: the codec and a failure converter module that encodes messages and stack traces', async () => {
    const converter = dataConverterFromEnv({ [CODEC_KEYS_ENV]: `a:${key()}` });
    expect(converter?.payloadCodecs).toHaveLength(1);
    expect(converter?.payloadCodecs?.[0]).toBeInstanceOf(AesGcmCodec);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { failureConverter } = require(
      converter!.failureConverterPath!,
    ) as typeof import('../../src/codec/failure-converter');
    const failure = failureConverter.errorToFailure(new Error('SECRET-FAILURE-9c1d'), defaultPayloadConverter);
    expect(failure.message).toBe('Encoded failure');
    expect(failure.stackTrace).toBe('');
    expect(JSON.stringify(defaultPayloadConverter.fromPayload(failure.encodedAttributes!))).toContain(
      'SECRET-FAILURE-9c1d',
    );
  });

  test('malformed: the error names the variable and the rule', () => {
    expect(() => dataConverterFromEnv({ [CODEC_KEYS_ENV]: 'id1' })).toThrow(
      `${CODEC_KEYS_ENV} entry 1 of 1 has no ':'`,
    );
  });
});
