import { readFileSync } from 'node:fs';
import * as http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import type { TestPki } from './certs';

/**
 * A TLS endpoint in front of a plaintext Temporal server, as a load balancer or Temporal Cloud's
 * front door terminates TLS: HTTP/2 over TLS with the test PKI's server certificate, every gRPC call
 * forwarded to the server with its headers, body and trailers. The dev server of Temporal CLI 1.5.1
 * has no TLS options, so the TLS a client meets here is this front's (Node's TLS), in front of a
 * real server.
 *
 * - `requireClientCert`: mTLS; the handshake fails for a client without a certificate the CA signed.
 * - `apiKey`: calls without `authorization: Bearer <apiKey>` get UNAUTHENTICATED, as Cloud answers.
 */
export interface TlsFront {
  /** `127.0.0.1:<port>`: an address the server certificate names. */
  address: string;
  /** The `authorization` header of every call, in order. */
  authorizations: (string | undefined)[];
  /** Every other header name the calls carried (gRPC metadata included). */
  headerNames: Set<string>;
  /** TLS handshakes the front refused (no or untrusted client certificate). */
  refusedHandshakes: string[];
  /** Calls forwarded to the server. */
  forwarded(): number;
  close(): Promise<void>;
}

const GRPC_UNAUTHENTICATED = '16';

export async function startTlsFront(options: {
  upstream: string;
  pki: TestPki;
  requireClientCert?: boolean;
  apiKey?: string;
}): Promise<TlsFront> {
  const { pki } = options;
  const server = http2.createSecureServer({
    key: readFileSync(pki.serverKey),
    cert: readFileSync(pki.serverCert),
    ...(options.requireClientCert ? { ca: readFileSync(pki.caCert), requestCert: true, rejectUnauthorized: true } : {}),
  });
  const upstream = http2.connect(`http://${options.upstream}`);
  upstream.on('error', () => {});
  const front: TlsFront & { count: number } = {
    address: '',
    authorizations: [],
    headerNames: new Set(),
    refusedHandshakes: [],
    count: 0,
    forwarded: () => front.count,
    close: () =>
      new Promise<void>((resolve) => {
        upstream.close();
        server.close(() => resolve());
        // Long polls keep sessions open: end them so close() returns.
        for (const session of sessions) session.destroy();
      }),
  };
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
    session.on('error', () => {});
  });
  server.on('tlsClientError', (err) => front.refusedHandshakes.push(err.message));

  server.on('stream', (stream, headers) => {
    stream.on('error', () => {});
    const authorization = headers.authorization;
    front.authorizations.push(typeof authorization === 'string' ? authorization : undefined);
    for (const name of Object.keys(headers)) if (!name.startsWith(':')) front.headerNames.add(name);
    if (options.apiKey !== undefined && authorization !== `Bearer ${options.apiKey}`) {
      stream.respond(
        {
          ':status': 200,
          'content-type': 'application/grpc',
          'grpc-status': GRPC_UNAUTHENTICATED,
          'grpc-message': 'Request unauthorized.',
        },
        { endStream: true },
      );
      return;
    }
    front.count += 1;
    const out: http2.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(headers)) {
      if (!name.startsWith(':') || name === ':method' || name === ':path') out[name] = value;
    }
    const request = upstream.request(out);
    request.on('error', () => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
    let trailers: http2.OutgoingHttpHeaders = { 'grpc-status': '0' };
    request.on('trailers', (received) => {
      trailers = { ...received };
    });
    request.on('response', (response) => {
      const head = { ...response };
      if (stream.destroyed) return;
      if ('grpc-status' in head) {
        // A trailers-only answer (an error): headers and end of stream at once.
        stream.respond(head, { endStream: true });
        return;
      }
      stream.respond(head, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers(trailers));
      request.pipe(stream);
    });
    stream.pipe(request);
    stream.on('close', () => {
      if (!request.closed) request.close(http2.constants.NGHTTP2_CANCEL);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  front.address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return front;
}
