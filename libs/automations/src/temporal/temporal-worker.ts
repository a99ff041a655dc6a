import { Inject, Injectable, Logger, OnApplicationBootstrap, BeforeApplicationShutdown } from '@nestjs/common';
import { AppConfig, PeriodicSweeps } from '@switchboard/core';
import type { NativeConnection, Worker } from '@temporalio/worker';
import { AUTOMATION_DRIVER, type AutomationDriver } from '../driver/automation-driver';
import { temporalConnectionOptions, type TemporalConnectionOptions } from './connection-options';
import { TemporalActivities } from './temporal-activities';
import { TemporalAutomationDriver } from './temporal-driver';

/** How often the Temporal recovery sweep runs (pending runs whose start failed): once per period across all workers. */
export const TEMPORAL_RECOVERY_INTERVAL_MS = 60_000;
/** Backoff between attempts to reach Temporal at worker start (doubles up to the maximum). */
const CONNECT_RETRY_MS = 1_000;
const CONNECT_RETRY_MAX_MS = 30_000;

/** Creates the Temporal worker; replaced in tests. Loads @temporalio/worker (native) only when called. */
export type TemporalWorkerFactory = (options: {
  address: string;
  namespace: string;
  taskQueue: string;
  activities: ReturnType<TemporalActivities['forWorker']>;
  /** TLS / API key (temporalConnectionOptions); default: plain connection to `address`. */
  connection?: TemporalConnectionOptions;
  /** Prebuilt workflow bundle (TEMPORAL_WORKFLOW_BUNDLE); default: dist's prebuilt bundle, else bundle at start. */
  workflowBundlePath?: string;
  /** SIGTERM: how long running activities may take to finish before they are cancelled (SHUTDOWN_TIMEOUT_MS). */
  shutdownGraceTimeMs?: number;
}) => Promise<{ worker: Pick<Worker, 'run' | 'shutdown' | 'getState'>; connection: Pick<NativeConnection, 'close'> }>;

export const createTemporalWorker: TemporalWorkerFactory = async ({
  address,
  namespace,
  taskQueue,
  activities,
  connection: connectionOptions,
  workflowBundlePath,
  shutdownGraceTimeMs,
}) => {
  const { NativeConnection, Worker, Runtime, DefaultLogger } = await import('@temporalio/worker');
  try {
    // The SDK's own logger (worker state changes are INFO): warnings and errors only, in the process's log format.
    // Once per process.
    const sdk = new Logger('Temporal');
    Runtime.install({
      logger: new DefaultLogger('WARN', ({ level, message, meta }) =>
        (level === 'ERROR' ? sdk.error : sdk.warn).call(sdk, meta ? { msg: message, ...meta } : message),
      ),
    });
  } catch {
    // already installed (a second worker in this process, or the embedding app chose its own)
  }
  const { automationWorkflowSource } = await import('../../../../workflows/bundle');
  const workflows = automationWorkflowSource(workflowBundlePath);
  const connection = await NativeConnection.connect(connectionOptions ?? { address });
  try {
    const worker = await Worker.create({
      connection,
      namespace,
      taskQueue,
      activities,
      ...workflows,
      ...(shutdownGraceTimeMs !== undefined ? { shutdownGraceTime: shutdownGraceTimeMs } : {}),
    });
    return { worker, connection };
  } catch (error) {
    await connection.close().catch(() => undefined);
    throw error;
  }
};

/**
 * The Temporal worker of the worker process (only when `TEMPORAL_ADDRESS` is set): polls TEMPORAL_TASK_QUEUE
 * for the automation workflow and its activities (TemporalActivities), and runs the recovery sweep that starts
 * runs left `pending` (at start, and every minute as a BullMQ job scheduler: once per minute across all workers). Temporal being unreachable at start does not stop the process
 * (its BullMQ processors keep working): the worker retries with backoff and logs each failure. Shutdown drains the
 * worker (in-flight activities finish) and closes its connection.
 */
@Injectable()
export class TemporalAutomationWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('TemporalAutomationWorker');
  private worker?: Pick<Worker, 'run' | 'shutdown' | 'getState'>;
  private connection?: Pick<NativeConnection, 'close'>;
  private running?: Promise<void>;
  private starting?: Promise<void>;
  private stopped = false;
  private retryTimer?: NodeJS.Timeout;
  /** Replaceable (tests). */
  factory: TemporalWorkerFactory = createTemporalWorker;

  constructor(
    private readonly config: AppConfig,
    private readonly activities: TemporalActivities,
    private readonly driver: TemporalAutomationDriver,
    @Inject(AUTOMATION_DRIVER) private readonly selected: AutomationDriver,
    private readonly sweeps: PeriodicSweeps,
  ) {}

  get isRunning(): boolean {
    return this.worker?.getState() === 'RUNNING';
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.selected.kind !== 'temporal' || !this.config.TEMPORAL_ADDRESS) return;
    this.starting = this.start(CONNECT_RETRY_MS);
    void this.sweep();
    await this.sweeps
      .register('temporal-recovery', TEMPORAL_RECOVERY_INTERVAL_MS, () => this.sweep())
      .catch((error: Error) =>
        this.logger.error({ msg: 'could not schedule the Temporal recovery sweep', error: error.message }),
      );
  }

  private async start(retryMs: number): Promise<void> {
    if (this.stopped) return;
    const address = this.config.TEMPORAL_ADDRESS!;
    try {
      const { worker, connection } = await this.factory({
        address,
        namespace: this.config.TEMPORAL_NAMESPACE,
        taskQueue: this.config.TEMPORAL_TASK_QUEUE,
        activities: this.activities.forWorker(),
        connection: temporalConnectionOptions(this.config),
        workflowBundlePath: this.config.TEMPORAL_WORKFLOW_BUNDLE,
        shutdownGraceTimeMs: this.config.SHUTDOWN_TIMEOUT_MS,
      });
      this.worker = worker;
      this.connection = connection;
      if (this.stopped) return this.stop();
      this.running = worker
        .run()
        .catch((error: Error) =>
          this.logger.error({ msg: 'Temporal worker stopped with an error', error: error.message }),
        );
      this.logger.log({
        msg: 'Temporal worker running',
        address,
        namespace: this.config.TEMPORAL_NAMESPACE,
        taskQueue: this.config.TEMPORAL_TASK_QUEUE,
      });
    } catch (error) {
      this.logger.error({
        msg: `could not start the Temporal worker; retrying in ${retryMs} ms`,
        address,
        error: (error as Error).message,
      });
      if (this.stopped) return;
      this.retryTimer = setTimeout(() => {
        this.starting = this.start(Math.min(retryMs * 2, CONNECT_RETRY_MAX_MS));
      }, retryMs);
      this.retryTimer.unref();
    }
  }

  async sweep(): Promise<void> {
    try {
      const counts = await this.driver.recoverPending();
      if (counts.started + counts.failed > 0) this.logger.log({ msg: 'Temporal recovery sweep', ...counts });
      const closed = await this.driver.reconcileClosed();
      if (closed) this.logger.log({ msg: 'Temporal recovery sweep: runs whose execution was closed outside', closed });
    } catch (error) {
      this.logger.error({ msg: 'Temporal recovery sweep failed', error: (error as Error).message });
    }
  }

  private async stop(): Promise<void> {
    if (this.worker && this.worker.getState() === 'RUNNING') this.worker.shutdown();
    await this.running;
    await this.connection
      ?.close()
      .catch((error: Error) =>
        this.logger.warn({ msg: 'closing the Temporal worker connection failed', error: error.message }),
      );
    this.worker = undefined;
    this.connection = undefined;
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.starting?.catch(() => undefined);
    await this.stop();
  }
}
