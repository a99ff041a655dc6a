import { Controller, Get, Inject } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import { HealthCheck, HealthCheckService, HealthIndicatorService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { Public } from '@switchboard/auth';
import { AUTOMATION_DRIVER, type AutomationDriver } from '@switchboard/automations';
import { REDIS } from '@switchboard/core';
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
  ) {}

  @Get()
  @ApiOperation({ summary: 'Liveness: the process answers' })
  live() {
    return { status: 'ok' };
  }

  @Get('ready')
  @HealthCheck()
  @ApiOperation({ summary: 'Readiness: PostgreSQL, Redis and the workflow engine driver' })
  ready() {
    return this.health.check([
      () => this.db.pingCheck('postgres', { timeout: 2000 }),
      async () => {
        const redis = this.indicators.check('redis');
        try {
          await this.redis.ping();
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
    ]);
  }
}
