import { CODEC_KEYS_ENV, CodecKeysError, parseCodecKeys } from '../codec';
import { DEFAULT_CODEC_SERVER_PORT, codecUiOrigins, corsOriginProblem, startCodecServer } from '../codec/server';
import { webUiBase } from './web-ui';

/**
 * Comma-separated Web UI origins allowed to call the codec server. Default: the Web UI the CLI's links
 * point at (`TEMPORAL_UI_URL`, else the UI of the server at `TEMPORAL_ADDRESS`: its port + 1000).
 */
export const CODEC_CORS_ORIGINS_ENV = 'DURABLE_AGENT_CODEC_CORS_ORIGINS';
/** Interface to listen on (default 127.0.0.1; `0.0.0.0` in a container). */
export const CODEC_HOST_ENV = 'DURABLE_AGENT_CODEC_HOST';

export interface CodecServerCommandOptions {
  /** Default `DEFAULT_CODEC_SERVER_PORT`. */
  port?: number;
  /** Default `DURABLE_AGENT_CODEC_HOST`, else 127.0.0.1. */
  host?: string;
  env?: NodeJS.ProcessEnv;
  /** `--ui-origin` (repeatable): the Web UI origins allowed; before `DURABLE_AGENT_CODEC_CORS_ORIGINS`. */
  uiOrigins?: string[];
  /** The Temporal server's address, whose Web UI is allowed by default (`TEMPORAL_ADDRESS`, 127.0.0.1:7233). */
  address?: string;
  out?: (line: string) => void;
  err?: (line: string) => void;
  /** Serve until this settles; default until SIGINT or SIGTERM. */
  until?: Promise<unknown>;
}

/**
 * `durable-agent codec-server [--port N]`: serves Temporal's remote codec protocol with the keys of
 * `DURABLE_AGENT_CODEC_KEYS`, so the Web UI and `temporal workflow show` display decrypted payloads.
 * Prints its URL and how to point the Web UI and the CLI at it. Resolves with the exit code: 0 after
 * a signal, 2 when the keys are missing or malformed.
 */
export async function codecServerCommand(options: CodecServerCommandOptions = {}): Promise<number> {
  const env = options.env ?? process.env;
  const out = options.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const err = options.err ?? ((line: string) => process.stderr.write(`${line}\n`));
  let keys;
  try {
    keys = parseCodecKeys(env[CODEC_KEYS_ENV]);
  } catch (e) {
    if (!(e instanceof CodecKeysError)) throw e;
    err(`error: ${e.message}`);
    return 2;
  }
  if (!keys) {
    err(
      `error: ${CODEC_KEYS_ENV} is not set: the codec server needs the same keys as the workers ` +
        `(${CODEC_KEYS_ENV}="<key id>:<base64 of 32 bytes>,…"; make a key with: openssl rand -base64 32).`,
    );
    return 2;
  }
  const configured = options.uiOrigins?.length
    ? options.uiOrigins
    : env[CODEC_CORS_ORIGINS_ENV]?.split(',')
        .map((o) => o.trim())
        .filter(Boolean);
  for (const origin of configured ?? []) {
    const problem = corsOriginProblem(origin);
    if (problem) {
      err(`error: ${options.uiOrigins?.length ? '--ui-origin' : CODEC_CORS_ORIGINS_ENV}: ${problem}`);
      return 2;
    }
  }
  const origins = configured?.length
    ? configured
    : codecUiOrigins(webUiBase(options.address ?? env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233', env));
  const server = await startCodecServer({
    port: options.port ?? DEFAULT_CODEC_SERVER_PORT,
    host: options.host ?? (env[CODEC_HOST_ENV] || undefined),
    keys,
    corsOrigins: origins,
  });
  const ids = [...keys.keys.keys()];
  for (const line of codecServerInstructions(server.url, keys.encryptKeyId, ids, origins)) out(line);
  try {
    await (options.until ?? untilSignal());
  } finally {
    await server.close();
  }
  out('Codec server stopped.');
  return 0;
}

/** What the command prints: where it listens and how to use it from the Web UI and the CLI. */
export function codecServerInstructions(
  url: string,
  encryptKeyId: string,
  keyIds: readonly string[],
  origins: readonly string[],
): string[] {
  return [
    `Codec server at ${url} (key '${encryptKeyId}' encrypts; ${keyIds.map((id) => `'${id}'`).join(', ')} decrypt).`,
    `Web pages allowed to call it (--ui-origin, ${CODEC_CORS_ORIGINS_ENV}): ${origins.join(', ')}.`,
    '',
    'Web UI: click the Codec Server icon (the glasses) in the top bar, enter',
    `  ${url}`,
    '  as the browser endpoint and apply; or start the dev server with it preset:',
    `  temporal server start-dev --ui-codec-endpoint ${url}`,
    'Temporal CLI:',
    `  temporal workflow show --workflow-id <id> --codec-endpoint ${url}`,
    '',
    'It decrypts for anyone who can reach it: keep it on loopback or behind authentication. Ctrl-C stops it.',
  ];
}

function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}
