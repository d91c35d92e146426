// Messages that have been on screen are marked read: at once in the store (counts drop immediately),
// and on the server in batches (POST /messages/flags, at most 1000 ids, at most one request a second,
// as Zulip's message_flags.send_read). A failed batch is tried again later.
import { api } from '../api/http';

const BATCH = 1000;
const INTERVAL_MS = 1000;

export class ReadQueue {
  private pending = new Set<number>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private inFlight = false;
  private lastSent = 0;

  constructor(private readonly markLocally: (ids: number[]) => void) {}

  add(ids: number[]): void {
    const fresh = ids.filter((id) => !this.pending.has(id));
    if (!fresh.length) return;
    for (const id of fresh) this.pending.add(id);
    this.markLocally(fresh);
    this.schedule();
  }

  private schedule(): void {
    if (this.timer !== null || this.inFlight) return;
    const wait = Math.max(0, this.lastSent + INTERVAL_MS - Date.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, Math.min(wait, INTERVAL_MS) || 50);
  }

  private async flush(): Promise<void> {
    if (!this.pending.size) return;
    const batch = [...this.pending].sort((a, b) => a - b).slice(0, BATCH);
    this.inFlight = true;
    this.lastSent = Date.now();
    try {
      await api('POST', 'messages/flags', { messages: batch, op: 'add', flag: 'read' });
      for (const id of batch) this.pending.delete(id);
    } catch {
      // Kept for the next attempt; the server's events will tell if another device read them meanwhile.
      this.lastSent = Date.now() + 4 * INTERVAL_MS;
    } finally {
      this.inFlight = false;
    }
    if (this.pending.size) this.schedule();
  }
}
