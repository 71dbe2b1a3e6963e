import { Client, Connection } from '@temporalio/client';
import { isIP } from 'node:net';
import { checkServerIdentity, connect as tlsConnect } from 'node:tls';
import type { DataConverter } from '@temporalio/common';
import { dataConverterFromEnv } from '../codec';
import { connectionOptions, describeConnection, temporalConfig, type TemporalConfig } from './config';

/** A connection to Temporal that could not be made: the reason, with where and how it was tried. */
export class ConnectionFailedError extends Error {
  constructor(
    config: TemporalConfig,
    reason: string,
    /** The SDK's error (not `cause`: the CLI prints a cause's message after the error's, and `reason` has it). */
    readonly error: unknown,
  ) {
    super(`cannot connect to Temporal at ${describeConnection(config)}: ${reason}`);
    this.name = 'ConnectionFailedError';
  }
}

/**
 * Why connecting failed, in one line: the error's messages down its cause chain (the SDK wraps the
 * server's answer, such as `16 UNAUTHENTICATED: …`), and for TLS what a handshake of our own says,
 * since the SDK reports a refused certificate only as a missed deadline.
 */
export async function connectFailureReason(config: TemporalConfig, err: unknown): Promise<string> {
  const messages: string[] = [];
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 6; depth++) {
    const text = (e instanceof Error ? e.message : String(e)).split('\n')[0] ?? '';
    if (text && !messages.some((m) => m.includes(text))) messages.push(text);
    e = (e as { cause?: unknown }).cause;
  }
  const tls = config.tls ? await tlsHandshakeProblem(config) : undefined;
  return [...messages, ...(tls ? [`TLS handshake: ${tls}`] : [])].join(': ');
}

/** OpenSSL's and Node's TLS errors as what to check. */
function tlsErrorInWords(err: NodeJS.ErrnoException): string {
  const text = /SSL routines:[^:]*:([^:]+)/.exec(err.message)?.[1] ?? err.message.split('\n')[0] ?? err.message;
  if (/alert certificate required/.test(text)) {
    return `${text}: the server requires a client certificate (TEMPORAL_TLS_CLIENT_CERT_PATH and _KEY_PATH)`;
  }
  if (/alert (unknown ca|bad certificate|certificate unknown)/.test(text)) {
    return `${text}: the server does not accept this client certificate`;
  }
  if (/verify|self[- ]signed|UNABLE_TO|CERT_/i.test(`${text} ${err.code ?? ''}`)) {
    const hint =
      err.code === 'ERR_TLS_CERT_ALTNAME_INVALID' ? 'TEMPORAL_TLS_SERVER_NAME' : 'TEMPORAL_TLS_SERVER_CA_CERT_PATH';
    return `${text}: the server's certificate is not trusted (${hint})`;
  }
  return text;
}

/** Opens a TLS connection as the SDK would and returns what went wrong (a certificate refused either way), if anything. */
function tlsHandshakeProblem(config: TemporalConfig, timeoutMs = 3000): Promise<string | undefined> {
  const options = typeof config.tls === 'object' ? config.tls : {};
  const match = /^(.*):(\d+)$/.exec(config.address);
  if (!match) return Promise.resolve(undefined);
  const host = match[1]!.replace(/^\[|\]$/g, '');
  const name = options.serverNameOverride ?? host;
  return new Promise((resolve) => {
    const socket = tlsConnect({
      host,
      port: Number(match[2]),
      ...(isIP(name) ? {} : { servername: name }),
      ALPNProtocols: ['h2'],
      ...(options.serverRootCACertificate ? { ca: Buffer.from(options.serverRootCACertificate) } : {}),
      ...(options.clientCertPair
        ? { cert: Buffer.from(options.clientCertPair.crt), key: Buffer.from(options.clientCertPair.key) }
        : {}),
      checkServerIdentity: (_host, cert) => checkServerIdentity(name, cert),
    });
    const done = (problem: string | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(problem);
    };
    // With TLS 1.3 a server refuses a client certificate after the handshake: wait for its alert,
    // or for it to hang up.
    const timer = setTimeout(() => done(undefined), timeoutMs);
    socket.once('secureConnect', () => setTimeout(() => done(undefined), 500));
    socket.once('error', (e) => done(tlsErrorInWords(e)));
    socket.once('close', () =>
      done('the server hung up right after the handshake (does it require a client certificate it trusts?)'),
    );
  });
}

/**
 * A client connected as `config` says (address, namespace, TLS, API key, gRPC metadata), with the
 * payload codec of `DURABLE_AGENT_CODEC_KEYS` when it is set (`dataConverterFromEnv`).
 */
export async function connectClient(
  config: TemporalConfig = temporalConfig(),
  dataConverter: DataConverter | undefined = dataConverterFromEnv(),
): Promise<Client> {
  let connection: Connection;
  try {
    connection = await Connection.connect(connectionOptions(config));
  } catch (err) {
    throw new ConnectionFailedError(config, await connectFailureReason(config, err), err);
  }
  return new Client({ connection, namespace: config.namespace, ...(dataConverter ? { dataConverter } : {}) });
}
