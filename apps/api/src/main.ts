import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { loadConfigOrExit, stopOnSignals } from '@switchboard/core';
import { SecretsKeyMismatchError } from '@switchboard/accounts';
import { createApiApp } from './create-api-app';

async function main() {
  const config = loadConfigOrExit();
  const app = await createApiApp(config);
  stopOnSignals(app, config, 'Api');
  await app.listen(config.PORT, config.HOST);
  const { address, port } = app.getHttpServer().address() as { address: string; port: number };
  const shown = address.includes(':') ? `[${address}]` : address;
  new Logger('Api').log(`API listening on http://${shown}:${port} (HOST=${config.HOST}, PORT=${config.PORT})`);
}

main().catch((error) => {
  if (error instanceof SecretsKeyMismatchError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(78); // EX_CONFIG, as for any other bad setting
  }
  console.error(error);
  process.exit(1);
});
