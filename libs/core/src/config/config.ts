import { plainToInstance, Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  Min,
  MinLength,
  validateSync,
} from 'class-validator';
import { readFileSync } from 'node:fs';
import { loadOrCreateDevSecrets } from './dev-secrets';

const toInt = ({ value }: { value: unknown }) => (value === undefined || value === '' ? undefined : Number(value));
const toBool = ({ value }: { value: unknown }) =>
  value === undefined || value === ''
    ? undefined
    : typeof value === 'boolean'
      ? value
      : /^(true|1|yes)$/i.test(String(value))
        ? true
        : /^(false|0|no)$/i.test(String(value))
          ? false
          : value;
/** 32 bytes as 64 hex digits or base64 (44 characters with padding, 43 without; url-safe alphabet accepted). */
const KEY_PATTERN = /^\s*([0-9a-fA-F]{64}|[A-Za-z0-9+/_-]{43}=?)\s*$/;
const urlOptions = { require_tld: false, require_protocol: true };
const TRUST_PROXY_PATTERN =
  /^\s*(false|\d+|(loopback|linklocal|uniquelocal|[0-9A-Fa-f:.]+(\/\d{1,3})?)(\s*,\s*(loopback|linklocal|uniquelocal|[0-9A-Fa-f:.]+(\/\d{1,3})?))*)\s*$/;

/**
 * Every setting of every process, read from the environment once at start-up.
 * Names are the environment variable names; see the README's configuration table.
 */
export class AppConfig {
  @IsString()
  @Matches(/^postgres(ql)?:\/\//, { message: 'DATABASE_URL must be a postgres:// URL' })
  DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/switchboard';

  @IsString()
  @Matches(/^rediss?:\/\//, { message: 'REDIS_URL must be a redis:// URL' })
  REDIS_URL = 'redis://127.0.0.1:6379';

  /** Connections per process. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  DATABASE_POOL_SIZE = 20;

  /** Prefix of every Redis key (queues, rate limits); lets several deployments or test files share one Redis. */
  @IsString()
  REDIS_PREFIX = 'sb';

  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 3000;

  /** Address the API listens on: loopback by default; `0.0.0.0` (or `::`) to accept connections from other hosts. */
  @IsString()
  @Matches(/^[A-Za-z0-9.:[\]-]+$/, {
    message: 'HOST must be an address or host name to listen on (e.g. 127.0.0.1, 0.0.0.0)',
  })
  HOST = '127.0.0.1';

  /**
   * SIGTERM: how long a process may take to stop (drain in-flight HTTP requests, let active queue jobs finish, stop the
   * Temporal worker) before it exits anyway. Jobs still active then are picked up by another worker (or the next start).
   */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  SHUTDOWN_TIMEOUT_MS = 25_000;

  @IsOptional()
  @IsUrl(urlOptions)
  APP_URL?: string;

  @IsOptional()
  @IsUrl(urlOptions)
  INBOUND_WEBHOOK_URL?: string;

  @IsString()
  @MinLength(32, { message: 'JWT_SECRET must be at least 32 characters' })
  JWT_SECRET: string;

  /**
   * 32 bytes, hex or base64: encrypts platform access tokens and webhook secrets at rest. Every process of a deployment
   * needs the same key: set it here or put it in a file named by ENCRYPTION_KEY_FILE (docs/production.md).
   */
  @IsString()
  @Matches(KEY_PATTERN, { message: 'ENCRYPTION_KEY must be 32 bytes in hex (64 chars) or base64 (44 chars)' })
  ENCRYPTION_KEY: string;

  /** A file holding ENCRYPTION_KEY (e.g. a Docker or Kubernetes secret); read at start when ENCRYPTION_KEY is unset. */
  @IsOptional()
  @IsString()
  ENCRYPTION_KEY_FILE?: string;

  /**
   * Key rotation: the key the data was written with before ENCRYPTION_KEY changed. Values still sealed with it are
   * read until `npm run admin -- rotate-secrets` re-encrypts them with ENCRYPTION_KEY.
   */
  @IsOptional()
  @IsString()
  @Matches(KEY_PATTERN, { message: 'ENCRYPTION_KEY_PREVIOUS must be 32 bytes in hex (64 chars) or base64 (44 chars)' })
  ENCRYPTION_KEY_PREVIOUS?: string;

  /** A file holding ENCRYPTION_KEY_PREVIOUS. */
  @IsOptional()
  @IsString()
  ENCRYPTION_KEY_PREVIOUS_FILE?: string;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  ACCESS_TOKEN_TTL_SECONDS = 3600;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  REFRESH_TOKEN_TTL_SECONDS = 7 * 24 * 3600;

  /** host:port of a Temporal frontend: when set, automations run on the Temporal driver, else on the embedded one. */
  @IsOptional()
  @IsString()
  @Matches(/^\S+:\d{1,5}$/, { message: 'TEMPORAL_ADDRESS must be host:port (e.g. localhost:7233)' })
  TEMPORAL_ADDRESS?: string;

  /** Temporal namespace of the automation workflows (Temporal driver only). */
  @IsString()
  @Matches(/^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/, {
    message: 'TEMPORAL_NAMESPACE must be a Temporal namespace name (letters, digits, . _ -)',
  })
  TEMPORAL_NAMESPACE = 'default';

  /** Task queue the automation worker polls and the API starts runs on (Temporal driver only). */
  @IsString()
  @Matches(/^\S{1,1000}$/, { message: 'TEMPORAL_TASK_QUEUE must be a non-empty name without spaces' })
  TEMPORAL_TASK_QUEUE = 'switchboard-automations';

  /** Connect to Temporal over TLS (implied by a client certificate or an API key). */
  @Transform(toBool)
  @IsBoolean()
  TEMPORAL_TLS = false;

  /** mTLS client certificate and key (PEM files), e.g. for a Temporal Cloud namespace with certificates. Both or neither. */
  @IsOptional()
  @IsString()
  TEMPORAL_TLS_CERT_PATH?: string;

  @IsOptional()
  @IsString()
  TEMPORAL_TLS_KEY_PATH?: string;

  /** CA bundle (PEM) to trust for a self-hosted server with its own CA; default: the system roots. */
  @IsOptional()
  @IsString()
  TEMPORAL_TLS_CA_PATH?: string;

  /** TLS server name override (SNI), when it differs from the host of TEMPORAL_ADDRESS. */
  @IsOptional()
  @IsString()
  TEMPORAL_TLS_SERVER_NAME?: string;

  /** API key (Temporal Cloud API-key authentication; sent as a bearer token, TLS on). */
  @IsOptional()
  @IsString()
  TEMPORAL_API_KEY?: string;

  /** Prebuilt workflow bundle for the worker (default: dist/workflows/automation-workflows.bundle.js when present). */
  @IsOptional()
  @IsString()
  TEMPORAL_WORKFLOW_BUNDLE?: string;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  RATE_LIMIT_PER_MINUTE = 105;

  @Transform(toInt)
  @IsInt()
  @Min(1000)
  RATE_LIMIT_WINDOW_MS = 60_000;

  /** SPEC §8: embedded inbox session exchanges (POST /v1/embed/session) per minute per IP address. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  EMBED_SESSION_RATE_LIMIT_PER_MINUTE = 30;

  /**
   * Requests per minute of one embedded inbox session (its conversations, threads, sends, templates; a live stream
   * counts once, when it opens): a session is not an API client, and had no limit at all. The inbox page reads its
   * list again on live events (a busy account: a few times a second), so the limit is well above a person's pace.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  EMBED_INBOX_RATE_LIMIT_PER_MINUTE = 1200;

  /** SPEC §8: requests per minute per Client ID at the MCP server (POST /mcp), counted apart from the REST limit. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  MCP_RATE_LIMIT_PER_MINUTE = 60;

  /**
   * Browser origins allowed to call the MCP server, comma-separated (e.g. `https://inspector.example.com`); `*` allows
   * any. Requests without an Origin header (desktop and server-side agents) and from the API's own origin are always allowed.
   */
  @IsOptional()
  @IsString()
  MCP_ALLOWED_ORIGINS?: string;

  /** Where `create-account` points new phone numbers: the local sandbox by default. */
  @IsUrl(urlOptions)
  WHATSAPP_API_BASE_URL = 'http://127.0.0.1:3100';

  @IsString()
  @Matches(/^v\d+\.\d+$/, { message: 'WHATSAPP_API_VERSION must look like v21.0' })
  WHATSAPP_API_VERSION = 'v21.0';

  /** Meta app secret: verifies X-Hub-Signature-256 of platform webhooks. */
  @IsString()
  @MinLength(1)
  WHATSAPP_APP_SECRET = 'sandbox-app-secret';

  /** Token Meta sends back in the GET verification handshake of the webhook receiver. */
  @IsString()
  @MinLength(1)
  WHATSAPP_VERIFY_TOKEN = 'switchboard-verify-token';

  /**
   * Lets outbound HTTP (http_request nodes, later callbacks and media URLs) reach loopback, private,
   * link-local and metadata addresses. Only for local development and tests.
   */
  @Transform(toBool)
  @IsBoolean({ message: 'ALLOW_PRIVATE_NETWORK_TARGETS must be true or false' })
  ALLOW_PRIVATE_NETWORK_TARGETS = false;

  /**
   * Backpressure of the inbound workflow webhook: while the oldest run accepted but not started yet has waited longer
   * than this, the webhook answers 429 with Retry-After (0 = never).
   */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  AUTOMATION_MAX_BACKLOG_MS = 30_000;

  /** Largest body accepted by the inbound workflow webhook (the API's global limit, 1 MiB, still applies). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  WORKFLOW_WEBHOOK_MAX_BODY_BYTES = 256 * 1024;

  /**
   * Timeout of one http_request node call, connection to last byte. At most 55 s: the Temporal driver gives an
   * effect one minute before it tries again, and a call still running then would be made twice (or eight times).
   */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(55_000)
  AUTOMATION_HTTP_TIMEOUT_MS = 10_000;

  /** Largest response body an http_request node reads; a larger one fails the step. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  AUTOMATION_HTTP_MAX_RESPONSE_BYTES = 1024 * 1024;

  /** Automation steps processed at once by one worker process (embedded driver). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  AUTOMATION_WORKER_CONCURRENCY = 20;

  /** How long POST /send-message and /v1/send-message wait for the platform's answer before answering 202 (queued). */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  SEND_WAIT_TIMEOUT_MS = 20_000;

  /** Jobs in flight per worker process on the API send queue and on the bulk (campaign/automation) send queue. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  SEND_CONCURRENCY = 100;

  /** bulk jobs are mostly campaign chunks of 50 messages, each waiting for one pacer slot at a time */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  BULK_SEND_CONCURRENCY = 50;

  /**
   * The pacer spaces a number's sends (1 s + this margin) / messages_per_second apart: the jitter between a send's slot
   * and its arrival at the platform it absorbs (half for our own wake-up lag, half for the network and the platform).
   */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  SEND_PACING_MARGIN_MS = 20;

  /** Most messages in one bulk template send (POST /send-message with an array); more is a 400. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  MAX_BULK_SEND = 1000;

  /** Largest file accepted by POST /v2/contacts/imports (CSV or XLSX); larger is a 413. */
  @Transform(toInt)
  @IsInt()
  @Min(1024)
  CONTACT_IMPORT_MAX_BYTES = 50 * 1024 * 1024;

  /**
   * Contact files one API process receives at once; more are a 429 with Retry-After. Each upload holds a database
   * connection (its transaction) until the last byte has come: without a cap, as many slow uploads as the pool has
   * connections left every other request of the process waiting.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  CONTACT_IMPORT_MAX_CONCURRENT_UPLOADS = 4;

  /** Most data rows in one contact import; a longer file is refused before any row is applied. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  CONTACT_IMPORT_MAX_ROWS = 1_000_000;

  /** Rows applied per transaction by the import worker (one multi-row statement each). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  CONTACT_IMPORT_BATCH_ROWS = 5000;

  /** Per-message callbacks: one POST, no retry, this timeout. */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  CALLBACK_TIMEOUT_MS = 5000;

  /**
   * A message claimed for a platform call whose answer was never recorded (its worker died or froze, the call timed
   * out) is "in doubt": it is sent again only after this long AND once every platform webhook received within that
   * time has been processed (its status webhook would have linked it). See docs/messaging.md, "Exactly once?".
   */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  SEND_IN_DOUBT_MS = 30_000;

  /** Processed platform webhooks are deleted this many days after they arrived (hourly sweep); unprocessed ones stay. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  PLATFORM_WEBHOOK_RETENTION_DAYS = 7;

  /**
   * Worker diagnostics (warn log lines): every 5 s the pacer's counters and the event loop's lag; each campaign chunk
   * job's run (messages unsent, held in doubt, claimed before) and each failed platform call.
   */
  @Transform(toBool)
  @IsBoolean()
  SEND_DEBUG = false;

  /**
   * Which proxies may tell the API the client's address (X-Forwarded-For), as Fastify's `trustProxy`: unset or
   * `false` (default) = none, the socket address counts; a hop count (`1`); or a comma-separated list of proxy addresses
   * and CIDRs (`10.0.0.0/8,127.0.0.1`, also `loopback`, `linklocal`, `uniquelocal`). Per-IP rate limits use the result.
   */
  @IsOptional()
  @Matches(TRUST_PROXY_PATTERN, {
    message: 'TRUST_PROXY must be false, a hop count, or a comma-separated list of proxy addresses/CIDRs',
  })
  // trusting every address would let any client choose its own address (and a fresh per-IP rate limit per request)
  @Matches(/^(?!.*\/0+\s*(,|$))/, {
    message: 'TRUST_PROXY must not trust every address (a /0 range): name your proxies',
  })
  TRUST_PROXY?: string;

  /** TRUST_PROXY as Fastify takes it. */
  get trustProxy(): boolean | number | string[] {
    const value = this.TRUST_PROXY?.trim();
    if (!value || value === 'false') return false;
    if (/^\d+$/.test(value)) return Number(value);
    return value
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean);
  }
  /**
   * Account webhooks (docs/webhooks.md): delays before each attempt of a delivery, comma-separated durations
   * (`ms`, `s`, `m`, `h`, `d`); the first is the first attempt's. After the last one fails the delivery is failed.
   */
  @IsString()
  @Matches(/^\s*\d+(ms|s|m|h|d)?\s*(,\s*\d+(ms|s|m|h|d)?\s*)*$/, {
    message: 'WEBHOOK_RETRY_SCHEDULE must be comma-separated durations such as 0,5s,5m,30m,2h',
  })
  WEBHOOK_RETRY_SCHEDULE = '0,5s,5m,30m,2h,5h,10h,10h';

  /**
   * Account webhook events are deleted this many days after they were recorded, with their deliveries and attempt logs
   * (hourly sweep): how far back replay, GET /v1/events and the delivery log reach.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  WEBHOOK_RETENTION_DAYS = 30;

  /** An account webhook attempt counts as delivered on a 2xx within this time. */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  WEBHOOK_TIMEOUT_MS = 10_000;

  /** An endpoint whose deliveries have failed (no success in between) for this long is disabled (5 days). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  WEBHOOK_DISABLE_AFTER_MS = 5 * 24 * 3600 * 1000;

  /** After POST .../rotate-secret the previous secret still signs for this long (24 h). */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  WEBHOOK_SECRET_OVERLAP_MS = 24 * 3600 * 1000;

  /** Webhook attempts in flight per worker process, and at most per endpoint (a slow endpoint never takes them all). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  WEBHOOK_DELIVERY_CONCURRENCY = 128;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  WEBHOOK_ENDPOINT_CONCURRENCY = 16;

  /** How often an idle delivery worker looks for new events and due retries. */
  @Transform(toInt)
  @IsInt()
  @Min(10)
  WEBHOOK_POLL_INTERVAL_MS = 200;

  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL = 'info';

  @IsIn(['json', 'pretty'])
  LOG_FORMAT = 'json';

  /** Bearer token for GET /metrics (API) and the worker's metrics port; without it /metrics is off in production. */
  @IsOptional()
  @IsString()
  @MinLength(16, { message: 'METRICS_TOKEN must be at least 16 characters' })
  METRICS_TOKEN?: string;

  /** Port of the worker's Prometheus endpoint (/metrics); unset: the worker serves no metrics. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  WORKER_METRICS_PORT?: number;

  /** Address the worker's metrics endpoint listens on. */
  @IsString()
  WORKER_METRICS_HOST = '0.0.0.0';

  /** Secure flag of the console's session cookie; default: only when NODE_ENV=production. */
  @IsOptional()
  @Transform(toBool)
  @IsBoolean()
  CONSOLE_SECURE_COOKIE?: boolean;

  @IsIn(['development', 'production', 'test'])
  NODE_ENV = 'development';

  get isProduction(): boolean {
    return this.NODE_ENV === 'production';
  }

  /** {base_url}: where clients reach the REST API. */
  get baseUrl(): string {
    return (this.APP_URL ?? `http://127.0.0.1:${this.PORT}`).replace(/\/$/, '');
  }

  /** {inbound_webhook_url}: origin of the inbound workflow webhooks. */
  get inboundWebhookUrl(): string {
    return (this.INBOUND_WEBHOOK_URL ?? this.baseUrl).replace(/\/$/, '');
  }
}

export class ConfigError extends Error {}

/**
 * Builds the configuration from `env` (process.env by default). Outside production, JWT_SECRET and
 * ENCRYPTION_KEY default to values generated once and kept in `.secrets/dev.json`.
 * Throws ConfigError naming each bad variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const raw: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined && value !== '') raw[key] = value;

  for (const name of ['ENCRYPTION_KEY', 'ENCRYPTION_KEY_PREVIOUS', 'JWT_SECRET'] as const) {
    const file = raw[`${name}_FILE`];
    if (raw[name] !== undefined || typeof file !== 'string') continue;
    try {
      raw[name] = readFileSync(file, 'utf8').trim();
    } catch (error) {
      throw new ConfigError(
        `Invalid configuration:\n  ${name}_FILE: cannot read ${file} (${(error as Error).message})`,
      );
    }
  }

  if (env.NODE_ENV !== 'production' && (!raw.JWT_SECRET || !raw.ENCRYPTION_KEY)) {
    const secrets = loadOrCreateDevSecrets();
    raw.JWT_SECRET ??= secrets.JWT_SECRET;
    raw.ENCRYPTION_KEY ??= secrets.ENCRYPTION_KEY;
  }

  const config = plainToInstance(AppConfig, raw, { exposeDefaultValues: true });
  const errors = validateSync(config, { whitelist: false, forbidUnknownValues: false });
  const lines = errors.map((e) => `  ${e.property}: ${Object.values(e.constraints ?? {})[0] ?? 'is invalid'}`);
  if (config.NODE_ENV === 'production') lines.push(...publicDefaultsIn(config));
  if (lines.length > 0) throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  return config;
}

/**
 * The sandbox's webhook secrets are printed in the README: in production they would let anyone sign platform webhooks
 * (inbound messages that start workflows, statuses, template reviews), so production refuses to start with them.
 */
function publicDefaultsIn(config: AppConfig): string[] {
  const defaults = new AppConfig();
  return (['WHATSAPP_APP_SECRET', 'WHATSAPP_VERIFY_TOKEN'] as const)
    .filter((name) => config[name] === defaults[name])
    .map((name) => `  ${name}: must be set in production (the sandbox's default "${defaults[name]}" is public)`);
}

/** For process entry points: load the configuration or print what is wrong and exit non-zero. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): AppConfig {
  try {
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw error;
  }
}
