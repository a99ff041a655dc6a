import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { createServer, type Server } from 'node:http';
import { AppConfig } from '../config/config';
import { metricsAccess } from './metrics-endpoint';
import { metricsRegistry } from './metrics';

/** The worker's own /metrics on WORKER_METRICS_PORT (unset: none), with the API's access rule (METRICS_TOKEN). */
@Injectable()
export class WorkerMetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(WorkerMetricsServer.name);
  private server?: Server;

  constructor(private readonly config: AppConfig) {}

  async onApplicationBootstrap(): Promise<void> {
    const port = this.config.WORKER_METRICS_PORT;
    if (port === undefined) return;
    if (metricsAccess(this.config, undefined) === 'disabled') {
      this.logger.warn('WORKER_METRICS_PORT is set but METRICS_TOKEN is not: no metrics server in production');
      return;
    }
    this.server = createServer((req, res) => {
      if (req.url?.split('?')[0] !== '/metrics') return void res.writeHead(404).end();
      if (metricsAccess(this.config, req.headers.authorization) !== 'ok')
        return void res.writeHead(401, { 'www-authenticate': 'Bearer' }).end();
      metricsRegistry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': metricsRegistry.contentType }).end(text),
        (error: Error) => res.writeHead(500).end(error.message),
      );
    });
    await new Promise<void>((resolve) => this.server!.listen(port, this.config.WORKER_METRICS_HOST, resolve));
    this.logger.log(`metrics on http://${this.config.WORKER_METRICS_HOST}:${port}/metrics`);
  }

  async onApplicationShutdown(): Promise<void> {
    await new Promise((resolve) => (this.server ? this.server.close(resolve) : resolve(undefined)));
  }
}
