import { Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { AppConfig, loadConfig, type PeriodicSweeps } from '@switchboard/core';
import { DataSource } from 'typeorm';
import { AUTOMATION_DRIVER, type AutomationDriver } from '../driver/automation-driver';
import { EmbeddedAutomationDriver } from '../driver/embedded-automation-driver';
import { automationDriverKind, automationDriverProviders } from '../automations.module';
import { AutomationQueue } from '../embedded/automation-queue';
import { TemporalClientService } from './temporal-client.service';
import { TemporalAutomationDriver } from './temporal-driver';
import { createTemporalWorker, TemporalAutomationWorker, type TemporalWorkerFactory } from './temporal-worker';
import type { TemporalActivities } from './temporal-activities';

const base = { NODE_ENV: 'test', JWT_SECRET: 'x'.repeat(40), ENCRYPTION_KEY: 'a'.repeat(64) };

async function selected(env: Record<string, string>, driver?: 'embedded' | 'temporal'): Promise<AutomationDriver> {
  const module = await Test.createTestingModule({
    providers: [
      { provide: AppConfig, useValue: loadConfig({ ...base, ...env }) },
      { provide: DataSource, useValue: {} },
      ...automationDriverProviders(driver),
    ],
  })
    .overrideProvider(AutomationQueue)
    .useValue({})
    .compile();
  return module.get(AUTOMATION_DRIVER);
}

// The adapters log every failure they classify; the assertions say what matters here.
beforeAll(() => Logger.overrideLogger(false));
afterAll(() => Logger.overrideLogger(['error', 'warn', 'log']));

describe('driver selection', () => {
  it('embedded by default, Temporal when TEMPORAL_ADDRESS is set, forced by the module option', async () => {
    expect(automationDriverKind(loadConfig(base))).toBe('embedded');
    expect(automationDriverKind(loadConfig({ ...base, TEMPORAL_ADDRESS: 'localhost:7233' }))).toBe('temporal');
    expect(automationDriverKind(loadConfig({ ...base, TEMPORAL_ADDRESS: 'localhost:7233' }), 'embedded')).toBe(
      'embedded',
    );

    const embedded = await selected({});
    expect(embedded).toBeInstanceOf(EmbeddedAutomationDriver);
    expect(embedded.replyTargets).toBe('reply-or-step');
    expect(await embedded.health()).toEqual({ driver: 'embedded', status: 'up' });

    const temporal = await selected({ TEMPORAL_ADDRESS: 'temporal.internal:7233' });
    expect(temporal).toBeInstanceOf(TemporalAutomationDriver);
    expect(temporal.kind).toBe('temporal');
    expect(temporal.replyTargets).toBe('active');
    expect(await selected({}, 'temporal')).toBeInstanceOf(TemporalAutomationDriver);
  });

  it('config: TEMPORAL_NAMESPACE and TEMPORAL_TASK_QUEUE have defaults and are validated', () => {
    const config = loadConfig(base);
    expect(config.TEMPORAL_NAMESPACE).toBe('default');
    expect(config.TEMPORAL_TASK_QUEUE).toBe('switchboard-automations');
    const custom = loadConfig({
      ...base,
      TEMPORAL_ADDRESS: '[::1]:7233',
      TEMPORAL_NAMESPACE: 'prod.switchboard',
      TEMPORAL_TASK_QUEUE: 'automations-eu',
    });
    expect([custom.TEMPORAL_ADDRESS, custom.TEMPORAL_NAMESPACE, custom.TEMPORAL_TASK_QUEUE]).toEqual([
      '[::1]:7233',
      'prod.switchboard',
      'automations-eu',
    ]);
    expect(() => loadConfig({ ...base, TEMPORAL_ADDRESS: 'http://localhost' })).toThrow(
      /TEMPORAL_ADDRESS must be host:port/,
    );
    expect(() => loadConfig({ ...base, TEMPORAL_NAMESPACE: 'no spaces please' })).toThrow(/TEMPORAL_NAMESPACE/);
    expect(() => loadConfig({ ...base, TEMPORAL_TASK_QUEUE: 'a b' })).toThrow(/TEMPORAL_TASK_QUEUE/);
  });
});

describe('TemporalClientService', () => {
  it('an unreachable server rejects getClient and check (2 s health deadline); after shutdown the client refuses', async () => {
    const config = loadConfig({ ...base, TEMPORAL_ADDRESS: '127.0.0.1:1' });
    const service = new TemporalClientService(config);
    await expect(service.getClient()).rejects.toThrow();
    await expect(service.check()).rejects.toThrow();
    await service.onApplicationShutdown();
    await expect(service.getClient()).rejects.toThrow(/closed/);
  }, 20_000);

  it('an injected client is used as is; check() asks its connection', async () => {
    const service = new TemporalClientService(loadConfig(base));
    const ensureConnected = jest.fn(async () => undefined);
    const fake = { connection: { ensureConnected } } as never;
    service.useClient(fake);
    expect(await service.getClient()).toBe(fake);
    await service.check();
    expect(ensureConnected).toHaveBeenCalled();
  });
});

describe('TemporalAutomationWorker', () => {
  const config = loadConfig({
    ...base,
    TEMPORAL_ADDRESS: '127.0.0.1:7233',
    TEMPORAL_NAMESPACE: 'ns1',
    TEMPORAL_TASK_QUEUE: 'q1',
  });
  const activities = {
    forWorker: () => ({ performEffect: jest.fn(), recordRunState: jest.fn() }),
  } as unknown as TemporalActivities;
  const sweeps = { register: jest.fn(async () => undefined) } as unknown as PeriodicSweeps;
  const temporalDriver = (recoverPending = jest.fn(async () => ({ started: 0, failed: 0 }))) =>
    ({ kind: 'temporal', recoverPending }) as unknown as TemporalAutomationDriver;

  function fakeWorker() {
    let state = 'RUNNING';
    let stop!: () => void;
    const done = new Promise<void>((resolve) => (stop = resolve));
    const worker = {
      run: jest.fn(() => done),
      shutdown: jest.fn(() => {
        state = 'STOPPED';
        stop();
      }),
      getState: jest.fn(() => state),
    };
    const connection = { close: jest.fn(async () => undefined) };
    return { worker, connection };
  }

  it('creates the worker with the configured namespace, task queue and both activities, runs it, drains it on shutdown', async () => {
    const driver = temporalDriver();
    const service = new TemporalAutomationWorker(config, activities, driver, driver, sweeps);
    const created = fakeWorker();
    const factory = jest.fn<ReturnType<TemporalWorkerFactory>, Parameters<TemporalWorkerFactory>>(
      async () => created as never,
    );
    service.factory = factory;
    await service.onApplicationBootstrap();
    await new Promise((r) => setImmediate(r));
    expect(factory).toHaveBeenCalledWith(
      expect.objectContaining({ address: '127.0.0.1:7233', namespace: 'ns1', taskQueue: 'q1' }),
    );
    expect(Object.keys(factory.mock.calls[0][0].activities).sort()).toEqual(['performEffect', 'recordRunState']);
    expect(created.worker.run).toHaveBeenCalled();
    expect(service.isRunning).toBe(true);
    expect(driver.recoverPending).toHaveBeenCalled(); // the recovery sweep runs at start
    expect(sweeps.register).toHaveBeenCalledWith('temporal-recovery', 60_000, expect.any(Function)); // then once a minute across workers
    await service.beforeApplicationShutdown();
    expect(created.worker.shutdown).toHaveBeenCalled();
    expect(created.connection.close).toHaveBeenCalled();
  });

  it('keeps retrying when Temporal is unreachable at start, and stops retrying on shutdown', async () => {
    jest.useFakeTimers();
    try {
      const driver = temporalDriver();
      const service = new TemporalAutomationWorker(config, activities, driver, driver, sweeps);
      const created = fakeWorker();
      let attempts = 0;
      service.factory = jest.fn(async () => {
        attempts++;
        if (attempts < 3) throw new Error('connection refused');
        return created as never;
      });
      await service.onApplicationBootstrap();
      await jest.advanceTimersByTimeAsync(1_000 + 2_000 + 10);
      expect(attempts).toBe(3);
      expect(created.worker.run).toHaveBeenCalled();
      await service.beforeApplicationShutdown();
      expect(created.worker.shutdown).toHaveBeenCalled();
    } finally {
      jest.useRealTimers();
    }
  });

  it('stays off with the embedded driver', async () => {
    const factory = jest.fn();
    const service = new TemporalAutomationWorker(
      loadConfig(base),
      activities,
      temporalDriver(),
      { kind: 'embedded' } as AutomationDriver,
      sweeps,
    );
    service.factory = factory as never;
    await service.onApplicationBootstrap();
    await service.beforeApplicationShutdown();
    expect(factory).not.toHaveBeenCalled();
  });
});

describe('createTemporalWorker (the real factory)', () => {
  it('loads the worker SDK and the workflow bundle options, and rejects at once when no server answers', async () => {
    const activities = { performEffect: async () => ({ ok: true as const }), recordRunState: async () => undefined };
    await expect(
      createTemporalWorker({ address: '127.0.0.1:1', namespace: 'default', taskQueue: 'q', activities }),
    ).rejects.toThrow(/refused|connect/i);
  }, 20_000);
});
