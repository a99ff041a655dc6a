import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from './config/config';
import { PeriodicSweeps } from './sweeps/periodic-sweeps';

/**
 * BullMQ on REDIS_URL, every key under REDIS_PREFIX. Domain modules register their queues with BullModule.registerQueue.
 * Global: PeriodicSweeps (sweeps as job schedulers, one run per period across processes).
 */
@Module({})
export class QueueModule {
  static forRoot(): DynamicModule {
    return {
      module: QueueModule,
      global: true,
      providers: [PeriodicSweeps],
      exports: [PeriodicSweeps],
      imports: [
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
