import { defaultPayloadConverter } from '@temporalio/common';
import { randomBytes } from 'node:crypto';
import { CODEC_CORS_ORIGINS_ENV, codecServerCommand } from '../../src/cli/codec-server-command';
import { AesGcmCodec, CODEC_KEYS_ENV, parseCodecKeys } from '../../src/codec';
import { payloadsFromJson, payloadsToJson } from '../../src/codec/payload-json';

/** `durable-agent codec-server`: what it prints, what it serves, and how it refuses bad keys. */
describe('codec-server command', () => {
  const keys = `new:${randomBytes(32).toString('base64')},old:${randomBytes(32).toString('base64')}`;

  async function start(env: NodeJS.ProcessEnv) {
    const lines: string[] = [];
    const errors: string[] = [];
    let stop!: () => void;
    const until = new Promise<void>((resolve) => (stop = resolve));
    const done = codecServerCommand({ port: 0, env, out: (l) => lines.push(l), err: (l) => errors.push(l), until });
    return { lines, errors, stop, done };
  }

  test('prints its URL and how to use it from the Web UI and the CLI, serves /decode, and stops cleanly', async () => {
    const cmd = await start({ [CODEC_KEYS_ENV]: keys, [CODEC_CORS_ORIGINS_ENV]: 'https://ui.example.com' });
    const first = await new Promise<string>((resolve, reject) => {
      const poll = setInterval(() => {
        if (cmd.lines.length) {
          clearInterval(poll);
          resolve(cmd.lines[0]!);
        }
      }, 20);
      cmd.done.then(() => reject(new Error(`exited early: ${cmd.errors.join('\n')}`)), reject);
    });
    const url = /Codec server at (http:\/\/127\.0\.0\.1:\d+)/.exec(first)?.[1];
    expect(url).toBeDefined();
    const text = cmd.lines.join('\n');
    expect(first).toContain("key 'new' encrypts; 'new', 'old' decrypt");
    expect(text).toContain(`temporal server start-dev --ui-codec-endpoint ${url}`);
    expect(text).toContain(`temporal workflow show --workflow-id <id> --codec-endpoint ${url}`);
    expect(text).toContain('https://ui.example.com');
    expect(text).not.toContain(keys.split(',')[0]!.slice(4));

    const encoded = await new AesGcmCodec(parseCodecKeys(keys)!).encode([defaultPayloadConverter.toPayload('hi')]);
    const res = await fetch(`${url}/decode`, {
      method: 'POST',
      headers: { Origin: 'https://ui.example.com', 'Content-Type': 'application/json' },
      body: JSON.stringify(payloadsToJson(encoded)),
    });
    expect(res.headers.get('access-control-allow-origin')).toBe('https://ui.example.com');
    expect(defaultPayloadConverter.fromPayload(payloadsFromJson(await res.json())[0]!)).toBe('hi');

    cmd.stop();
    expect(await cmd.done).toBe(0);
    await expect(fetch(`${url}/decode`, { method: 'POST', body: '{"payloads":[]}' })).rejects.toThrow();
  });

  test('without keys: exit code 2 and what to set', async () => {
    const cmd = await start({});
    expect(await cmd.done).toBe(2);
    expect(cmd.errors.join('\n')).toMatch(/DURABLE_AGENT_CODEC_KEYS is not set.*openssl rand -base64 32/);
  });

  test('malformed keys: exit code 2 with the rule, never the key', async () => {
    const short = randomBytes(16).toString('base64');
    const cmd = await start({ [CODEC_KEYS_ENV]: `a:${short}` });
    expect(await cmd.done).toBe(2);
    const message = cmd.errors.join('\n');
    expect(message).toContain('AES-256 needs exactly 32');
    expect(message).not.toContain(short);
  });

  /** Starts the command, waits for its URL, runs `check` on it, stops it. */
  async function withServer(
    env: NodeJS.ProcessEnv,
    extra: { uiOrigins?: string[]; address?: string },
    check: (url: string, lines: string[]) => Promise<void>,
  ) {
    const lines: string[] = [];
    let stop!: () => void;
    const until = new Promise<void>((resolve) => (stop = resolve));
    const done = codecServerCommand({
      port: 0,
      env,
      ...extra,
      out: (l) => lines.push(l),
      err: (l) => lines.push(l),
      until,
    });
    for (let i = 0; i < 250 && !lines.length; i++) await new Promise((r) => setTimeout(r, 20));
    const url = /Codec server at (http:\/\/127\.0\.0\.1:\d+)/.exec(lines[0] ?? '')?.[1];
    try {
      expect(url).toBeDefined();
      await check(url!, lines);
    } finally {
      stop();
      await done;
    }
  }

  const preflight = (url: string, origin: string) =>
    fetch(`${url}/decode`, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': 'POST' } });

  test('by default it admits the UI of the server it is configured for (the port + 1000), not :8233 whatever the server', async () => {
    await withServer({ [CODEC_KEYS_ENV]: keys, TEMPORAL_ADDRESS: '127.0.0.1:7300' }, {}, async (url, lines) => {
      expect(lines.join('\n')).toContain('http://localhost:8300, http://127.0.0.1:8300');
      for (const origin of ['http://127.0.0.1:8300', 'http://localhost:8300']) {
        const res = await preflight(url, origin);
        expect({ origin, status: res.status }).toEqual({ origin, status: 204 });
        expect(res.headers.get('access-control-allow-origin')).toBe(origin);
      }
      expect((await preflight(url, 'http://127.0.0.1:8233')).status).toBe(403);
    });
  });

  test('TEMPORAL_UI_URL (the UI the links point at) is admitted by default; --ui-origin comes first', async () => {
    const env = { [CODEC_KEYS_ENV]: keys, TEMPORAL_UI_URL: 'https://temporal-ui.example.test:9443/some/path' };
    await withServer(env, {}, async (url) => {
      expect((await preflight(url, 'https://temporal-ui.example.test:9443')).status).toBe(204);
      expect((await preflight(url, 'http://127.0.0.1:8233')).status).toBe(403);
    });
    await withServer(
      { ...env, [CODEC_CORS_ORIGINS_ENV]: 'https://other.example.test' },
      { uiOrigins: ['https://flag.example.test'] },
      async (url) => {
        expect((await preflight(url, 'https://flag.example.test')).status).toBe(204);
        expect((await preflight(url, 'https://other.example.test')).status).toBe(403);
      },
    );
  });

  test('an origin that is not one (a wildcard, a path, no scheme) is refused with exit code 2 and what is accepted', async () => {
    for (const bad of ['*', 'http://ui.example.test/', 'ui.example.test:8080', 'ftp://ui.example.test']) {
      const errors: string[] = [];
      const code = await codecServerCommand({
        port: 0,
        env: { [CODEC_KEYS_ENV]: keys, [CODEC_CORS_ORIGINS_ENV]: bad },
        out: () => {},
        err: (l) => errors.push(l),
        until: Promise.resolve(),
      });
      expect({ bad, code }).toEqual({ bad, code: 2 });
      expect(errors.join('\n')).toMatch(
        new RegExp(`^error: ${CODEC_CORS_ORIGINS_ENV}: .*(scheme://host|Web UI's origin)`),
      );
    }
  });
});
