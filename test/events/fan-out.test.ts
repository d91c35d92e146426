// Fan-out of one event to many parked polls over the wire. Queues hold events serialised and build each
// reply by concatenation (src/events/queue.ts), so these tests read the raw reply text: it must be what
// JSON.stringify of the reply object gives, with each recipient's own flags, event ids and queue id,
// and each queue's variant of the message (apply_markdown, client_capabilities).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel } from '../helpers/chat';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

interface Reply {
  status: number;
  text: string;
  body: any;
}

async function register(user: TestUser, params: Record<string, unknown> = {}): Promise<string> {
  const res = await t.api(user, 'POST', '/register', { event_types: ['message'], fetch_event_types: [], ...params });
  assert.equal(res.status, 200, res.text);
  return res.body.queue_id;
}

/** Parks a GET /events; resolves once the server holds it, with the eventual reply (wrapped: an async function would wait for it). */
async function park(user: TestUser, queueId: string, lastEventId: number, extra: Record<string, unknown> = {}): Promise<{ reply: Promise<Reply> }> {
  const reply = t.api(user, 'GET', '/events', { queue_id: queueId, last_event_id: lastEventId, ...extra }) as Promise<Reply>;
  for (let i = 0; i < 200 && !t.app.queues.access(user.id, queueId).parked; i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(t.app.queues.access(user.id, queueId).parked, 'the poll never parked');
  return { reply };
}

/** The reply is exactly the JSON of its parsed body (key order included), and a success. */
function exact(res: Reply): any {
  assert.equal(res.status, 200, res.text);
  assert.equal(res.text, JSON.stringify(res.body));
  assert.equal(res.body.result, 'success');
  return res.body;
}

describe('GET /events fan-out of one message to parked polls', () => {
  it('gives each recipient its own flags, event id and queue id, around the same message payload', async () => {
    const { hamlet, othello, admin } = t.users;
    const channel = await createChannel(t, hamlet, 'fan-out flags', [hamlet, othello, admin]);
    const qOthello = await register(othello, { apply_markdown: true });
    // Othello's queue already served one event, so its next event id is 1; admin's queue starts at 0.
    const first = await t.api(hamlet, 'POST', '/messages', { type: 'channel', to: channel, topic: 'fan', content: 'first' });
    assert.equal(first.status, 200, first.text);
    const qAdmin = await register(admin, { apply_markdown: true });
    const qHamlet = await register(hamlet, { apply_markdown: true });
    const got = exact((await t.api(othello, 'GET', '/events', { queue_id: qOthello, last_event_id: -1, dont_block: true })) as Reply);
    assert.deepEqual(got.events.map((e: any) => [e.id, e.message.id]), [[0, first.body.id]]);

    const pOthello = await park(othello, qOthello, 0);
    const pAdmin = await park(admin, qAdmin, -1);
    const pHamlet = await park(hamlet, qHamlet, -1, { unused_param: 1 });
    const sent = await t.api(hamlet, 'POST', '/messages', {
      type: 'channel', to: channel, topic: 'fan', content: 'hello @**Othello**', queue_id: qHamlet, local_id: '7.01',
    });
    assert.equal(sent.status, 200, sent.text);
    const [rOthello, rAdmin, rHamlet] = (await Promise.all([pOthello.reply, pAdmin.reply, pHamlet.reply])).map(exact);

    assert.deepEqual(Object.keys(rOthello), ['result', 'msg', 'events', 'queue_id']);
    assert.equal(rOthello.queue_id, qOthello);
    assert.equal(rAdmin.queue_id, qAdmin);
    assert.equal(rHamlet.queue_id, qHamlet);
    // A parameter the route does not know is still reported on a parked poll's reply.
    assert.deepEqual(rHamlet.ignored_parameters_unsupported, ['unused_param']);
    assert.deepEqual(rOthello.events.map((e: any) => [Object.keys(e), e.id, e.flags]), [[['type', 'message', 'flags', 'id'], 1, ['mentioned']]]);
    assert.deepEqual(rAdmin.events.map((e: any) => [Object.keys(e), e.id, e.flags]), [[['type', 'message', 'flags', 'id'], 0, []]]);
    // Only the sender's queue gets the local echo id, before the event id.
    assert.deepEqual(rHamlet.events.map((e: any) => [Object.keys(e), e.id, e.flags, e.local_message_id]), [
      [['type', 'message', 'flags', 'local_message_id', 'id'], 0, ['read'], '7.01'],
    ]);
    const message = rOthello.events[0].message;
    assert.equal(message.id, sent.body.id);
    assert.equal(message.content, '<p>hello <span class="user-mention" data-user-id="' + othello.id + '">@Othello</span></p>');
    assert.deepEqual(rAdmin.events[0].message, message);
    assert.deepEqual(rHamlet.events[0].message, message);
  });

  it('gives clients with and without apply_markdown and empty_topic_name their own variant of the message', async () => {
    const { hamlet, othello } = t.users;
    const channel = await createChannel(t, hamlet, 'fan-out variants', [hamlet, othello]);
    const caps = (empty: boolean) => ({ client_capabilities: { notification_settings_null: false, empty_topic_name: empty } });
    const queues = {
      htmlModern: await register(othello, { apply_markdown: true, ...caps(true) }),
      htmlLegacy: await register(othello, { apply_markdown: true, ...caps(false) }),
      rawModern: await register(othello, { apply_markdown: false, ...caps(true) }),
      htmlModern2: await register(hamlet, { apply_markdown: true, ...caps(true) }),
    };
    const parked = Object.fromEntries(
      await Promise.all(Object.entries(queues).map(async ([k, q]) => [k, await park(k === 'htmlModern2' ? hamlet : othello, q, -1)] as const)),
    );
    const sent = await t.api(hamlet, 'POST', '/messages', { type: 'channel', to: channel, topic: '', content: '**bold**' });
    assert.equal(sent.status, 200, sent.text);
    const got: Record<string, any> = {};
    for (const [k, p] of Object.entries(parked)) {
      const body = exact(await p.reply);
      assert.equal(body.queue_id, queues[k as keyof typeof queues]);
      assert.equal(body.events.length, 1);
      got[k] = body.events[0];
    }
    assert.equal(got.htmlModern.message.subject, '');
    assert.equal(got.htmlModern.message.content, '<p><strong>bold</strong></p>');
    assert.equal(got.htmlModern.message.content_type, 'text/html');
    assert.equal(got.htmlLegacy.message.subject, 'general chat');
    assert.deepEqual({ ...got.htmlLegacy.message, subject: '' }, got.htmlModern.message);
    assert.equal(got.rawModern.message.subject, '');
    assert.equal(got.rawModern.message.content, '**bold**');
    assert.equal(got.rawModern.message.content_type, 'text/x-markdown');
    assert.deepEqual(got.htmlModern2.message, got.htmlModern.message);
    assert.deepEqual([got.htmlModern.flags, got.htmlModern2.flags], [[], ['read']]);
  });

  it('answers a poll that finds several events waiting with all of them, ids ascending, exactly as JSON', async () => {
    const { hamlet, othello } = t.users;
    const channel = await createChannel(t, hamlet, 'fan-out backlog', [hamlet, othello]);
    const q = await register(othello, { event_types: ['message', 'subscription'] });
    for (const content of ['one', 'two', 'three']) {
      const r = await t.api(hamlet, 'POST', '/messages', { type: 'channel', to: channel, topic: 't', content });
      assert.equal(r.status, 200, r.text);
    }
    const body = exact((await t.api(othello, 'GET', '/events', { queue_id: q, last_event_id: 0 })) as Reply);
    assert.deepEqual(Object.keys(body), ['result', 'msg', 'events']);
    assert.deepEqual(body.events.map((e: any) => [e.id, e.message.content]), [[1, 'two'], [2, 'three']]);
  });
});
