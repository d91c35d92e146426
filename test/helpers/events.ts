// Event-queue helpers shared by API tests: register a queue, then read what it holds.
import assert from 'node:assert/strict';
import type { TestServer, TestUser } from './server';

/** Registers a queue for `types` (no initial state) and returns its id. */
export async function registerQueue(t: TestServer, user: TestUser, types: string[]): Promise<string> {
  const res = await t.api(user, 'POST', '/register', { event_types: types, fetch_event_types: [] });
  assert.equal(res.status, 200, res.text);
  return res.body.queue_id;
}

/** The queue's events without ids and heartbeats (never blocks). */
export async function queuedEvents(t: TestServer, user: TestUser, queueId: string): Promise<any[]> {
  const res = await t.api(user, 'GET', '/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  assert.equal(res.status, 200, res.text);
  return res.body.events.filter((e: any) => e.type !== 'heartbeat').map(({ id, ...rest }: any) => rest);
}
