import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createLogger, loadConfigOrExit, stopOnSignals } from '@switchboard/core';
import { SecretsKeyMismatchError } from '@switchboard/accounts';
import { WorkerModule } from './worker.module';

async function main() {
  const config = loadConfigOrExit();
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), {
    logger: createLogger(config),
    abortOnError: false, // a failed start (e.g. the wrong ENCRYPTION_KEY) exits with its message, see below
  });
  stopOnSignals(app, config, 'Worker');
  new Logger('Worker').log('Worker started');
}

main().catch((error) => {
  if (error instanceof SecretsKeyMismatchError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(78); // EX_CONFIG, as for any other bad setting
  }
  console.error(error);
  process.exit(1);
});
