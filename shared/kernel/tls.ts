// The TLS certificate of the HTTPS API (and later STARTTLS): the configured files or a self-signed pair made once.
import { readFileSync } from 'node:fs';
import type { Config } from '../config/index.js';
import { loadOrCreate } from './data-dir.js';

export interface TlsMaterial {
  cert: string;
  key: string;
  selfSigned: boolean;
}

export async function loadTls(config: Config): Promise<TlsMaterial> {
  if (config.tls) {
    return { cert: readFileSync(config.tls.certFile, 'utf8'), key: readFileSync(config.tls.keyFile, 'utf8'), selfSigned: false };
  }
  let pending: Promise<{ cert: string; private: string }> | undefined;
  // selfsigned (its X.509 and ASN.1 libraries, ~350 KB) is imported only when a pair must be made: once per data dir.
  const make = () =>
    (pending ??= import('selfsigned').then(({ default: selfsigned }) =>
      selfsigned.generate([{ name: 'commonName', value: config.publicUrl.hostname }], {
        keySize: 2048,
        algorithm: 'sha256',
        notAfterDate: new Date(Date.now() + 825 * 24 * 3600 * 1000),
        extensions: [
          { name: 'basicConstraints', cA: false },
          { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
          { name: 'extKeyUsage', serverAuth: true },
          {
            name: 'subjectAltName',
            altNames: [
              { type: 2, value: 'localhost' },
              { type: 2, value: config.publicUrl.hostname },
              { type: 2, value: config.hostname },
              { type: 7, ip: '127.0.0.1' },
              { type: 7, ip: '::1' },
            ],
          },
        ],
      }),
    ));
  const key = await loadOrCreate(config.dataDir, 'tls/key.pem', async () => (await make()).private);
  const cert = await loadOrCreate(config.dataDir, 'tls/cert.pem', async () => (await make()).cert);
  return { cert, key, selfSigned: true };
}
