// Server configuration: the settings of src/settings.ts (defaults, then the configuration file, then
// PARLEY_* environment variables, then flags) turned into the Config the server runs with.
import fs from 'node:fs';
import path from 'node:path';
import type { SyncLevel } from './db/open';
import { chooseConfigFile, readConfigFile } from './config-file';
import { parseTrustedProxies } from './http/client-address';
import { parseRule, type RuleSet } from './http/ratelimit';
import type { LogFormat, LogLevel } from './lib/log';
import { defaults, valuesFromEnv, type Values } from './settings';

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
  /** Outgoing mail server (smtp:// or smtps:// URL); null writes emails to DATA_DIR/outbox/. */
  smtpUrl: string | null;
  /** Sender of outgoing email; null: Parley <noreply@HOST of the public URL>. */
  emailFrom: string | null;
  /** Where the executable extracts its native addons; null: PARLEY_CACHE_DIR or the user's cache dir. */
  cacheDir: string | null;
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

/** The Config for fully resolved settings (every key of SETTINGS present, checked by src/settings.ts). */
export function configFromValues(v: Values): Config {
  const str = (key: string) => (v[key] === null ? null : String(v[key]));
  const num = (key: string) => v[key] as number;
  const bool = (key: string) => v[key] as boolean;
  const rule = (key: string) => parseRule(v[key] as string, key);
  const pushUrl = str('push_url');
  return {
    dataDir: v.data_dir as string,
    host: v.host as string,
    port: num('port'),
    externalUrl: str('external_url'),
    // Decoding a form body is synchronous (~9 ms a MiB here, more with non-ASCII text): 6 MiB keeps
    // the longest one near 50 ms of the one process, so other requests wait well under 100 ms
    // (bench/security-bounds.ts); 32 MiB held them ~250 ms. Files are counted apart.
    maxBodyBytes: num('max_body_bytes'),
    maxFileUploadSizeMib: num('max_file_upload_size_mib'),
    botStorageLimit: num('bot_storage_limit'),
    rateLimits: bool('rate_limits'),
    rateLimitRules: {
      apiByUser: rule('rate_limit_user'),
      apiByIp: rule('rate_limit_ip'),
      authenticateByUsername: rule('rate_limit_login'),
      sendsEmailByIp: rule('rate_limit_email_ip'),
    },
    synchronous: v.synchronous as SyncLevel,
    heartbeatSeconds: num('heartbeat_seconds'),
    queueLifespanSeconds: num('queue_lifespan_seconds'),
    invitationValidityMinutes: num('invitation_validity_minutes'),
    webPublicStreamsEnabled: bool('web_public_streams'),
    accessLimitsPresence: bool('access_limits_presence'),
    pushService: pushUrl ? { url: pushUrl, token: str('push_token') ?? undefined } : null,
    deleteTopicBatchSize: num('delete_topic_batch_size'),
    deleteTopicBudgetMs: num('delete_topic_budget_ms'),
    // log_requests = false (the old PARLEY_LOG_REQUESTS=0) keeps the request lines out: warn at most.
    logLevel: bool('log_requests') || v.log_level === 'error' || v.log_level === 'warn' ? (v.log_level as LogLevel) : 'warn',
    logFormat: v.log_format as LogFormat,
    metrics: bool('metrics'),
    metricsToken: str('metrics_token'),
    smtpUrl: str('smtp_url'),
    emailFrom: str('email_from'),
    cacheDir: str('cache_dir'),
    outgoingWebhooks: {
      timeoutMs: num('outgoing_webhook_timeout_ms'),
      maxResponseBytes: num('outgoing_webhook_max_response_bytes'),
      retryBaseMs: num('outgoing_webhook_retry_ms'),
      maxPending: num('outgoing_webhook_max_pending'),
      concurrency: num('outgoing_webhook_concurrency'),
      allowPrivate: bool('outgoing_webhook_allow_private'),
    },
    tlsCert: str('tls_cert'),
    tlsKey: str('tls_key'),
    tlsKeyPassphrase: str('tls_key_passphrase'),
    trustedProxies: v.trusted_proxies === null ? [] : parseTrustedProxies(v.trusted_proxies as string, 'trusted_proxies'),
  };
}

/** Defaults with `values` over them; a relative default data_dir resolves against the working directory. */
function resolve(...layers: Values[]): Values {
  const v: Values = Object.assign(defaults(), ...layers);
  if (v.data_dir !== ':memory:') v.data_dir = path.resolve(v.data_dir as string);
  return v;
}

/** The defaults, overridden by PARLEY_* environment variables (no file: tests and benches use this). */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): Config {
  return configFromValues(resolve(valuesFromEnv(env)));
}

export interface LoadedConfig {
  config: Config;
  /** The configuration file read, if any. */
  file: string | null;
  /** Whether data_dir came from a flag, the environment or the file (not the default). */
  dataDirSet: boolean;
  /** What the start should say about the configuration without refusing it. */
  warnings: string[];
}

/** The settings whose value is a credential (an SMTP URL only when it carries a password). */
function secretKeys(values: Values): string[] {
  return Object.keys(values).filter((key) => {
    if (key === 'push_token' || key === 'tls_key_passphrase') return true;
    if (key !== 'smtp_url') return false;
    try {
      return new URL(String(values[key])).password !== '';
    } catch {
      return false;
    }
  });
}

/** A file every user can read must not hold credentials (install-service writes 0640). */
function fileWarnings(file: string, values: Values): string[] {
  const secrets = secretKeys(values);
  if (secrets.length === 0) return [];
  let mode: number;
  try {
    mode = fs.statSync(file).mode;
  } catch {
    return [];
  }
  return mode & 0o004 ? [`${file} holds secrets (${secrets.join(', ')}) and every user of this machine can read it: chmod o-r ${file}`] : [];
}

/**
 * Flags over environment over file over defaults. `flags` holds the settings the command line set
 * (checked by main.ts); `configFlag` is --config; `etc` replaces /etc/parley.toml in tests.
 */
export function loadConfig(opts: { flags: Values; configFlag?: string; env?: NodeJS.ProcessEnv; etc?: string }): LoadedConfig {
  const env = opts.env ?? process.env;
  const fromEnv = valuesFromEnv(env);
  // The data directory decides where DATA_DIR/parley.conf is, so it cannot come from that file.
  const dataDir = resolve(fromEnv, opts.flags).data_dir as string;
  const choice = chooseConfigFile({ flag: opts.configFlag, env, dataDir, etc: opts.etc });
  const fromFile = choice ? readConfigFile(choice) : {};
  const v = resolve(fromFile, fromEnv, opts.flags);
  const dataDirSet = [fromFile, fromEnv, opts.flags].some((layer) => layer.data_dir != null);
  const warnings = choice ? fileWarnings(choice.file, fromFile) : [];
  return { config: configFromValues(v), file: choice?.file ?? null, dataDirSet, warnings };
}
