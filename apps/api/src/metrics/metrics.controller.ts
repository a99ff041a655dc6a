import {
  Controller,
  Get,
  Headers,
  Inject,
  NotFoundException,
  OnModuleDestroy,
  Res,
  UnauthorizedException,
} from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import { Public } from '@switchboard/auth';
import { AUTOMATION_DRIVER, type AutomationDriver } from '@switchboard/automations';
import { AppConfig, collectQueueMetrics, metricsAccess, metricsRegistry, REDIS } from '@switchboard/core';
import type { FastifyReply } from 'fastify';
import type Redis from 'ioredis';
import { Gauge } from 'prom-client';

/**
 * GET /metrics: Prometheus text of this API process (HTTP latency, process) and of the deployment's shared state read
 * at scrape time (queue depths and oldest-job ages, live workers, the automation driver). METRICS_TOKEN: see
 * metricsAccess; docs/observability.md.
 */
@ApiExcludeController()
@Public()
@SkipThrottle()
@Controller('metrics')
export class MetricsController implements OnModuleDestroy {
  private readonly stopQueues: () => Promise<void>;

  constructor(
    private readonly config: AppConfig,
    @Inject(REDIS) redis: Redis,
    @Inject(AUTOMATION_DRIVER) automations: AutomationDriver,
  ) {
    this.stopQueues = collectQueueMetrics(redis, config.REDIS_PREFIX);
    driverUp.source = automations;
  }

  async onModuleDestroy(): Promise<void> {
    driverUp.source = undefined;
    await this.stopQueues();
  }

  @Get()
  async metrics(@Headers('authorization') authorization: string | undefined, @Res() reply: FastifyReply) {
    const access = metricsAccess(this.config, authorization);
    if (access === 'disabled') throw new NotFoundException({ message: 'Cannot GET /metrics' });
    if (access === 'unauthorized') {
      reply.header('www-authenticate', 'Bearer');
      throw new UnauthorizedException({ message: 'METRICS_TOKEN required: send Authorization: Bearer <token>' });
    }
    reply.header('content-type', metricsRegistry.contentType).send(await metricsRegistry.metrics());
  }
}

const driverUp = Object.assign(
  new Gauge({
    name: 'switchboard_automation_driver_up',
    help: 'The automation driver answers its health check (1) or not (0), by driver (embedded, temporal)',
    labelNames: ['driver'] as const,
    registers: [metricsRegistry],
    async collect() {
      this.reset();
      if (!driverUp.source) return;
      const health = await driverUp.source.health().catch(() => ({ driver: 'unknown', status: 'down' }));
      this.set({ driver: health.driver }, health.status === 'up' ? 1 : 0);
    },
  }),
  { source: undefined as AutomationDriver | undefined },
);
