import { createSecretKey } from 'node:crypto';
import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { JwtModule } from '@nestjs/jwt';
import { ThrottlerModule } from '@nestjs/throttler';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig, REDIS } from '@switchboard/core';
import type Redis from 'ioredis';
import { ApiClient } from './api-client.entity';
import { AuthController } from './auth.controller';
import { AuthGuard } from './auth.guard';
import { AuthService } from './auth.service';
import { ClientStateCache } from './client-state-cache';
import { ClientsController } from './clients.controller';
import { RateLimitGuard, RedisThrottlerStorage } from './rate-limit';

@Module({
  imports: [
    TypeOrmModule.forFeature([ApiClient]),
    JwtModule.registerAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => {
        // A KeyObject, not the string: given a string, jsonwebtoken first tries (and fails) to parse it as a
        // public key on every call, which cost more than everything else in an authenticated request.
        const key = createSecretKey(Buffer.from(config.JWT_SECRET, 'utf8'));
        return {
          secretOrKeyProvider: () => key,
          signOptions: { algorithm: 'HS256' },
          verifyOptions: { algorithms: ['HS256'] },
        };
      },
    }),
    ThrottlerModule.forRootAsync({
      inject: [AppConfig, REDIS],
      useFactory: (config: AppConfig, redis: Redis) => ({
        throttlers: [{ name: 'default', ttl: config.RATE_LIMIT_WINDOW_MS, limit: config.RATE_LIMIT_PER_MINUTE }],
        storage: new RedisThrottlerStorage(redis, config.REDIS_PREFIX),
        errorMessage: (_context, detail) =>
          `Rate limit exceeded: ${detail.limit} requests per ${Math.round(detail.ttl / 1000)} seconds. Retry after ${detail.timeToBlockExpire} seconds.`,
      }),
    }),
  ],
  controllers: [AuthController, ClientsController],
  providers: [
    AuthService,
    ClientStateCache,
    // Order matters: identify the client first, then count the request against its limit.
    { provide: APP_GUARD, useClass: AuthGuard },
    { provide: APP_GUARD, useClass: RateLimitGuard },
  ],
  exports: [AuthService],
})
export class AuthModule {}
