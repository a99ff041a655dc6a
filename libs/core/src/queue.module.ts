import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AppConfig } from './config/config';
import { QueueWorkersDrain } from './process/queue-workers-drain';
import { PeriodicSweeps } from './sweeps/periodic-sweeps';

/**
 * BullMQ on REDIS_URL, every key under REDIS_PREFIX. Domain modules register their queues with BullModule.registerQueue.
 * Global: PeriodicSweeps (sweeps as job schedulers, one run per period across processes). On shutdown QueueWorkersDrain
 * lets the processors' active jobs finish before the pools close.
 */
@Module({})
export class QueueModule {
  static forRoot(): DynamicModule {
    return {
      module: QueueModule,
      global: true,
      providers: [PeriodicSweeps, QueueWorkersDrain],
      exports: [PeriodicSweeps],
      imports: [
        DiscoveryModule,
        BullModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (config: AppConfig) => ({
            connection: { url: config.REDIS_URL },
            prefix: `${config.REDIS_PREFIX}:bull`,
          }),
        }),
      ],
    };
  }
}
