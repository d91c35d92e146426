// GET /metrics: Prometheus counters and gauges through prom-client, one registry per App (no global
// state: tests run many apps in one process). Built only when the metrics setting is on, so a server
// without it neither loads prom-client nor counts anything.
import fs from 'node:fs';
import type { Counter, Histogram, Registry } from 'prom-client';
import type { Db } from '../db/open';
import type { EventBus } from '../events/bus';
import type { QueueRegistry } from '../events/registry';
import { loadPromClient } from '../lazy';

/** Methods counted by name; anything else a client sends is 'OTHER' (labels stay bounded). */
const KNOWN_METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);

/**
 * Latency buckets in seconds: most replies take well under 10 ms; long-polls (GET /events) wait up
 * to the heartbeat (~50 s), which the last buckets separate from slow requests.
 */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export interface MetricsDeps {
  db: Db;
  /** The database file ('' for an in-memory database): its size and its -wal file's. */
  dbFile: string;
  events: EventBus;
  queues: QueueRegistry;
}

export class ServerMetrics {
  readonly registry: Registry;
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly latency: Histogram<'method' | 'route'>;
  private readonly unlisten: () => void;
  /** Route pattern → label: `{user_id:int}` shown as `{user_id}` (computed once per pattern). */
  private readonly routeLabels = new Map<string, string>();

  constructor(deps: MetricsDeps) {
    const prom = loadPromClient();
    const registry = (this.registry = new prom.Registry());
    prom.collectDefaultMetrics({ register: registry });
    this.requests = new prom.Counter({
      name: 'parley_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern (not the raw path) and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    });
    this.latency = new prom.Histogram({
      name: 'parley_http_request_duration_seconds',
      help: 'Time from request to reply, by method and route pattern (long-polls included)',
      labelNames: ['method', 'route'],
      buckets: BUCKETS,
      registers: [registry],
    });
    const sent = new prom.Counter({
      name: 'parley_messages_sent_total',
      help: 'Messages sent (channel and direct, scheduled ones when delivered) since the server started',
      registers: [registry],
    });
    // A message some recipients may not fully see goes out as a second event right after the first
    // (same id): count each message once.
    let lastId = 0;
    this.unlisten = deps.events.listen((event) => {
      if (event.type !== 'message') return;
      const id = (event.message as { id: number }).id;
      if (id === lastId) return;
      lastId = id;
      sent.inc();
    });
    new prom.Gauge({
      name: 'parley_event_queues',
      help: 'Live event queues (registered clients)',
      registers: [registry],
      collect() {
        this.set(deps.queues.size);
      },
    });
    new prom.Gauge({
      name: 'parley_parked_polls',
      help: 'GET /events long-polls waiting for an event',
      registers: [registry],
      collect() {
        this.set(deps.queues.parkedCount());
      },
    });
    new prom.Gauge({
      name: 'parley_database_bytes',
      help: 'Size of the database (its pages, free ones included), without the WAL',
      registers: [registry],
      collect() {
        try {
          const pages = deps.db.pragma('page_count', { simple: true }) as number;
          const size = deps.db.pragma('page_size', { simple: true }) as number;
          this.set(pages * size);
        } catch {
          // A closed database has no size to report: the gauge keeps its last value.
        }
      },
    });
    new prom.Gauge({
      name: 'parley_database_wal_bytes',
      help: 'Size of the write-ahead log file (0 when there is none)',
      registers: [registry],
      collect() {
        this.set(deps.dbFile ? fileSize(`${deps.dbFile}-wal`) : 0);
      },
    });
  }

  /** Counts a finished request. `route` is the matched pattern, or null when no route matched. */
  observe(method: string, route: string | null, status: number, seconds: number): void {
    const m = KNOWN_METHODS.has(method) ? method : 'OTHER';
    let r = 'unmatched';
    if (route !== null) {
      r = this.routeLabels.get(route) ?? route.replace(/\{(\w+)[^}]*\}/g, '{$1}');
      this.routeLabels.set(route, r);
    }
    this.requests.inc({ method: m, route: r, status: String(status) });
    this.latency.observe({ method: m, route: r }, seconds);
  }

  /** The text exposition (Prometheus 0.0.4 format). */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  close(): void {
    this.unlisten();
  }
}

function fileSize(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}
