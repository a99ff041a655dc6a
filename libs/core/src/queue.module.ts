import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from './config/config';

/** BullMQ on REDIS_URL, every key under REDIS_PREFIX. Domain modules register their queues with BullModule.registerQueue. */
@Module({})
export class QueueModule {
  static forRoot(): DynamicModule {
    return {
      module: QueueModule,
      imports: [
        BullModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (config: AppConfig) => ({ connection: { url: config.REDIS_URL }, prefix: `${config.REDIS_PREFIX}:bull` }),
        }),
      ],
    };
  }
}
