import { Logger } from '@nestjs/common';
import type { AppConfig } from '../config/config';

/** Time given to closing connections after the in-flight work had its SHUTDOWN_TIMEOUT_MS. */
const CLOSE_MARGIN_MS = 5000;

/**
 * SIGTERM / SIGINT stop the process gracefully: `app.close()` drains HTTP (API), lets active queue jobs finish and stops
 * the Temporal worker (worker), then closes the database pool and Redis. The process exits 0 once that is done, or
 * exits 1 if it is not done SHUTDOWN_TIMEOUT_MS (+5 s to close connections) after the signal; a second signal exits at
 * once. Jobs cut off that way are not lost: BullMQ hands them to another worker (or to the next start) once their lock
 * expires.
 */
export function stopOnSignals(app: { close(): Promise<void> }, config: AppConfig, name: string): void {
  const logger = new Logger(name);
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn(`${signal} again: exiting without waiting`);
      process.exit(1);
    }
    stopping = true;
    const started = Date.now();
    logger.log(`${signal}: stopping (in-flight work gets up to SHUTDOWN_TIMEOUT_MS=${config.SHUTDOWN_TIMEOUT_MS} ms)`);
    const force = setTimeout(() => {
      logger.error(`not stopped ${Date.now() - started} ms after ${signal} (SHUTDOWN_TIMEOUT_MS): exiting`);
      process.exit(1);
    }, config.SHUTDOWN_TIMEOUT_MS + CLOSE_MARGIN_MS);
    force.unref();
    app.close().then(
      () => {
        clearTimeout(force);
        logger.log(`stopped in ${Date.now() - started} ms`);
        process.exit(0);
      },
      (error: Error) => {
        logger.error(`stopping failed: ${error.stack ?? error.message}`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
