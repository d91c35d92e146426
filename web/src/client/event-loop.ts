// The event queue: register, then long-poll GET /json/events and hand each batch to `apply`. A server
// that is gone is retried with backoff (the status says when); a queue the server no longer has
// (BAD_EVENT_QUEUE_ID: it expired, or the server restarted) means registering again.
import { api, ApiError, NetworkError } from '../api/http';
import { REGISTER_PARAMS } from '../state/store';
import type { RegisterResponse, ServerEvent } from '../state/wire';
import { backoffMs } from './backoff';

export type Connection = { state: 'connected' } | { state: 'retrying'; retryAt: number; failures: number; message: string };

export interface EventLoopHooks {
  /** A fresh registration (the first, or after the queue was lost). */
  registered(r: RegisterResponse, first: boolean): void;
  events(events: ServerEvent[]): void;
  connection(c: Connection): void;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });

export class EventLoop {
  private queueId: string | null = null;
  private lastEventId = -1;
  private stopped = false;
  private failures = 0;
  /** Aborted to cut a wait short ("Try now"), or the poll in flight (stop). */
  private wait = new AbortController();
  private poll: AbortController | null = null;
  private longpollSeconds = 90;

  constructor(private readonly hooks: EventLoopHooks) {}

  /** Registers and polls until stop(); never throws. */
  async run(): Promise<void> {
    let first = true;
    while (!this.stopped) {
      try {
        if (this.queueId === null) {
          const r = await api<RegisterResponse>('POST', 'register', { ...REGISTER_PARAMS }, { timeoutMs: 30_000 });
          this.queueId = r.queue_id;
          this.lastEventId = r.last_event_id;
          this.longpollSeconds = r.event_queue_longpoll_timeout_seconds ?? 90;
          this.hooks.registered(r, first);
          first = false;
        } else {
          this.poll = new AbortController();
          const r = await api<{ events: ServerEvent[] }>(
            'GET',
            'events',
            { queue_id: this.queueId, last_event_id: this.lastEventId, dont_block: this.failures > 0 },
            { signal: this.poll.signal, timeoutMs: (this.longpollSeconds + 20) * 1000 },
          );
          this.poll = null;
          for (const e of r.events) if (e.id > this.lastEventId) this.lastEventId = e.id;
          if (r.events.length) this.hooks.events(r.events);
        }
        if (this.failures > 0) {
          this.failures = 0;
          this.hooks.connection({ state: 'connected' });
        }
      } catch (err) {
        if (this.stopped) return;
        if (err instanceof ApiError && err.code === 'BAD_EVENT_QUEUE_ID') {
          this.queueId = null; // register again at once
          continue;
        }
        if (err instanceof ApiError && err.status === 401) return; // the login page takes over
        this.failures++;
        const retryAfter = err instanceof ApiError ? Number(err.body['retry-after'] ?? 0) : 0;
        const delay = backoffMs(this.failures, retryAfter);
        const message =
          err instanceof NetworkError || (err instanceof ApiError && err.status >= 500)
            ? 'Cannot reach the server.'
            : err instanceof ApiError
              ? err.message
              : 'Something went wrong.';
        this.hooks.connection({ state: 'retrying', retryAt: Date.now() + delay, failures: this.failures, message });
        this.wait = new AbortController();
        await sleep(delay, this.wait.signal);
      }
    }
  }

  /** Ends the wait before the next attempt (the "Try now" button, the browser coming back online). */
  retryNow(): void {
    this.wait.abort();
  }

  /** The page is going away: free the server's queue now rather than when it times out (as Zulip does). */
  release(): void {
    const queue = this.queueId;
    this.stop();
    if (queue === null) return;
    api('DELETE', 'events', { queue_id: queue }, { keepalive: true }).catch(() => undefined);
  }

  get queue(): string | null {
    return this.queueId;
  }

  stop(): void {
    this.stopped = true;
    this.poll?.abort();
    this.wait.abort();
  }
}
