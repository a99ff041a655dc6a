import { AppConfig } from '@switchboard/core';
import { readFileSync } from 'node:fs';

/** What both `Connection` (client) and `NativeConnection` (worker) accept for TLS. */
export interface TemporalTlsOptions {
  serverNameOverride?: string;
  serverRootCACertificate?: Buffer;
  clientCertPair?: { crt: Buffer; key: Buffer };
}

export interface TemporalConnectionOptions {
  address: string;
  tls?: TemporalTlsOptions | boolean;
  apiKey?: string;
}

type TemporalSettings = Pick<
  AppConfig,
  | 'TEMPORAL_ADDRESS'
  | 'TEMPORAL_TLS'
  | 'TEMPORAL_TLS_CERT_PATH'
  | 'TEMPORAL_TLS_KEY_PATH'
  | 'TEMPORAL_TLS_CA_PATH'
  | 'TEMPORAL_TLS_SERVER_NAME'
  | 'TEMPORAL_API_KEY'
>;

const read = (path: string, name: string): Buffer => {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new Error(
      `${name}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
};

/**
 * Connection options for the API's client and the worker, from the configuration: plain for a local server;
 * TLS when TEMPORAL_TLS is true or a certificate / API key is given (Temporal Cloud: mTLS with
 * TEMPORAL_TLS_CERT_PATH + TEMPORAL_TLS_KEY_PATH, or TEMPORAL_API_KEY). Files are read here, so a missing one names
 * its variable.
 */
export function temporalConnectionOptions(config: TemporalSettings): TemporalConnectionOptions {
  if (!config.TEMPORAL_ADDRESS) throw new Error('TEMPORAL_ADDRESS is not set');
  const options: TemporalConnectionOptions = { address: config.TEMPORAL_ADDRESS };
  if (Boolean(config.TEMPORAL_TLS_CERT_PATH) !== Boolean(config.TEMPORAL_TLS_KEY_PATH)) {
    throw new Error('TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH go together (a client certificate and its key)');
  }
  const tls: TemporalTlsOptions = {};
  if (config.TEMPORAL_TLS_CERT_PATH && config.TEMPORAL_TLS_KEY_PATH) {
    tls.clientCertPair = {
      crt: read(config.TEMPORAL_TLS_CERT_PATH, 'TEMPORAL_TLS_CERT_PATH'),
      key: read(config.TEMPORAL_TLS_KEY_PATH, 'TEMPORAL_TLS_KEY_PATH'),
    };
  }
  if (config.TEMPORAL_TLS_CA_PATH)
    tls.serverRootCACertificate = read(config.TEMPORAL_TLS_CA_PATH, 'TEMPORAL_TLS_CA_PATH');
  if (config.TEMPORAL_TLS_SERVER_NAME) tls.serverNameOverride = config.TEMPORAL_TLS_SERVER_NAME;
  const useTls = config.TEMPORAL_TLS || Object.keys(tls).length > 0 || Boolean(config.TEMPORAL_API_KEY);
  if (useTls) options.tls = Object.keys(tls).length > 0 ? tls : true;
  if (config.TEMPORAL_API_KEY) options.apiKey = config.TEMPORAL_API_KEY;
  return options;
}
