// Outgoing typing notifications, as Zulip's shared/src/typing_status.ts: "start" when someone begins
// typing to a conversation and again every started-wait period while they go on, "stop" after the
// stopped-wait period without a keystroke, when the box is emptied or sent, or when the recipient changes.
import { api } from '../api/http';

export type TypingTo = { type: 'stream'; streamId: number; topic: string } | { type: 'private'; userIds: number[] };

function same(a: TypingTo, b: TypingTo): boolean {
  if (a.type === 'stream' && b.type === 'stream') return a.streamId === b.streamId && a.topic.toLowerCase() === b.topic.toLowerCase();
  if (a.type === 'private' && b.type === 'private') return a.userIds.join(',') === b.userIds.join(',');
  return false;
}

function send(to: TypingTo, op: 'start' | 'stop'): void {
  const params =
    to.type === 'stream' ? { type: 'stream', op, stream_id: to.streamId, topic: to.topic } : { type: 'direct', op, to: to.userIds };
  api('POST', 'typing', params).catch(() => undefined); // best effort
}

export class TypingSender {
  private current: TypingTo | null = null;
  private nextStart = 0;
  private idle: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly startedWaitMs: () => number,
    private readonly stoppedWaitMs: () => number,
  ) {}

  /** After each keystroke: `to` is where the text would go, or null when the box is empty. */
  update(to: TypingTo | null): void {
    if (this.current && to && same(this.current, to)) {
      if (Date.now() > this.nextStart) this.start(to);
      this.restartIdle();
      return;
    }
    this.stop();
    if (to) {
      this.current = to;
      this.start(to);
      this.restartIdle();
    }
  }

  /** The message was sent, the box cleared, or the conversation left. */
  stop(): void {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    if (this.current) send(this.current, 'stop');
    this.current = null;
  }

  private start(to: TypingTo): void {
    send(to, 'start');
    this.nextStart = Date.now() + this.startedWaitMs();
  }

  private restartIdle(): void {
    if (this.idle) clearTimeout(this.idle);
    this.idle = setTimeout(() => this.stop(), this.stoppedWaitMs());
  }
}
