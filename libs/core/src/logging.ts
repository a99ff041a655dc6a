import { ConsoleLogger, LogLevel } from '@nestjs/common';
import type { AppConfig } from './config/config';

const NEST_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];
const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'];

/** Nest's logger at LOG_LEVEL, one JSON object per line unless LOG_FORMAT=pretty. */
export function createLogger(config: AppConfig): ConsoleLogger {
  const upTo = config.LOG_LEVEL === 'silent' ? -1 : LEVELS.indexOf(config.LOG_LEVEL);
  return new ConsoleLogger({ json: config.LOG_FORMAT === 'json', logLevels: NEST_LEVELS.slice(0, upTo + 1) });
}
