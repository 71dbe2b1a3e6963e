import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** Files of a test PKI generated with `openssl`: a CA and the server and client certificates it signed. */
export interface TestPki {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A second CA that signed nothing here: a client trusting only it must refuse the server. */
  otherCaCert: string;
  /** A client certificate signed by the other CA: a server trusting only `caCert` must refuse it. */
  strangerCert: string;
  strangerKey: string;
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function openssl(cwd: string, args: string[]): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/**
 * Two CAs and certificates they signed, in a fresh temporary folder. The server certificate names
 * `localhost`, `127.0.0.1` and `temporal.test` (for a server-name override); client certificates
 * are for client authentication only.
 */
export function createTestPki(): TestPki {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'da-pki-'));
  for (const ca of ['ca', 'other-ca']) {
    openssl(
      dir,
      ['req', '-x509', ...EC_KEY, '-keyout', `${ca}.key`, '-out', `${ca}.pem`, '-days', '2'].concat([
        '-subj',
        `/CN=durable-agent test ${ca}`,
      ]),
    );
  }
  const sign = (name: string, ca: string, subject: string, extensions: string) => {
    writeFileSync(path.join(dir, `${name}.ext`), extensions);
    openssl(dir, ['req', ...EC_KEY, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject]);
    openssl(dir, [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${ca}.pem`,
      '-CAkey',
      `${ca}.key`,
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
    ]);
  };
  sign(
    'server',
    'ca',
    '/CN=localhost',
    'subjectAltName=DNS:localhost,DNS:temporal.test,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n',
  );
  sign('client', 'ca', '/CN=durable-agent worker', 'extendedKeyUsage=clientAuth\n');
  sign('stranger', 'other-ca', '/CN=stranger', 'extendedKeyUsage=clientAuth\n');
  const file = (name: string) => path.join(dir, name);
  return {
    dir,
    caCert: file('ca.pem'),
    serverCert: file('server.pem'),
    serverKey: file('server.key'),
    clientCert: file('client.pem'),
    clientKey: file('client.key'),
    otherCaCert: file('other-ca.pem'),
    strangerCert: file('stranger.pem'),
    strangerKey: file('stranger.key'),
  };
}
