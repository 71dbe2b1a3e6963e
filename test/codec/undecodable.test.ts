import { defaultPayloadConverter, METADATA_ENCODING_KEY, type Payload } from '@temporalio/common';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { AesGcmCodec, parseCodecKeys, workerDataConverterFromEnv, CODEC_KEYS_ENV } from '../../src/codec';
import { payloadConverter } from '../../src/codec/payload-converter';
import { isUndecodable } from '../../src/shared/undecodable';

/**
 * The worker's payload converter and tolerant codec: a workflow-owned payload (start input, signal,
 * update or query argument) that cannot be decoded becomes an undecodable value; activity payloads
 * stay strict.
 */
const workflow = { type: 'workflow', namespace: 'default', workflowId: 'w' } as const;
const activity = { type: 'activity', namespace: 'default', isLocal: false } as const;
const utf8 = (s: string) => Buffer.from(s, 'utf8');

test('a payload with an unknown encoding is an undecodable value for a workflow, an error for an activity', () => {
  const evil: Payload = { metadata: { [METADATA_ENCODING_KEY]: utf8('binary/evil') }, data: utf8('"x"') };
  const value = payloadConverter.fromPayload(evil, workflow);
  expect(isUndecodable(value)).toBe(true);
  expect(value).toMatchObject({ encoding: 'binary/evil', reason: 'Unknown encoding: binary/evil' });
  expect(() => payloadConverter.fromPayload(evil, activity)).toThrow('Unknown encoding: binary/evil');
  expect(() => payloadConverter.fromPayload(evil)).toThrow('Unknown encoding');
});

test('decodable payloads convert as with the default converter', () => {
  for (const value of [{ prompt: 'hi' }, 'x', 3, null, undefined, [1, { a: 'b' }]]) {
    const payload = payloadConverter.toPayload(value, workflow);
    expect(payload).toEqual(defaultPayloadConverter.toPayload(value));
    expect(payloadConverter.fromPayload(payload, workflow)).toEqual(value);
  }
});

test('any metadata and bytes (property): a workflow-owned payload never makes the converter throw', () => {
  const encoding = fc.oneof(
    fc.constantFrom(
      'json/plain',
      'binary/null',
      'binary/plain',
      'json/protobuf',
      'binary/protobuf',
      'binary/encrypted',
    ),
    fc.string(),
  );
  fc.assert(
    fc.property(
      fc.option(encoding, { nil: undefined }),
      fc.dictionary(fc.string(), fc.uint8Array({ maxLength: 20 }), { maxKeys: 3 }),
      fc.option(fc.uint8Array({ maxLength: 64 }), { nil: undefined }),
      (enc, extra, data) => {
        const metadata = { ...extra, ...(enc !== undefined ? { [METADATA_ENCODING_KEY]: utf8(enc) } : {}) };
        expect(() => payloadConverter.fromPayload({ metadata, ...(data ? { data } : {}) }, workflow)).not.toThrow();
      },
    ),
    { numRuns: 500 },
  );
});

describe('the worker codec', () => {
  const keys = parseCodecKeys(`k1:${randomBytes(32).toString('base64')}`)!;
  const garbage: Array<[string, Payload]> = [
    ['no key id', { metadata: { [METADATA_ENCODING_KEY]: utf8('binary/encrypted') }, data: randomBytes(40) }],
    [
      'an unknown key id',
      {
        metadata: { [METADATA_ENCODING_KEY]: utf8('binary/encrypted'), 'encryption-key-id': utf8('nope') },
        data: randomBytes(40),
      },
    ],
    [
      'altered ciphertext',
      {
        metadata: { [METADATA_ENCODING_KEY]: utf8('binary/encrypted'), 'encryption-key-id': utf8('k1') },
        data: randomBytes(40),
      },
    ],
    [
      'a truncated ciphertext',
      {
        metadata: { [METADATA_ENCODING_KEY]: utf8('binary/encrypted'), 'encryption-key-id': utf8('k1') },
        data: randomBytes(5),
      },
    ],
  ];

  test.each(garbage)('ciphertext with %s reaches a workflow as an undecodable value naming why', async (_name, p) => {
    const codec = new AesGcmCodec(keys, { tolerant: true });
    const [passed] = await codec.decode([p], workflow);
    const value = payloadConverter.fromPayload(passed!, workflow);
    expect(isUndecodable(value)).toBe(true);
    expect(value).toMatchObject({
      encoding: 'binary/encrypted',
      reason: expect.stringMatching(/[Ee]ncrypted payload|key id/),
    });
  });

  test.each(garbage)('ciphertext with %s still fails an activity payload and the strict codec', async (_name, p) => {
    await expect(new AesGcmCodec(keys, { tolerant: true }).decode([p], activity)).rejects.toThrow();
    await expect(new AesGcmCodec(keys, { tolerant: true }).decode([p])).rejects.toThrow();
    await expect(new AesGcmCodec(keys).decode([p], workflow)).rejects.toThrow();
  });

  test('workerDataConverterFromEnv: the tolerant converter always, the codec and failure converter with keys', () => {
    expect(workerDataConverterFromEnv({})).toEqual({
      payloadConverterPath: expect.stringContaining('payload-converter'),
    });
    const withKeys = workerDataConverterFromEnv({ [CODEC_KEYS_ENV]: `k1:${randomBytes(32).toString('base64')}` });
    expect(withKeys.payloadConverterPath).toContain('payload-converter');
    expect(withKeys.failureConverterPath).toContain('failure-converter');
    expect(withKeys.payloadCodecs).toHaveLength(1);
  });
});
