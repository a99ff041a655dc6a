import { Controller, Get, Inject } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import { HealthCheck, HealthCheckService, HealthIndicatorService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { Public } from '@switchboard/auth';
import { AUTOMATION_DRIVER, type AutomationDriver } from '@switchboard/automations';
import { aliveWorkers, AppConfig, REDIS } from '@switchboard/core';
import type Redis from 'ioredis';

@ApiTags('Health')
@Public()
@SkipThrottle()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
    private readonly indicators: HealthIndicatorService,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(AUTOMATION_DRIVER) private readonly automations: AutomationDriver,
    private readonly config: AppConfig,
  ) {}

  @Get()
  @ApiOperation({ summary: 'Liveness: the process answers' })
  live() {
    return { status: 'ok' };
  }

  @Get('ready')
  @HealthCheck()
  @ApiOperation({
    summary:
      'Readiness: PostgreSQL, Redis and the workflow engine driver (503 when one is down); status "degraded" (still 200) when no worker process has a heartbeat: requests are served, background work waits',
  })
  async ready() {
    let workers = 0;
    const result = await this.health.check([
      () => this.db.pingCheck('postgres', { timeout: 2000 }),
      async () => {
        const redis = this.indicators.check('redis');
        try {
          // the shared connection queues commands while Redis is away: unbounded, the check would hang with it
          let timer: ReturnType<typeof setTimeout> | undefined;
          await Promise.race([
            this.redis.ping(),
            new Promise((_, reject) => {
              timer = setTimeout(() => reject(new Error('Redis did not answer within 2 s')), 2000);
            }),
          ]).finally(() => clearTimeout(timer));
          return redis.up();
        } catch (error) {
          return redis.down({ message: (error as Error).message });
        }
      },
      async () => {
        // Embedded: up with Postgres and Redis. Temporal: the frontend answers (connecting lazily if needed).
        const engine = this.indicators.check('workflowEngine');
        // Temporal also reports `workers`: how many worker processes poll the task queue.
        const { driver, status, message, workers } = await this.automations.health();
        return status === 'up'
          ? engine.up({ driver, ...(workers === undefined ? {} : { workers }) })
          : engine.down({ driver, message });
      },
      async () => {
        // Worker processes write a heartbeat every 5 s (WorkerHeartbeat); none: sends, webhooks and runs wait.
        workers = await aliveWorkers(this.redis, this.config.REDIS_PREFIX);
        return this.indicators.check('worker').up({ workers });
      },
    ]);
    return workers > 0
      ? result
      : { ...result, status: 'degraded', message: 'no worker process has written a heartbeat in the last 20 s' };
  }
}
