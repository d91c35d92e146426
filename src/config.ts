// Server configuration: defaults, then environment variables, then CLI flags (applied by main.ts).
import path from 'node:path';
import type { SyncLevel } from './db/open';
import { parseRule, RULES, type RuleSet } from './http/ratelimit';
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from './lib/log';

export interface Config {
  /** Data directory: parley.db, uploads/, outbox/. ':memory:' keeps the database in memory. */
  dataDir: string;
  host: string;
  port: number;
  /** Address used in links (emails, realm_url). Defaults to the bound address. */
  externalUrl: string | null;
  /** Largest urlencoded/multipart form body without files, in bytes. */
  maxBodyBytes: number;
  /** Largest uploaded file (max_file_upload_size_mib). */
  maxFileUploadSizeMib: number;
  /** Bot storage size limit in characters (keys plus values). */
  botStorageLimit: number;
  rateLimits: boolean;
  /** Thresholds (Zulip's defaults unless PARLEY_RATE_LIMIT_USER / _IP / _LOGIN say "N/S"). */
  rateLimitRules: RuleSet;
  synchronous: SyncLevel;
  /** Seconds a GET /events waits before a heartbeat. */
  heartbeatSeconds: number;
  /** Idle event queues are collected after this many seconds. */
  queueLifespanSeconds: number;
  /** Minutes an invitation link stays valid when the inviter does not say. */
  invitationValidityMinutes: number;
  /** WEB_PUBLIC_STREAMS_ENABLED. */
  webPublicStreamsEnabled: boolean;
  /** CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE. */
  accessLimitsPresence: boolean;
  /** Push notification service (URL and credentials); null when not configured. */
  pushService: { url: string; token?: string } | null;
  /** Topic deletion: messages per batch, and the time after which it answers complete: false. */
  deleteTopicBatchSize: number;
  deleteTopicBudgetMs: number;
  /** Least severe log lines written to stderr: error, warn, info (one line per request) or debug. */
  logLevel: LogLevel;
  /** Log lines as text (for people) or JSON (one object per line, for machines). */
  logFormat: LogFormat;
  /** Serve GET /metrics (Prometheus text format). */
  metrics: boolean;
  /** When set, /metrics wants `Authorization: Bearer <token>`; when not, only loopback clients get it. */
  metricsToken: string | null;
}

/** A setting with a value it cannot take: a usage error (the command exits 2). */
export class SettingError extends Error {}

/** Checks a --log-level / PARLEY_LOG_LEVEL value. */
export function parseLogLevel(raw: string, source: string): LogLevel {
  if (!(LOG_LEVELS as readonly string[]).includes(raw)) throw new SettingError(`${source} must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(raw)}`);
  return raw as LogLevel;
}

/** Checks a --log-format / PARLEY_LOG_FORMAT value. */
export function parseLogFormat(raw: string, source: string): LogFormat {
  if (!(LOG_FORMATS as readonly string[]).includes(raw)) throw new SettingError(`${source} must be one of ${LOG_FORMATS.join(', ')}, got ${JSON.stringify(raw)}`);
  return raw as LogFormat;
}

export const DEFAULT_PORT = 9991;

/** The defaults, overridden by PARLEY_* environment variables. */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): Config {
  const int = (name: string, dflt: number) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return dflt;
    const n = Number(raw);
    if (!Number.isInteger(n)) throw new Error(`${name} must be an integer, got ${JSON.stringify(raw)}`);
    return n;
  };
  const pushUrl = env.PARLEY_PUSH_URL;
  return {
    dataDir: path.resolve(env.PARLEY_DATA_DIR || './data'),
    host: env.PARLEY_HOST || '127.0.0.1',
    port: int('PARLEY_PORT', DEFAULT_PORT),
    externalUrl: env.PARLEY_EXTERNAL_URL || null,
    // Decoding a form body is synchronous (~9 ms a MiB here, more with non-ASCII text): 6 MiB keeps
    // the longest one near 50 ms of the one process, so other requests wait well under 100 ms
    // (bench/security-bounds.ts); 32 MiB held them ~250 ms. Files are counted apart.
    maxBodyBytes: int('PARLEY_MAX_BODY_BYTES', 6 * 1024 * 1024),
    maxFileUploadSizeMib: int('PARLEY_MAX_FILE_UPLOAD_SIZE_MIB', 100),
    botStorageLimit: int('PARLEY_BOT_STORAGE_LIMIT', 10_000_000),
    rateLimits: (env.PARLEY_RATE_LIMITS ?? 'on') !== 'off',
    rateLimitRules: {
      apiByUser: env.PARLEY_RATE_LIMIT_USER ? parseRule(env.PARLEY_RATE_LIMIT_USER, 'PARLEY_RATE_LIMIT_USER') : RULES.apiByUser,
      apiByIp: env.PARLEY_RATE_LIMIT_IP ? parseRule(env.PARLEY_RATE_LIMIT_IP, 'PARLEY_RATE_LIMIT_IP') : RULES.apiByIp,
      authenticateByUsername: env.PARLEY_RATE_LIMIT_LOGIN
        ? parseRule(env.PARLEY_RATE_LIMIT_LOGIN, 'PARLEY_RATE_LIMIT_LOGIN')
        : RULES.authenticateByUsername,
      sendsEmailByIp: env.PARLEY_RATE_LIMIT_EMAIL_IP ? parseRule(env.PARLEY_RATE_LIMIT_EMAIL_IP, 'PARLEY_RATE_LIMIT_EMAIL_IP') : RULES.sendsEmailByIp,
    },
    synchronous: env.PARLEY_SYNCHRONOUS === 'full' ? 'full' : 'normal',
    heartbeatSeconds: int('PARLEY_HEARTBEAT_SECONDS', 50),
    queueLifespanSeconds: int('PARLEY_QUEUE_LIFESPAN_SECONDS', 600),
    invitationValidityMinutes: int('PARLEY_INVITATION_VALIDITY_MINUTES', 14400),
    webPublicStreamsEnabled: env.PARLEY_WEB_PUBLIC_STREAMS === 'on',
    accessLimitsPresence: env.PARLEY_ACCESS_LIMITS_PRESENCE !== 'off',
    pushService: pushUrl ? { url: pushUrl, token: env.PARLEY_PUSH_TOKEN } : null,
    deleteTopicBatchSize: int('PARLEY_DELETE_TOPIC_BATCH_SIZE', 1000),
    deleteTopicBudgetMs: int('PARLEY_DELETE_TOPIC_BUDGET_MS', 50_000),
    // PARLEY_LOG_REQUESTS (before request lines were on by default): 0 or off keeps them out (level warn).
    logLevel: env.PARLEY_LOG_LEVEL
      ? parseLogLevel(env.PARLEY_LOG_LEVEL, 'PARLEY_LOG_LEVEL')
      : env.PARLEY_LOG_REQUESTS === '0' || env.PARLEY_LOG_REQUESTS === 'off'
        ? 'warn'
        : 'info',
    logFormat: env.PARLEY_LOG_FORMAT ? parseLogFormat(env.PARLEY_LOG_FORMAT, 'PARLEY_LOG_FORMAT') : 'text',
    metrics: env.PARLEY_METRICS === 'on' || env.PARLEY_METRICS === '1',
    metricsToken: env.PARLEY_METRICS_TOKEN || null,
  };
}
