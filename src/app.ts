// The composition root: one App holds the database, write batch, event bus, clock and configuration.
// No module-level mutable state, so tests can start many apps in one process.
import path from 'node:path';
import fs from 'node:fs';
import { boundUrl, type Config } from './config';
import { RateLimiter } from './http/ratelimit';
import { openDatabase, type Db } from './db/open';
import { WriteBatch } from './db/tx';
import { installWatchTriggers } from './db/watch';
import { EventBus } from './events/bus';
import { QueueRegistry } from './events/registry';
import { systemClock, type Clock } from './lib/clock';
import { findRealm } from './lib/realm';
import { Logger, stderrSink, type LogSink } from './lib/log';
import { ServerMetrics } from './lib/metrics';

export interface App {
  readonly config: Config;
  readonly db: Db;
  readonly batch: WriteBatch;
  readonly events: EventBus;
  /** Request rate limits (off with --no-rate-limits). */
  readonly limits: RateLimiter;
  /** The in-memory event queues (POST /register, GET /events). */
  readonly queues: QueueRegistry;
  readonly clock: Clock;
  /** The request log and server errors (level and format from the config). */
  readonly log: Logger;
  /** Prometheus metrics; null unless the metrics setting is on. */
  readonly metrics: ServerMetrics | null;
  /** DATA_DIR/uploads (or a temporary folder for an in-memory database). */
  readonly uploadsDir: string;
  /** Base URL used in links (realm_url, emails): the external URL, or the bound address once listening. */
  publicUrl: string;
  /** The organization's id; throws before `parley init`. */
  realmId(): number;
  /** Registers work to do when the server stops (release parked long-polls, stop timers). */
  onShutdown(fn: () => void): void;
  /** Runs the shutdown hooks (before the HTTP server waits for in-flight requests). */
  shutdown(): void;
  /** Commits pending writes and closes the database. */
  close(): void;
}

/**
 * Builds an App over `config.dataDir` (opening and migrating its database). `logSink` receives the log
 * lines (stderr, buffered, unless given; null writes nothing).
 */
export function createApp(config: Config, opts: { clock?: Clock; logSink?: LogSink | null } = {}): App {
  const inMemory = config.dataDir === ':memory:';
  const dbFile = inMemory ? ':memory:' : path.join(config.dataDir, 'parley.db');
  const db = openDatabase(dbFile, { synchronous: config.synchronous });
  installWatchTriggers(db);
  const uploadsDir = inMemory
    ? fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'parley-uploads-'))
    : path.join(config.dataDir, 'uploads');
  const batch = new WriteBatch(db);
  let realmId: number | null = null;
  let closed = false;
  const shutdownHooks: (() => void)[] = [];
  const events = new EventBus();
  const clock = opts.clock ?? systemClock;
  const queues = new QueueRegistry({ db, events, clock, config });
  queues.start();
  // Parked long-polls are answered at once so the server can stop without waiting for heartbeats.
  shutdownHooks.push(() => queues.stop());
  const metrics = config.metrics ? new ServerMetrics({ db, dbFile: inMemory ? '' : dbFile, events, queues }) : null;
  if (metrics) shutdownHooks.push(() => metrics.close());
  return {
    config,
    db,
    batch,
    events,
    queues,
    limits: new RateLimiter(config.rateLimits, config.rateLimitRules),
    clock,
    log: new Logger(config.logLevel, config.logFormat, opts.logSink === undefined ? stderrSink : opts.logSink),
    metrics,
    uploadsDir,
    publicUrl: config.externalUrl ?? boundUrl(config),
    realmId() {
      if (realmId === null) {
        const realm = findRealm(db);
        if (!realm) throw new Error('the data dir has no organization yet (run parley init)');
        realmId = realm.id;
      }
      return realmId;
    },
    onShutdown(fn) {
      shutdownHooks.push(fn);
    },
    shutdown() {
      for (const fn of shutdownHooks.splice(0)) {
        try {
          fn();
        } catch (err) {
          console.error('parley: shutdown hook failed', err);
        }
      }
    },
    close() {
      this.shutdown();
      if (closed) return;
      closed = true;
      batch.commit();
      db.close();
      if (inMemory) fs.rmSync(uploadsDir, { recursive: true, force: true });
    },
  };
}
