import { WorkerHost } from '@nestjs/bullmq';
import { Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';

/**
 * Shutdown, first step of a worker process: every BullMQ processor (`@Processor` WorkerHost) stops taking jobs and the
 * jobs it is running finish. This runs before any module's `onApplicationShutdown`, so the database pool and Redis are
 * still open while they finish (@nestjs/bullmq would only close the workers among those hooks, in no set order).
 * Workers created by hand (automations, sweeps) close in their own `beforeApplicationShutdown`.
 */
@Injectable()
export class QueueWorkersDrain implements BeforeApplicationShutdown {
  private readonly logger = new Logger('QueueWorkersDrain');

  constructor(private readonly discovery: DiscoveryService) {}

  async beforeApplicationShutdown(): Promise<void> {
    const hosts = this.discovery
      .getProviders()
      .map((wrapper) => wrapper.instance as unknown)
      .filter((instance): instance is WorkerHost => instance instanceof WorkerHost);
    const workers = hosts.flatMap((host) => {
      try {
        return [host.worker];
      } catch {
        return []; // a processor whose worker never started
      }
    });
    if (!workers.length) return;
    const started = Date.now();
    await Promise.all(workers.map((worker) => worker.close()));
    this.logger.log(`${workers.length} queue workers closed, active jobs finished, in ${Date.now() - started} ms`);
  }
}
