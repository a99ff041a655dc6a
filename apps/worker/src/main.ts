import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createLogger, loadConfigOrExit } from '@switchboard/core';
import { WorkerModule } from './worker.module';

async function main() {
  const config = loadConfigOrExit();
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), {
    logger: createLogger(config),
  });
  app.enableShutdownHooks();
  new Logger('Worker').log('Worker started');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
