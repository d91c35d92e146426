// Resource bounds of the event system, over the wire: one parked long-poll per queue, a bounded number
// of queues per user (src/events/registry.ts: 50; the least recently connected idle one is evicted,
// and only when every queue has a poll parked is registration refused), and a bounded backlog per
// queue (10,000 unacknowledged events; an overflowing queue is discarded so its client re-registers).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { basicAuth, encodeParams, startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { DEFAULT_LIMITS } from '../../src/events/registry';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

const badQueue = (id: string) => ({ result: 'error', msg: `Bad event queue ID: ${id}`, code: 'BAD_EVENT_QUEUE_ID', queue_id: id });

async function register(user: TestUser): Promise<string> {
  const res = await t.api(user, 'POST', '/register', { fetch_event_types: [] });
  assert.equal(res.status, 200, res.text);
  return res.body.queue_id;
}

/** Starts a long-poll; resolves with its answer. `abort` ends it from the client side. */
function longPoll(user: TestUser, queueId: string, lastEventId = -1) {
  const ctl = new AbortController();
  const done = fetch(`${t.url}/api/v1/events?${encodeParams({ queue_id: queueId, last_event_id: lastEventId })}`, {
    headers: { authorization: basicAuth(user) },
    signal: ctl.signal,
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
  done.catch(() => undefined);
  return { done, abort: () => ctl.abort() };
}

async function parked(user: TestUser, queueId: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (t.app.queues.access(user.id, queueId).parked) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.fail('the poll never parked');
}

const dontBlock = (user: TestUser, queueId: string) => t.api(user, 'GET', '/events', { queue_id: queueId, last_event_id: -1, dont_block: true });

describe('parked long-polls per queue', () => {
  it('a second GET /events on the same queue answers the first at once (empty) and parks itself', async () => {
    const u = t.users.hamlet;
    const q = await register(u);
    const first = longPoll(u, q);
    await parked(u, q);
    const second = longPoll(u, q);
    const r1 = await first.done;
    assert.deepEqual(r1, { status: 200, body: { result: 'success', msg: '', events: [], queue_id: q } });
    await parked(u, q);
    // The second one is the live poll: an event reaches it.
    await t.api(u, 'POST', '/typing', { op: 'start', to: [t.users.othello.id] });
    const r2 = await second.done;
    assert.equal(r2.status, 200);
    assert.deepEqual(r2.body.events.map((e: { type: string }) => e.type), ['typing']);
  });

  it('ten polls racing on one queue leave exactly one parked; the others are answered', async () => {
    const u = t.users.othello;
    const q = await register(u);
    const polls = [];
    for (let i = 0; i < 10; i++) {
      polls.push(longPoll(u, q));
      await parked(u, q);
    }
    const answered = await Promise.all(polls.slice(0, 9).map((p) => p.done));
    assert.ok(answered.every((r) => r.status === 200 && r.body.events.length === 0));
    assert.equal(t.app.queues.access(u.id, q).parked, true);
    await t.api(u, 'DELETE', '/events', { queue_id: q });
    assert.deepEqual((await polls[9].done).body.events, []);
  });

  it('a poll the client abandons does not keep its queue from being polled again', async () => {
    const u = t.users.hamlet;
    const q = await register(u);
    const p = longPoll(u, q);
    await parked(u, q);
    p.abort();
    const res = await dontBlock(u, q);
    assert.deepEqual(res.body, { result: 'success', msg: '', events: [] });
  });
});

describe('event queues per user', () => {
  const MAX = DEFAULT_LIMITS.maxQueuesPerUser;

  it(`registering past ${MAX} queues evicts the least recently connected idle one (its next poll: BAD_EVENT_QUEUE_ID)`, async () => {
    const u = t.users.moderator;
    const ids: string[] = [];
    for (let i = 0; i < MAX; i++) ids.push(await register(u));
    // Touch the first so the second is now the least recently connected.
    await new Promise((r) => setTimeout(r, 5));
    assert.equal((await dontBlock(u, ids[0])).status, 200);
    const extra = await register(u);
    const res = await dontBlock(u, ids[1]);
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, badQueue(ids[1]));
    for (const id of [ids[0], ...ids.slice(2), extra]) assert.equal((await dontBlock(u, id)).status, 200, id);
    // Another user's queues are untouched by this user's churn.
    const other = await register(t.users.admin);
    for (let i = 0; i < 5; i++) await register(u);
    assert.equal((await dontBlock(t.users.admin, other)).status, 200);
    for (const id of [...ids, extra]) await t.api(u, 'DELETE', '/events', { queue_id: id });
  });

  it(`refuses one more queue only when all ${MAX} have a poll parked, with Zulip's "Could not allocate event queue"`, async () => {
    const u = t.users.guest;
    const ids: string[] = [];
    for (let i = 0; i < MAX; i++) ids.push(await register(u));
    const polls = ids.map((id) => longPoll(u, id));
    for (const id of ids) await parked(u, id);
    const res = await t.api(u, 'POST', '/register', { fetch_event_types: [] });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { result: 'error', msg: 'Could not allocate event queue', code: 'BAD_REQUEST' });
    // The same through GET /events without a queue.
    const viaEvents = await t.api(u, 'GET', '/events', { dont_block: true });
    assert.deepEqual(viaEvents.body, { result: 'error', msg: 'Could not allocate event queue', code: 'BAD_REQUEST' });
    // Deleting one queue answers its poll and frees a place.
    await t.api(u, 'DELETE', '/events', { queue_id: ids[0] });
    assert.deepEqual((await polls[0].done).body.events, []);
    const q = await register(u);
    for (const id of [...ids.slice(1), q]) await t.api(u, 'DELETE', '/events', { queue_id: id });
    for (const p of polls.slice(1)) assert.equal((await p.done).status, 200);
  });

  it(
    'a poll whose client went away no longer counts as parked (its queue may be evicted)',
    async () => {
      const u = t.users.owner;
      const ids: string[] = [];
      for (let i = 0; i < MAX; i++) ids.push(await register(u));
      const polls = ids.map((id) => longPoll(u, id));
      for (const id of ids) await parked(u, id);
      polls[0].abort();
      await new Promise((r) => setTimeout(r, 50));
      try {
        const res = await t.api(u, 'POST', '/register', { fetch_event_types: [] });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual((await dontBlock(u, ids[0])).body, badQueue(ids[0]));
      } finally {
        for (const id of ids) await t.api(u, 'DELETE', '/events', { queue_id: id });
      }
    },
  );
});

describe('backlog per queue', () => {
  it(`discards a queue that passes ${DEFAULT_LIMITS.maxBacklog} unacknowledged events; its next poll answers BAD_EVENT_QUEUE_ID and a fresh queue works`, async () => {
    const u = t.users.hamlet;
    const slow = await register(u);
    const busy = await register(u);
    // Events straight onto the bus (as actions send them after commit): 10,001 typing notifications
    // over HTTP would take far longer than the bound deserves.
    const event = { type: 'typing', op: 'start', message_type: 'direct', sender: { user_id: t.users.othello.id, email: t.users.othello.email }, recipients: [] };
    let lastSeen = -1;
    for (let i = 0; i < DEFAULT_LIMITS.maxBacklog; i++) {
      t.app.events.send({ ...event }, [u.id]);
      // The busy client keeps up: it acknowledges as it goes.
      if (i % 2500 === 2499) {
        const res = await t.api(u, 'GET', '/events', { queue_id: busy, last_event_id: lastSeen, dont_block: true });
        assert.equal(res.status, 200);
        lastSeen = res.body.events.at(-1).id;
      }
    }
    // Exactly at the limit the slow queue lives.
    const atLimit = await t.api(u, 'GET', '/events', { queue_id: slow, last_event_id: -1, dont_block: true });
    assert.equal(atLimit.status, 200);
    assert.equal(atLimit.body.events.length, DEFAULT_LIMITS.maxBacklog);
    // last_event_id -1 acknowledged nothing: one more event overflows it.
    t.app.events.send({ ...event }, [u.id]);
    const res = await t.api(u, 'GET', '/events', { queue_id: slow, last_event_id: -1, dont_block: true });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, badQueue(slow));
    const alive = await t.api(u, 'GET', '/events', { queue_id: busy, last_event_id: lastSeen, dont_block: true });
    assert.equal(alive.status, 200);
    assert.equal(alive.body.events.length, 1);
    const fresh = await register(u);
    assert.equal((await dontBlock(u, fresh)).status, 200);
  });
});
