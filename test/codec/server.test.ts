import { defaultPayloadConverter } from '@temporalio/common';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { AesGcmCodec, parseCodecKeys } from '../../src/codec';
import { payloadsFromJson, payloadsToJson } from '../../src/codec/payload-json';
import {
  MAX_CODEC_JSON_CONTAINERS,
  MAX_CONCURRENT_CODEC_REQUESTS,
  MAX_CODEC_REQUEST_BYTES,
  startCodecServer,
  type CodecServer,
} from '../../src/codec/server';

/** The remote codec protocol over real HTTP, as the Web UI and `temporal --codec-endpoint` speak it. */
describe('codec server', () => {
  const keys = parseCodecKeys(`id2:${randomBytes(32).toString('base64')},id1:${randomBytes(32).toString('base64')}`)!;
  const codec = new AesGcmCodec(keys);
  const UI = 'http://localhost:8233';
  let server: CodecServer;

  beforeAll(async () => {
    server = await startCodecServer({ port: 0, keys });
  });
  afterAll(() => server.close());

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Namespace': 'default', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  test('POST /decode returns the decrypted payloads as protobuf JSON', async () => {
    const encoded = await codec.encode([defaultPayloadConverter.toPayload({ answer: 'MARKER-decode-1' })]);
    const res = await post('/decode', payloadsToJson(encoded), { Origin: UI });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(UI);
    const body = (await res.json()) as { payloads: { metadata: Record<string, string>; data: string }[] };
    expect(Buffer.from(body.payloads[0]!.metadata.encoding!, 'base64').toString()).toBe('json/plain');
    expect(defaultPayloadConverter.fromPayload(payloadsFromJson(body)[0]!)).toEqual({ answer: 'MARKER-decode-1' });
  });

  test('POST /encode encrypts with the first key; /{namespace}/decode (the CLI template) reads it back', async () => {
    const plain = payloadsToJson([defaultPayloadConverter.toPayload('MARKER-encode-2')]);
    const encoded = (await (await post('/encode', plain)).json()) as { payloads: unknown[] };
    const [payload] = payloadsFromJson(encoded);
    expect(Buffer.from(payload!.data!).includes('MARKER-encode-2')).toBe(false);
    expect(Buffer.from(payload!.metadata!['encryption-key-id']!).toString()).toBe('id2');
    const decoded = (await (await post('/my-namespace/decode', encoded)).json()) as { payloads: unknown[] };
    expect(defaultPayloadConverter.fromPayload(payloadsFromJson({ payloads: decoded.payloads })[0]!)).toBe(
      'MARKER-encode-2',
    );
  });

  test('CORS preflight from the Web UI origin allows POST with X-Namespace, Content-Type and Authorization', async () => {
    for (const origin of [UI, 'http://127.0.0.1:8233']) {
      const res = await fetch(`${server.url}/decode`, {
        method: 'OPTIONS',
        headers: {
          Origin: origin,
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'content-type,x-namespace',
        },
      });
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe(origin);
      expect(res.headers.get('access-control-allow-methods')).toContain('POST');
      const allowed = res.headers.get('access-control-allow-headers')!.toLowerCase().split(/,\s*/);
      expect(allowed).toEqual(expect.arrayContaining(['x-namespace', 'content-type', 'authorization']));
      expect(res.headers.get('vary')).toContain('Origin');
    }
  });

  test('another origin is refused, in the preflight and in the request', async () => {
    const preflight = await fetch(`${server.url}/decode`, {
      method: 'OPTIONS',
      headers: { Origin: 'http://evil.example', 'Access-Control-Request-Method': 'POST' },
    });
    expect(preflight.status).toBe(403);
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    const res = await post('/decode', { payloads: [] }, { Origin: 'http://evil.example' });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: string }).error).toContain('origin http://evil.example is not allowed');
  });

  test('configured origins replace the defaults', async () => {
    const other = await startCodecServer({ port: 0, keys, corsOrigins: ['https://ui.example.com'] });
    try {
      const ok = await fetch(`${other.url}/decode`, {
        method: 'POST',
        headers: { Origin: 'https://ui.example.com' },
        body: '{"payloads":[]}',
      });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('access-control-allow-origin')).toBe('https://ui.example.com');
      const refused = await fetch(`${other.url}/decode`, { method: 'POST', headers: { Origin: UI }, body: '{}' });
      expect(refused.status).toBe(403);
    } finally {
      await other.close();
    }
  });

  test.each([
    ['not JSON', '{"payloads": [', /the body is not JSON/],
    ['no payloads array', '{"payload": []}', /must be a JSON object \{"payloads": \[...\]\}/],
    ['payload not an object', '{"payloads": [3]}', /payloads\[0\] must be an object/],
    ['data not base64', '{"payloads": [{"data": "no spaces allowed"}]}', /payloads\[0\]\.data must be a base64 string/],
    [
      'metadata value not a string',
      '{"payloads": [{"metadata": {"encoding": 5}}]}',
      /payloads\[0\]\.metadata\.encoding/,
    ],
  ])('%s → 400 with a message', async (_name, body, message) => {
    const res = await post('/decode', body);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(message);
  });

  test('the empty body {} the temporal CLI sends for a query or signal without input → 200 and no payloads', async () => {
    for (const path of ['/decode', '/encode']) {
      const res = await post(path, '{}');
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ payloads: [] });
    }
    const res = await post('/decode', '{"payloads": null}');
    expect(res.status).toBe(200);
  });

  test('a body of many tiny objects is refused before it is parsed (memory grows with objects, not bytes)', async () => {
    const many = `{"payloads":[${'{},'.repeat(MAX_CODEC_JSON_CONTAINERS)}{}]}`;
    const res = await post('/decode', many);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toContain(`more than ${MAX_CODEC_JSON_CONTAINERS}`);
    const fits = `{"payloads":[${'{},'.repeat(MAX_CODEC_JSON_CONTAINERS / 2 - 10)}{}]}`;
    expect((await post('/encode', fits)).status).toBe(200);
  });

  test(`more than ${MAX_CONCURRENT_CODEC_REQUESTS} requests at once: the next gets 503 with Retry-After, and all go on after`, async () => {
    const { hostname, port } = new URL(server.url);
    // Requests whose bodies have not finished arriving hold their slots.
    const slow = Array.from({ length: MAX_CONCURRENT_CODEC_REQUESTS }, () => {
      const req = request({
        hostname,
        port,
        path: '/decode',
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
      });
      const status = new Promise<number>((resolve, reject) => {
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
      });
      req.write('{"payloads": ');
      return { req, status };
    });
    await new Promise((r) => setTimeout(r, 300));
    const refused = await post('/decode', { payloads: [] });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    for (const s of slow) s.req.end('[]}');
    expect(await Promise.all(slow.map((s) => s.status))).toEqual(slow.map(() => 200));
    expect((await post('/decode', { payloads: [] })).status).toBe(200);
  });

  test('a payload the keys cannot read → 400 naming the key id', async () => {
    const foreign = new AesGcmCodec(parseCodecKeys(`old:${randomBytes(32).toString('base64')}`)!);
    const res = await post('/decode', payloadsToJson(await foreign.encode([defaultPayloadConverter.toPayload('x')])));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toContain("key id 'old'");
  });

  test('unknown path → 404, wrong method → 405', async () => {
    expect((await post('/transcode', { payloads: [] })).status).toBe(404);
    const get = await fetch(`${server.url}/decode`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toContain('POST');
  });

  test('a body over the limit → 413, and the server still answers afterwards', async () => {
    const res = await post('/decode', 'x'.repeat(MAX_CODEC_REQUEST_BYTES + 1));
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: string }).error).toContain(`larger than ${MAX_CODEC_REQUEST_BYTES} bytes`);
    expect((await post('/decode', { payloads: [] })).status).toBe(200);
  });
});
