import { randomBytes } from 'node:crypto';
import { CODEC_KEYS_ENV, CodecKeysError, parseCodecKeys } from '../../src/codec';

const key = (bytes = 32) => randomBytes(bytes).toString('base64');

describe(`${CODEC_KEYS_ENV}`, () => {
  test('the first key encrypts, every key is kept for decryption, whitespace around entries is ignored', () => {
    const k1 = key();
    const k2 = key();
    const parsed = parseCodecKeys(` id2:${k2} , id1:${k1}`)!;
    expect(parsed.encryptKeyId).toBe('id2');
    expect([...parsed.keys.keys()]).toEqual(['id2', 'id1']);
    expect(parsed.keys.get('id1')).toEqual(Buffer.from(k1, 'base64'));
  });

  test('unpadded base64 is accepted (32 bytes either way)', () => {
    expect(parseCodecKeys(`k:${key().replace(/=+$/, '')}`)!.keys.get('k')).toHaveLength(32);
  });

  const secret = key(16);
  const longSecret = key(48);
  test.each([
    ['no separator', 'justakey', /entry 1 of 1 has no ':'/],
    ['empty entry', `a:${key()},,b:${key()}`, /entry 2 of 3 is empty/],
    ['trailing comma', `a:${key()},`, /entry 2 of 2 is empty/],
    ['empty id', `:${key()}`, /the key id must be 1-64 characters/],
    ['id with a space', `my key:${key()}`, /the key id must be 1-64 characters/],
    ['duplicate id', `a:${key()},a:${key()}`, /key id 'a' appears twice; each key id must be unique/],
    ['short key', `a:${secret}`, /key id 'a'\): the key decodes to 16 bytes; AES-256 needs exactly 32/],
    ['long key', `a:${longSecret}`, /decodes to 48 bytes; AES-256 needs exactly 32/],
    ['not base64', `a:${'!'.repeat(44)}`, /key id 'a'\): the key is not standard base64/],
    ['hex instead of base64', `a:${randomBytes(32).toString('hex')}`, /decodes to 48 bytes/],
  ])('%s → a readable error naming the variable and the rule', (_name, value, rule) => {
    let error: unknown;
    try {
      parseCodecKeys(value);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CodecKeysError);
    const message = (error as Error).message;
    expect(message).toContain(CODEC_KEYS_ENV);
    expect(message).toMatch(rule);
    // Never the key material itself.
    for (const part of value.split(',').map((entry) => entry.slice(entry.indexOf(':') + 1))) {
      if (part.length >= 8) expect(message).not.toContain(part);
    }
  });

  test('unset or blank means no codec', () => {
    expect(parseCodecKeys(undefined)).toBeUndefined();
    expect(parseCodecKeys('')).toBeUndefined();
    expect(parseCodecKeys(' \n')).toBeUndefined();
  });
});
