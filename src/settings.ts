// The one registry of server settings. Every setting has a key in the configuration file, a PARLEY_*
// environment variable, a `parley serve` flag, a type, a default and a one-line doc; the environment
// parsing, the file's validation, the flags, the usage text, the default /etc/parley.toml and the
// README's settings table all come from this list (src/cli/settings-doc.ts makes the texts).
// Precedence, per setting: flag, then environment, then file, then default (src/config.ts).
import path from 'node:path';
import { parseTrustedProxies } from './http/client-address';

export type Kind =
  | { type: 'string' }
  /** A filesystem path: relative ones resolve against the working directory (env, flag) or the file's directory. */
  | { type: 'path' }
  /** An absolute URL with one of `protocols`; `bare`: no credentials, query or fragment (a public address). */
  | { type: 'url'; protocols: readonly string[]; bare?: boolean }
  | { type: 'integer'; min: number; max: number }
  | { type: 'boolean' }
  | { type: 'enum'; values: readonly string[] }
  /** "N/S": at most N requests in S seconds. */
  | { type: 'rate' }
  /** Addresses and CIDR ranges separated by commas (src/http/client-address.ts). */
  | { type: 'addresses' };

export type Value = string | number | boolean;

export interface Setting {
  /** Key in the configuration file (top level, snake_case). */
  key: string;
  env: string;
  /** Flag of `parley serve`, without the dashes; a boolean also has `--no-FLAG`. */
  flag: string;
  kind: Kind;
  /** null: not set unless configured (the code then derives a value, described by defaultText). */
  default: Value | null;
  /** How README and the default file describe the default when it is not a literal. */
  defaultText?: string;
  /** A sample value for the default configuration file, for settings without a default. */
  example?: Value;
  /** Placeholder in the usage text (`--port PORT`). */
  metavar?: string;
  doc: string;
}

const MAX = Number.MAX_SAFE_INTEGER;
const positive = { type: 'integer', min: 1, max: MAX } as const;
const boolean = { type: 'boolean' } as const;
const rate = { type: 'rate' } as const;
// Settings that become timers stay well below setTimeout's limit (2^31-1 ms, about 24.8 days): Node
// fires a longer timer after 1 ms, which would turn a long wait into none.
const MAX_TIMER_MS = 3_600_000;

export const SETTINGS: readonly Setting[] = [
  { key: 'data_dir', env: 'PARLEY_DATA_DIR', flag: 'data-dir', kind: { type: 'path' }, default: './data', metavar: 'DIR|:memory:', doc: 'data directory: parley.db, uploads/, outbox/; `:memory:` keeps the database in memory' },
  { key: 'host', env: 'PARLEY_HOST', flag: 'host', kind: { type: 'string' }, default: '127.0.0.1', metavar: 'HOST', doc: 'address to listen on (`0.0.0.0`: every IPv4 interface)' },
  { key: 'port', env: 'PARLEY_PORT', flag: 'port', kind: { type: 'integer', min: 0, max: 65535 }, default: 9991, metavar: 'PORT', doc: 'port to listen on (0 picks a free one)' },
  { key: 'external_url', env: 'PARLEY_EXTERNAL_URL', flag: 'external-url', kind: { type: 'url', protocols: ['http:', 'https:'], bare: true }, default: null, defaultText: 'the listening address', example: 'https://chat.example.com', metavar: 'URL', doc: 'public address used in links (emails, `realm_url`)' },
  { key: 'rate_limits', env: 'PARLEY_RATE_LIMITS', flag: 'rate-limits', kind: boolean, default: true, doc: 'rate limits on API requests, logins and sign-up emails' },
  { key: 'rate_limit_user', env: 'PARLEY_RATE_LIMIT_USER', flag: 'rate-limit-user', kind: rate, default: '200/60', metavar: 'N/S', doc: 'API requests per user (requests/seconds)' },
  { key: 'rate_limit_ip', env: 'PARLEY_RATE_LIMIT_IP', flag: 'rate-limit-ip', kind: rate, default: '100/60', metavar: 'N/S', doc: 'unauthenticated API requests per client address (requests/seconds)' },
  { key: 'rate_limit_login', env: 'PARLEY_RATE_LIMIT_LOGIN', flag: 'rate-limit-login', kind: rate, default: '5/1800', metavar: 'N/S', doc: 'failed logins per username (attempts/seconds)' },
  { key: 'rate_limit_email_ip', env: 'PARLEY_RATE_LIMIT_EMAIL_IP', flag: 'rate-limit-email-ip', kind: rate, default: '5/86400', metavar: 'N/S', doc: 'sign-up emails per client address (emails/seconds)' },
  { key: 'synchronous', env: 'PARLEY_SYNCHRONOUS', flag: 'synchronous', kind: { type: 'enum', values: ['normal', 'full'] }, default: 'normal', metavar: 'normal|full', doc: 'SQLite durability: `full` also survives a power loss, at a cost in write rate' },
  { key: 'max_body_bytes', env: 'PARLEY_MAX_BODY_BYTES', flag: 'max-body-bytes', kind: positive, default: 6 * 1024 * 1024, metavar: 'BYTES', doc: 'largest form body, files apart (bytes)' },
  { key: 'max_file_upload_size_mib', env: 'PARLEY_MAX_FILE_UPLOAD_SIZE_MIB', flag: 'max-file-upload-size-mib', kind: positive, default: 100, metavar: 'MIB', doc: 'largest uploaded file (MiB)' },
  { key: 'bot_storage_limit', env: 'PARLEY_BOT_STORAGE_LIMIT', flag: 'bot-storage-limit', kind: positive, default: 10_000_000, metavar: 'CHARS', doc: "a bot's storage, keys plus values (characters)" },
  { key: 'heartbeat_seconds', env: 'PARLEY_HEARTBEAT_SECONDS', flag: 'heartbeat-seconds', kind: { type: 'integer', min: 1, max: 86_400 }, default: 50, metavar: 'S', doc: 'seconds a `GET /events` waits before a heartbeat' },
  { key: 'queue_lifespan_seconds', env: 'PARLEY_QUEUE_LIFESPAN_SECONDS', flag: 'queue-lifespan-seconds', kind: positive, default: 600, metavar: 'S', doc: 'idle event queues are collected after this many seconds' },
  { key: 'invitation_validity_minutes', env: 'PARLEY_INVITATION_VALIDITY_MINUTES', flag: 'invitation-validity-minutes', kind: positive, default: 14400, metavar: 'MIN', doc: 'invitation validity when the inviter does not say (minutes)' },
  { key: 'web_public_streams', env: 'PARLEY_WEB_PUBLIC_STREAMS', flag: 'web-public-streams', kind: boolean, default: false, doc: "web-public channels (Zulip's `WEB_PUBLIC_STREAMS_ENABLED`)" },
  { key: 'access_limits_presence', env: 'PARLEY_ACCESS_LIMITS_PRESENCE', flag: 'access-limits-presence', kind: boolean, default: true, doc: "users one cannot see are left out of presence (Zulip's `CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE`)" },
  { key: 'push_url', env: 'PARLEY_PUSH_URL', flag: 'push-url', kind: { type: 'url', protocols: ['http:', 'https:'], bare: true }, default: null, defaultText: 'none (no push notifications)', example: 'https://push.example.com', metavar: 'URL', doc: 'push notification service' },
  { key: 'push_token', env: 'PARLEY_PUSH_TOKEN', flag: 'push-token', kind: { type: 'string' }, default: null, defaultText: 'none', example: 'TOKEN', metavar: 'TOKEN', doc: "the push notification service's credentials" },
  { key: 'smtp_url', env: 'PARLEY_SMTP_URL', flag: 'smtp-url', kind: { type: 'url', protocols: ['smtp:', 'smtps:'] }, default: null, defaultText: 'none (emails are written to `DATA_DIR/outbox/`)', example: 'smtp://user:pass@mail.example.com:587', metavar: 'URL', doc: 'mail server for outgoing email, e.g. `smtp://user:pass@mail.example.com:587`' },
  { key: 'email_from', env: 'PARLEY_EMAIL_FROM', flag: 'email-from', kind: { type: 'string' }, default: null, defaultText: '`Parley <noreply@HOST>`, HOST from the public address', example: 'Parley <chat@example.com>', metavar: 'ADDRESS', doc: 'sender of outgoing email' },
  { key: 'delete_topic_batch_size', env: 'PARLEY_DELETE_TOPIC_BATCH_SIZE', flag: 'delete-topic-batch-size', kind: positive, default: 1000, metavar: 'N', doc: 'messages deleted per batch when a topic is deleted' },
  { key: 'delete_topic_budget_ms', env: 'PARLEY_DELETE_TOPIC_BUDGET_MS', flag: 'delete-topic-budget-ms', kind: positive, default: 50_000, metavar: 'MS', doc: 'time after which a topic deletion answers `complete: false` (ms)' },
  { key: 'log_level', env: 'PARLEY_LOG_LEVEL', flag: 'log-level', kind: { type: 'enum', values: ['error', 'warn', 'info', 'debug'] }, default: 'info', metavar: 'error|warn|info|debug', doc: 'least severe lines written to stderr (`info`: one line per request)' },
  { key: 'log_format', env: 'PARLEY_LOG_FORMAT', flag: 'log-format', kind: { type: 'enum', values: ['text', 'json'] }, default: 'text', metavar: 'text|json', doc: 'log lines as text, or as one JSON object per line' },
  { key: 'log_requests', env: 'PARLEY_LOG_REQUESTS', flag: 'log-requests', kind: boolean, default: true, doc: 'the request lines of `info` (off: `warn` at most)' },
  { key: 'metrics', env: 'PARLEY_METRICS', flag: 'metrics', kind: boolean, default: false, doc: 'serve `GET /metrics` (Prometheus text format)' },
  { key: 'metrics_token', env: 'PARLEY_METRICS_TOKEN', flag: 'metrics-token', kind: { type: 'string' }, default: null, defaultText: 'none: loopback clients only', example: 'a-long-random-string', metavar: 'TOKEN', doc: '`GET /metrics` wants `Authorization: Bearer TOKEN` from any address (prefer the file or the environment: flags show in `ps`)' },
  { key: 'tls_cert', env: 'PARLEY_TLS_CERT', flag: 'tls-cert', kind: { type: 'path' }, default: null, defaultText: 'none (plain HTTP)', example: '/etc/letsencrypt/live/chat.example.com/fullchain.pem', metavar: 'PEM', doc: 'HTTPS certificate (PEM, full chain); with `tls_key`, both or neither; re-read on SIGHUP' },
  { key: 'tls_key', env: 'PARLEY_TLS_KEY', flag: 'tls-key', kind: { type: 'path' }, default: null, defaultText: 'none', example: '/etc/letsencrypt/live/chat.example.com/privkey.pem', metavar: 'PEM', doc: 'HTTPS private key (PEM); re-read on SIGHUP' },
  { key: 'tls_key_passphrase', env: 'PARLEY_TLS_KEY_PASSPHRASE', flag: 'tls-key-passphrase', kind: { type: 'string' }, default: null, defaultText: 'none', example: 'SECRET', metavar: 'SECRET', doc: 'passphrase of an encrypted TLS key (prefer the file or the environment: flags show in `ps`)' },
  { key: 'trusted_proxies', env: 'PARLEY_TRUSTED_PROXIES', flag: 'trusted-proxies', kind: { type: 'addresses' }, default: null, defaultText: 'none', example: '127.0.0.1,::1', metavar: 'ADDR,...', doc: 'reverse proxies whose `X-Forwarded-For` is believed (addresses, CIDR ranges)' },
  { key: 'outgoing_webhook_timeout_ms', env: 'PARLEY_OUTGOING_WEBHOOK_TIMEOUT_MS', flag: 'outgoing-webhook-timeout-ms', kind: { type: 'integer', min: 1, max: MAX_TIMER_MS }, default: 10_000, metavar: 'MS', doc: "an outgoing-webhook bot's request, connect to answer (ms)" },
  { key: 'outgoing_webhook_max_response_bytes', env: 'PARLEY_OUTGOING_WEBHOOK_MAX_RESPONSE_BYTES', flag: 'outgoing-webhook-max-response-bytes', kind: positive, default: 1024 * 1024, metavar: 'BYTES', doc: "largest answer read from an outgoing-webhook bot's server (bytes)" },
  { key: 'outgoing_webhook_retry_ms', env: 'PARLEY_OUTGOING_WEBHOOK_RETRY_MS', flag: 'outgoing-webhook-retry-ms', kind: { type: 'integer', min: 0, max: MAX_TIMER_MS }, default: 1000, metavar: 'MS', doc: 'delay before the first retry of a failed outgoing-webhook request, doubling per retry (ms)' },
  { key: 'outgoing_webhook_max_pending', env: 'PARLEY_OUTGOING_WEBHOOK_MAX_PENDING', flag: 'outgoing-webhook-max-pending', kind: positive, default: 1000, metavar: 'N', doc: 'outgoing-webhook deliveries waiting or running, past which new ones are dropped' },
  { key: 'outgoing_webhook_concurrency', env: 'PARLEY_OUTGOING_WEBHOOK_CONCURRENCY', flag: 'outgoing-webhook-concurrency', kind: positive, default: 4, metavar: 'N', doc: 'outgoing-webhook requests in flight at once' },
  { key: 'outgoing_webhook_allow_private', env: 'PARLEY_OUTGOING_WEBHOOK_ALLOW_PRIVATE', flag: 'outgoing-webhook-allow-private', kind: boolean, default: false, doc: "outgoing-webhook bots may reach loopback, link-local, private-network and this server's own addresses" },
  { key: 'cache_dir', env: 'PARLEY_CACHE_DIR', flag: 'cache-dir', kind: { type: 'path' }, default: null, defaultText: '`$XDG_CACHE_HOME/parley` or `~/.cache/parley`', example: '/var/cache/parley', metavar: 'DIR', doc: "where the executable extracts its native addons" },
];

/** Environment variables read outside the settings: where the file is, and developer-only switches. */
export const OTHER_ENV: readonly { env: string; flag: string | null; doc: string }[] = [
  { env: 'PARLEY_CONFIG', flag: 'config', doc: 'the configuration file (see the lookup rules above)' },
  { env: 'PARLEY_RECORD_RESPONSES', flag: null, doc: 'tests only: append every JSON reply to this file (or directory/) for the conformance check' },
  { env: 'PARLEY_CHECK_CODE_CACHE', flag: null, doc: "build only: the executable exits 70 when V8 rejects its code cache" },
  { env: 'PARLEY_EXPORT_TEST_STALL_AFTER', flag: null, doc: 'tests only: `parley export` waits to be killed after writing this tarball entry' },
];

export type Values = Record<string, Value | null>;

/** Thrown for a bad value; main.ts turns it into a message and exit code 2. */
export class ConfigError extends Error {}

/** A bad flag: main.ts adds the command's usage. */
export class FlagError extends ConfigError {}

export function defaults(): Values {
  return Object.fromEntries(SETTINGS.map((s) => [s.key, s.default]));
}

export function settingByKey(key: string): Setting | undefined {
  return SETTINGS.find((s) => s.key === key);
}

/** What a value of this kind looks like, for messages: "must be EXPECTED, got ...". */
export function expected(kind: Kind, source: 'file' | 'env' | 'flag'): string {
  switch (kind.type) {
    case 'string':
      return 'a non-empty string';
    case 'path':
      return 'a path';
    case 'url':
      return `an ${kind.protocols.map((p) => p.slice(0, -1)).join(' or ')} URL${kind.bare ? ' without credentials, query or fragment' : ''}`;
    case 'integer':
      return kind.max === MAX ? `an integer of at least ${kind.min}` : `an integer from ${kind.min} to ${kind.max}`;
    case 'boolean':
      return source === 'file' ? 'true or false' : 'on or off';
    case 'enum':
      return kind.values.map((v) => JSON.stringify(v)).join(' or ');
    case 'rate':
      return 'requests/seconds like "200/60"';
    case 'addresses':
      return 'addresses or CIDR ranges separated by commas, like "127.0.0.1,::1"';
  }
}

/** A TOML or text value as a message shows it. */
export function show(value: unknown): string {
  if (value instanceof Date || (typeof value === 'object' && value !== null && 'toISOString' in value)) return 'a date';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object' && value !== null) return 'a table';
  return JSON.stringify(value);
}

/** Checks and normalises one text value (environment or flag); null when it is not valid. */
export function fromText(kind: Kind, raw: string, base: string): Value | null {
  switch (kind.type) {
    case 'integer': {
      if (!/^-?\d+$/.test(raw.trim())) return null;
      const n = Number(raw);
      return Number.isSafeInteger(n) && n >= kind.min && n <= kind.max ? n : null;
    }
    case 'boolean': {
      const t = raw.trim().toLowerCase();
      if (['on', '1', 'true', 'yes'].includes(t)) return true;
      if (['off', '0', 'false', 'no'].includes(t)) return false;
      return null;
    }
    default:
      return check(kind, raw, base);
  }
}

/** Checks and normalises one value of the right JavaScript type (a string for text kinds); null when not valid. */
export function check(kind: Kind, value: unknown, base: string): Value | null {
  switch (kind.type) {
    case 'integer':
      return typeof value === 'number' && Number.isSafeInteger(value) && value >= kind.min && value <= kind.max ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'string':
      // An empty value would mean "unset" in the environment; in the file it is a mistake (host = "").
      return typeof value === 'string' && value.trim() !== '' ? value : null;
    case 'path':
      // Surrounding spaces are a copy-paste's: " /var/lib/parley" would be a new directory under the
      // working one (and a new, empty organization there).
      if (typeof value !== 'string' || value === '' || value.trim() !== value) return null;
      return value === ':memory:' ? value : path.resolve(base, value);
    case 'url': {
      if (typeof value !== 'string') return null;
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        return null;
      }
      if (!kind.protocols.includes(url.protocol)) return null;
      // The public URL is realm_url, shown to anyone (GET /server_settings): no credentials in it; and
      // links are built by appending paths, which a query or fragment would break.
      if (kind.bare && (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || /[?#]/.test(value))) return null;
      // A trailing slash would double the slashes of appended paths.
      return value.replace(/\/+$/, '');
    }
    case 'enum':
      return typeof value === 'string' && kind.values.includes(value) ? value : null;
    case 'rate':
      return typeof value === 'string' && /^\s*[1-9]\d{0,8}\s*\/\s*[1-9]\d{0,8}\s*$/.test(value) ? value.replace(/\s+/g, '') : null;
    case 'addresses':
      if (typeof value !== 'string' || value.trim() === '') return null;
      try {
        return parseTrustedProxies(value, '').join(',');
      } catch {
        return null;
      }
  }
}

/** The settings the environment sets (empty variables count as unset, as they always have). */
export function valuesFromEnv(env: NodeJS.ProcessEnv): Values {
  const out: Values = {};
  for (const s of SETTINGS) {
    const raw = env[s.env];
    if (raw === undefined || raw === '') continue;
    const v = fromText(s.kind, raw, process.cwd());
    if (v === null) throw new ConfigError(`${s.env} must be ${expected(s.kind, 'env')}, got ${JSON.stringify(raw)}`);
    out[s.key] = v;
  }
  return out;
}

/** The settings the command line sets (parseArgs values: strings, and true for --FLAG / --no-FLAG). */
export function valuesFromFlags(flags: Record<string, string | boolean | undefined>): Values {
  const out: Values = {};
  for (const s of SETTINGS) {
    if (s.kind.type === 'boolean') {
      const on = flags[s.flag] === true;
      const off = flags[`no-${s.flag}`] === true;
      if (on && off) throw new FlagError(`--${s.flag} and --no-${s.flag} contradict each other`);
      if (on || off) out[s.key] = on;
      continue;
    }
    const raw = flags[s.flag];
    if (typeof raw !== 'string') continue;
    const v = fromText(s.kind, raw, process.cwd());
    if (v === null) throw new FlagError(`--${s.flag} must be ${expected(s.kind, 'flag')}, got ${JSON.stringify(raw)}`);
    out[s.key] = v;
  }
  return out;
}
