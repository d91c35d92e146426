// Event delivery seam. Actions call send() from tx.onCommit, so only committed changes are announced.
// Listeners (the event queues of the events issue, tests) receive each event with its recipients.

export type ParleyEvent = { type: string; [key: string]: unknown };
export type EventListener = (event: ParleyEvent, userIds: readonly number[]) => void;

export class EventBus {
  private listeners = new Set<EventListener>();

  /** Subscribes to every sent event; returns the unsubscribe function. */
  listen(fn: EventListener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Delivers `event` to the queues of `userIds`. */
  send(event: ParleyEvent, userIds: readonly number[]): void {
    for (const fn of this.listeners) fn(event, userIds);
  }
}
