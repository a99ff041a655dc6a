import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@switchboard/core';
import { temporalConnectionOptions } from './connection-options';

const base = {
  NODE_ENV: 'test',
  JWT_SECRET: 'x'.repeat(40),
  ENCRYPTION_KEY: '0'.repeat(64),
  TEMPORAL_ADDRESS: 'ns.a1b2c.tmprl.cloud:7233',
};

describe('temporalConnectionOptions', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-temporal-tls-'));
  const cert = join(dir, 'client.pem');
  const key = join(dir, 'client.key');
  const ca = join(dir, 'ca.pem');
  writeFileSync(cert, 'CERT');
  writeFileSync(key, 'KEY');
  writeFileSync(ca, 'CA');

  it('plain for a local server', () => {
    expect(temporalConnectionOptions(loadConfig({ ...base, TEMPORAL_ADDRESS: '127.0.0.1:7233' }))).toEqual({
      address: '127.0.0.1:7233',
    });
  });

  it('TEMPORAL_TLS=true: TLS with the system roots', () => {
    expect(temporalConnectionOptions(loadConfig({ ...base, TEMPORAL_TLS: 'true' }))).toEqual({
      address: base.TEMPORAL_ADDRESS,
      tls: true,
    });
  });

  it('an API key (Temporal Cloud) turns TLS on and is passed as apiKey', () => {
    expect(temporalConnectionOptions(loadConfig({ ...base, TEMPORAL_API_KEY: 'secret-key' }))).toEqual({
      address: base.TEMPORAL_ADDRESS,
      tls: true,
      apiKey: 'secret-key',
    });
  });

  it('mTLS: the certificate pair, CA and server name are read from their files', () => {
    const options = temporalConnectionOptions(
      loadConfig({
        ...base,
        TEMPORAL_TLS_CERT_PATH: cert,
        TEMPORAL_TLS_KEY_PATH: key,
        TEMPORAL_TLS_CA_PATH: ca,
        TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
      }),
    );
    expect(options).toEqual({
      address: base.TEMPORAL_ADDRESS,
      tls: {
        clientCertPair: { crt: Buffer.from('CERT'), key: Buffer.from('KEY') },
        serverRootCACertificate: Buffer.from('CA'),
        serverNameOverride: 'temporal.internal',
      },
    });
  });

  it('a certificate without its key, or an unreadable file, is an error naming the variable', () => {
    expect(() => temporalConnectionOptions(loadConfig({ ...base, TEMPORAL_TLS_CERT_PATH: cert }))).toThrow(
      'TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH go together',
    );
    expect(() =>
      temporalConnectionOptions(
        loadConfig({ ...base, TEMPORAL_TLS_CERT_PATH: cert, TEMPORAL_TLS_KEY_PATH: join(dir, 'missing.key') }),
      ),
    ).toThrow(`TEMPORAL_TLS_KEY_PATH: cannot read ${join(dir, 'missing.key')} (ENOENT)`);
  });

  it('TEMPORAL_TLS must be a boolean', () => {
    expect(() => loadConfig({ ...base, TEMPORAL_TLS: 'maybe' })).toThrow(/TEMPORAL_TLS/);
  });
});
