// The client of the configured push notification service (the "bouncer"). Every call is a JSON POST
// under the service URL with `Authorization: Bearer <token>`; the service maps token_id to the real
// FCM/APNs token and never sees plaintext for E2EE devices:
//   /api/v1/remotes/push/e2ee/register  {user_id, device_id, token_id, token_kind, bouncer_public_key, encrypted_push_registration}
//   /api/v1/remotes/push/e2ee/notify    {push_requests: [{token_id, token_kind, payload: {push_key_id, encrypted_data}, ...}]}
//   /api/v1/remotes/push/register       {user_id, token, token_kind, ios_app_id}      (legacy tokens)
//   /api/v1/remotes/push/unregister     {user_id, token, token_kind}
//   /api/v1/remotes/push/test_notification {user_id, token, token_kind, payload}  → 400 INVALID_REMOTE_PUSH_DEVICE_TOKEN
// Deliveries go through a per-app queue: sent at once, retried with exponential backoff while the
// service is unreachable or answers 5xx/429, dropped on other 4xx. Nothing here blocks a request.
import type { App } from '../app';

export interface PushJob {
  path: string;
  body: Record<string, unknown>;
  attempts: number;
  /** Called once with the final answer: delivered, or dropped (a refusal, or out of attempts). */
  onDone?: (result: PostResult) => void;
}

export interface PushQueueOptions {
  /** First retry delay; doubles per attempt up to maxDelayMs. */
  retryBaseMs: number;
  maxDelayMs: number;
  maxAttempts: number;
  timeoutMs: number;
}

export type PostResult = { ok: true; status: number; body: unknown } | { ok: false; status: number | null; body: unknown; retry: boolean };

/** One POST to the push service; never throws. */
export async function postToService(app: App, path: string, body: Record<string, unknown>, timeoutMs = 10_000): Promise<PostResult> {
  const svc = app.config.pushService;
  if (!svc) return { ok: false, status: null, body: null, retry: false };
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (svc.token) headers.authorization = `Bearer ${svc.token}`;
  try {
    const res = await fetch(svc.url.replace(/\/+$/, '') + path, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    if (res.ok) return { ok: true, status: res.status, body: parsed };
    return { ok: false, status: res.status, body: parsed, retry: res.status >= 500 || res.status === 429 };
  } catch (err) {
    return { ok: false, status: null, body: String(err), retry: true };
  }
}

/** Per-app delivery queue with retries. */
export class PushQueue {
  readonly options: PushQueueOptions = { retryBaseMs: 1000, maxDelayMs: 5 * 60 * 1000, maxAttempts: 10, timeoutMs: 10_000 };
  private timers = new Set<NodeJS.Timeout>();
  private inFlight = 0;
  private stopped = false;
  /** Counters for tests and logs. */
  readonly stats = { sent: 0, retried: 0, dropped: 0 };

  constructor(private readonly app: App) {
    app.onShutdown(() => this.stop());
  }

  /** Queues a POST; returns at once. `onDone` hears the final answer (never after stop()). */
  enqueue(path: string, body: Record<string, unknown>, onDone?: (result: PostResult) => void): void {
    if (this.stopped) return;
    this.schedule({ path, body, attempts: 0, onDone }, 0);
  }

  /** Jobs sent or waiting. */
  get pending(): number {
    return this.timers.size + this.inFlight;
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  private schedule(job: PushJob, delayMs: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.attempt(job);
    }, delayMs);
    timer.unref();
    this.timers.add(timer);
  }

  private async attempt(job: PushJob): Promise<void> {
    if (this.stopped) return;
    this.inFlight++;
    let r: PostResult;
    try {
      r = await postToService(this.app, job.path, job.body, this.options.timeoutMs);
    } finally {
      this.inFlight--;
    }
    if (r.ok) {
      this.stats.sent++;
      this.done(job, r);
      return;
    }
    job.attempts++;
    if (r.retry && job.attempts < this.options.maxAttempts && !this.stopped) {
      this.stats.retried++;
      const delay = Math.min(this.options.maxDelayMs, this.options.retryBaseMs * 2 ** (job.attempts - 1));
      // Jitter keeps many retries from arriving together when the service comes back.
      this.schedule(job, Math.round(delay * (0.75 + Math.random() * 0.5)));
      return;
    }
    this.stats.dropped++;
    console.error(`parley: push service ${job.path} failed (status ${r.status ?? 'network'}); dropped after ${job.attempts} attempt(s)`);
    this.done(job, r);
  }

  private done(job: PushJob, r: PostResult): void {
    // After stop() the app (and its database) may be gone.
    if (!job.onDone || this.stopped) return;
    try {
      job.onDone(r);
    } catch (err) {
      console.error(`parley: push service ${job.path}: handling the answer failed`, err);
    }
  }
}

const queues = new WeakMap<App, PushQueue>();

/** The app's push delivery queue (created on first use). */
export function pushQueue(app: App): PushQueue {
  let q = queues.get(app);
  if (!q) queues.set(app, (q = new PushQueue(app)));
  return q;
}
