// Server configuration: defaults, then environment variables, then CLI flags (applied by main.ts).
import path from 'node:path';
import type { SyncLevel } from './db/open';
import { parseTrustedProxies } from './http/client-address';
import { parseRule, RULES, type RuleSet } from './http/ratelimit';

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
  /** Log each request to stderr. */
  logRequests: boolean;
  /** Outgoing-webhook bots: how their requests are bounded (src/lib/outbound-http.ts). */
  outgoingWebhooks: OutgoingWebhookConfig;
  /** HTTPS: PEM certificate (chain) and private key files, both or neither; reloaded on SIGHUP. */
  tlsCert: string | null;
  tlsKey: string | null;
  /** Passphrase of an encrypted tlsKey. */
  tlsKeyPassphrase: string | null;
  /** Reverse proxies (addresses, CIDR ranges) whose X-Forwarded-For is believed; none by default. */
  trustedProxies: string[];
}

export interface OutgoingWebhookConfig {
  /** Whole request (connect, send, answer) before it counts as timed out (Zulip: 10 s). */
  timeoutMs: number;
  /** Largest answer read; a bigger one is a failure. */
  maxResponseBytes: number;
  /** Delay before the first retry of a timed-out or unreachable request; doubles per retry. */
  retryBaseMs: number;
  /** Deliveries waiting or running past which new ones are dropped (with a logged warning). */
  maxPending: number;
  /** Requests in flight at once, all bots together. */
  concurrency: number;
  /**
   * Whether bots may reach loopback, link-local, unspecified addresses and this server's own
   * addresses (off: those are refused, as a request to the server itself or a cloud metadata
   * service would be a way in for whoever sets a bot's URL).
   */
  allowPrivate: boolean;
}

export const DEFAULT_PORT = 9991;

/** The address the server answers at before any external URL: https when it serves TLS itself. */
export function boundUrl(config: Pick<Config, 'host' | 'port' | 'tlsCert'>, port = config.port): string {
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  return `${config.tlsCert ? 'https' : 'http'}://${host}:${port}`;
}

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
    logRequests: env.PARLEY_LOG_REQUESTS === '1',
    outgoingWebhooks: {
      // At least 1 ms, byte, request: a 0 would make every request fail or none run.
      timeoutMs: Math.max(1, int('PARLEY_OUTGOING_WEBHOOK_TIMEOUT_MS', 10_000)),
      maxResponseBytes: Math.max(1, int('PARLEY_OUTGOING_WEBHOOK_MAX_RESPONSE_BYTES', 1024 * 1024)),
      retryBaseMs: Math.max(0, int('PARLEY_OUTGOING_WEBHOOK_RETRY_MS', 1000)),
      maxPending: Math.max(1, int('PARLEY_OUTGOING_WEBHOOK_MAX_PENDING', 1000)),
      concurrency: Math.max(1, int('PARLEY_OUTGOING_WEBHOOK_CONCURRENCY', 4)),
      allowPrivate: env.PARLEY_OUTGOING_WEBHOOK_ALLOW_PRIVATE === 'on',
    },
    tlsCert: env.PARLEY_TLS_CERT ? path.resolve(env.PARLEY_TLS_CERT) : null,
    tlsKey: env.PARLEY_TLS_KEY ? path.resolve(env.PARLEY_TLS_KEY) : null,
    tlsKeyPassphrase: env.PARLEY_TLS_KEY_PASSPHRASE || null,
    trustedProxies: parseTrustedProxies(env.PARLEY_TRUSTED_PROXIES ?? '', 'PARLEY_TRUSTED_PROXIES'),
  };
}
