import { Global, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import type Redis from 'ioredis';
import { AppConfig } from '../config/config';
import { closeRedis, createRedis } from './redis';

export const REDIS = Symbol('REDIS');
export const InjectRedis = () => Inject(REDIS);

@Injectable()
class RedisCloser implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis) {}
  async onApplicationShutdown() {
    await closeRedis(this.redis);
  }
}

/** One shared Redis connection for general use (rate limits, locks); BullMQ opens its own. */
@Global()
@Module({
  providers: [
    { provide: REDIS, inject: [AppConfig], useFactory: (config: AppConfig) => createRedis(config.REDIS_URL) },
    RedisCloser,
  ],
  exports: [REDIS],
})
export class RedisModule {}
