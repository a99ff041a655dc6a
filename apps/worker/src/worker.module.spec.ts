import { ModulesContainer } from '@nestjs/core';
import { Test, type TestingModule } from '@nestjs/testing';
import * as accounts from '@switchboard/accounts';
import * as auth from '@switchboard/auth';
import * as automations from '@switchboard/automations';
import * as campaigns from '@switchboard/campaigns';
import * as contacts from '@switchboard/contacts';
import { loadConfig } from '@switchboard/core';
import * as flows from '@switchboard/flows';
import * as messaging from '@switchboard/messaging';
import * as templates from '@switchboard/templates';
import { Queue } from 'bullmq';
import { randomBytes } from 'node:crypto';
import { WorkerModule } from './worker.module';
import { ApiModule } from '../../api/src/api.module';

/**
 * Each service of ours is built once per process: a module imported from several places (messaging's core through
 * campaigns, automations and flows) must not give a second instance of its providers (a second pacer, a second
 * batcher, a second set of queue connections). Compiles the real process modules (providers are constructed; no
 * lifecycle hook runs, so no queue worker starts) against PostgreSQL and Redis.
 */
const OUR_CLASSES = new Set<unknown>(
  [accounts, auth, automations, campaigns, contacts, flows, messaging, templates].flatMap((lib) =>
    Object.values(lib).filter((v) => typeof v === 'function'),
  ),
);

function instancesByClass(module: TestingModule): { ours: Map<string, number>; queues: Map<string, number> } {
  const ours = new Map<string, number>();
  const queues = new Map<string, number>();
  const seen = new Set<unknown>();
  for (const mod of module.get(ModulesContainer).values()) {
    for (const wrapper of mod.providers.values()) {
      const instance = wrapper.instance as object | undefined;
      if (!instance || typeof instance !== 'object' || seen.has(instance)) continue;
      seen.add(instance);
      if (instance instanceof Queue) queues.set(instance.name, (queues.get(instance.name) ?? 0) + 1);
      else if (OUR_CLASSES.has(instance.constructor))
        ours.set(instance.constructor.name, (ours.get(instance.constructor.name) ?? 0) + 1);
    }
  }
  return { ours, queues };
}

const twice = (counts: Map<string, number>) => [...counts].filter(([, n]) => n > 1).map(([name, n]) => `${name} x${n}`);

describe('process modules build each service once', () => {
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    DATABASE_URL:
      process.env.DATABASE_URL?.replace(/\/[^/]*$/, '/postgres') ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    REDIS_PREFIX: `sbu:${randomBytes(4).toString('hex')}`,
    DATABASE_POOL_SIZE: '1',
    LOG_LEVEL: 'error',
  });

  it.each([
    [
      'worker',
      () => WorkerModule.forRoot(config),
      [
        'SendQueueService',
        'MessageEventsService',
        'SendExecutor',
        'CampaignsService',
        'CampaignFanoutService',
        'PlatformAutomationActivities',
        'InboundMessages',
        'FlowResponsesListener',
      ],
    ],
    [
      'api',
      () => ApiModule.forRoot(config),
      [
        'SendQueueService',
        'MessagesService',
        'CampaignsService',
        'FlowsService',
        'WorkflowsService',
        'InboundMessages',
      ],
    ],
  ])('%s', async (_name, root, expected) => {
    const module = await Test.createTestingModule({ imports: [root()] }).compile();
    try {
      const { ours, queues } = instancesByClass(module);
      for (const name of expected) expect([name, ours.get(name)]).toEqual([name, 1]);
      expect(twice(ours)).toEqual([]);
      expect(twice(queues)).toEqual([]);
    } finally {
      await module.close();
    }
  });
});
