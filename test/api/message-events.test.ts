// Events of the channels-and-messages area, observed over the wire (POST /register, GET /events): each
// reaches the users allowed to see it, and not the others.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, sendDirect, sendToChannel } from '../helpers/chat';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

type Ev = Record<string, any>;

/** A registered queue that hands out the events that arrived since the last look. */
class Q {
  private last = -1;
  constructor(
    readonly user: TestUser,
    readonly id: string,
    readonly state: Record<string, any>,
  ) {}
  static async open(user: TestUser, params: Record<string, unknown> = {}): Promise<Q> {
    const res = await t.api(user, 'POST', '/register', { fetch_event_types: [], ...params });
    assert.equal(res.status, 200, res.text);
    return new Q(user, res.body.queue_id, res.body);
  }
  async next(): Promise<Ev[]> {
    const res = await t.api(this.user, 'GET', '/events', { queue_id: this.id, last_event_id: this.last, dont_block: true });
    assert.equal(res.status, 200, res.text);
    const events = res.body.events as Ev[];
    if (events.length) this.last = events[events.length - 1].id;
    return events.filter((e) => e.type !== 'heartbeat').map(({ id: _id, ...e }) => e);
  }
  async types(): Promise<string[]> {
    return (await this.next()).map((e) => (e.op ? `${e.type}:${e.op}` : e.type));
  }
}

const ok = async (p: Promise<{ status: number; text: string; body: any }>) => {
  const res = await p;
  assert.equal(res.status, 200, res.text);
  return res.body;
};

describe('message events', () => {
  it('a channel message reaches its subscribers with their own flags; local_message_id only on the sending queue', async () => {
    const { hamlet, othello, moderator, guest } = t.users;
    const c = await createChannel(t, hamlet, 'ev public', [hamlet, othello]);
    const [qh, qh2, qo, qoRaw, qm, qmAll, qg] = await Promise.all([
      Q.open(hamlet),
      Q.open(hamlet),
      Q.open(othello, { apply_markdown: true }),
      Q.open(othello, { apply_markdown: false }),
      Q.open(moderator),
      Q.open(moderator, { all_public_streams: true }),
      Q.open(guest),
    ]);
    const { id } = await ok(
      t.api(hamlet, 'POST', '/messages', { type: 'channel', to: c, topic: 'hi', content: 'ping @**Othello**', queue_id: qh.id, local_id: '1.01' }),
    );
    // As Zulip's do_send_messages: hamlet follows the topic he started, othello the one he is mentioned
    // in (the default automatic settings), and those events (the legacy muted_topics, then user_topic:
    // these queues asked for every type) come before the message.
    const followed = (e: Ev) => ({ type: e.type, stream_id: e.stream_id, topic_name: e.topic_name, visibility_policy: e.visibility_policy });
    const hEvents = await qh.next();
    assert.deepEqual(hEvents.map((e) => e.type), ['muted_topics', 'user_topic', 'message']);
    assert.deepEqual(followed(hEvents[1]), { type: 'user_topic', stream_id: c, topic_name: 'hi', visibility_policy: 3 });
    const eh = hEvents[2];
    assert.equal(eh.local_message_id, '1.01');
    assert.deepEqual(eh.flags, ['read']);
    assert.equal(eh.message.id, id);
    const [, , eh2] = await qh2.next();
    assert.equal('local_message_id' in eh2, false);
    const oEvents = await qo.next();
    assert.deepEqual(oEvents.map((e) => e.type), ['muted_topics', 'user_topic', 'message']);
    assert.deepEqual(followed(oEvents[1]), { type: 'user_topic', stream_id: c, topic_name: 'hi', visibility_policy: 3 });
    const eo = oEvents[2];
    assert.deepEqual(eo.flags, ['mentioned']);
    assert.equal(eo.message.content_type, 'text/html');
    assert.match(eo.message.content, /^<p>ping <span class="user-mention" data-user-id="\d+">@Othello<\/span><\/p>$/);
    const [, , eoRaw] = await qoRaw.next();
    assert.deepEqual([eoRaw.message.content, eoRaw.message.content_type], ['ping @**Othello**', 'text/x-markdown']);
    for (const e of [eh, eh2, eo, eoRaw]) for (const k of ['sender_queue_id', 'flags_by_user', 'raw_content', 'public_stream_realm_id']) assert.equal(k in e, false, k);
    assert.deepEqual(await qm.next(), [], 'not subscribed');
    const [em] = await qmAll.next();
    assert.deepEqual([em.message.id, em.flags], [id, []], 'all_public_streams sees public channels');
    assert.deepEqual(await qg.next(), [], 'guest not subscribed');
  });

  it('a private channel message reaches only subscribers: not an administrator, a guest or all_public_streams', async () => {
    const { hamlet, othello, admin, guest, moderator } = t.users;
    const c = await createChannel(t, hamlet, 'ev private', [hamlet, othello], { invite_only: true });
    const [qo, qa, qaAll, qg, qm] = await Promise.all([Q.open(othello), Q.open(admin), Q.open(admin, { all_public_streams: true }), Q.open(guest), Q.open(moderator)]);
    await sendToChannel(t, hamlet, c, 'secret', 'hush');
    assert.deepEqual(await qo.types(), ['message']);
    for (const q of [qa, qaAll, qg, qm]) assert.deepEqual(await q.next(), [], q.user.email);
  });

  it('a direct message reaches its participants only', async () => {
    const { hamlet, othello, admin, guest } = t.users;
    const [qh, qo, qa, qg] = await Promise.all([Q.open(hamlet), Q.open(othello), Q.open(admin), Q.open(guest)]);
    const id = await sendDirect(t, hamlet, [guest], 'psst');
    assert.deepEqual((await qh.next()).map((e) => [e.message.id, e.flags]), [[id, ['read']]]);
    assert.deepEqual((await qg.next()).map((e) => [e.message.id, e.flags]), [[id, []]]);
    assert.deepEqual(await qo.next(), []);
    assert.deepEqual(await qa.next(), []);
  });
});

describe('update_message, delete_message, reaction, update_message_flags', () => {
  it('go to the users holding the message and not to others', async () => {
    const { hamlet, othello, moderator, guest } = t.users;
    const c = await createChannel(t, hamlet, 'ev edits', [hamlet, othello]);
    const id = await sendToChannel(t, hamlet, c, 'topic a', 'first');
    const [qh, qo, qm, qg] = await Promise.all([Q.open(hamlet), Q.open(othello), Q.open(moderator), Q.open(guest)]);
    await ok(t.api(hamlet, 'PATCH', `/messages/${id}`, { content: 'second' }));
    const [uo] = await qo.next();
    assert.equal(uo.type, 'update_message');
    assert.deepEqual([uo.message_id, uo.message_ids, uo.orig_content, uo.content, uo.stream_id], [id, [id], 'first', 'second', c]);
    assert.deepEqual(uo.flags, []);
    assert.deepEqual((await qh.next()).map((e) => [e.type, e.flags]), [['update_message', ['read']]]);
    await ok(t.api(othello, 'POST', `/messages/${id}/reactions`, { emoji_name: 'smile' }));
    await ok(t.api(othello, 'DELETE', `/messages/${id}/reactions`, { emoji_name: 'smile' }));
    const reactions = (await qh.next()).map((e) => [e.type, e.op, e.message_id, e.user_id, e.emoji_name, e.reaction_type]);
    assert.deepEqual(reactions, [
      ['reaction', 'add', id, othello.id, 'smile', 'unicode_emoji'],
      ['reaction', 'remove', id, othello.id, 'smile', 'unicode_emoji'],
    ]);
    assert.deepEqual(await qo.types(), ['reaction:add', 'reaction:remove']);
    await ok(t.api(othello, 'POST', '/messages/flags', { messages: [id], op: 'add', flag: 'starred' }));
    assert.deepEqual(await qo.next(), [{ type: 'update_message_flags', op: 'add', operation: 'add', flag: 'starred', messages: [id], all: false }]);
    assert.deepEqual(await qh.next(), [], 'flags are personal');
    for (const q of [qm, qg]) assert.deepEqual(await q.next(), [], q.user.email);
  });

  it('delete_message comes in bulk form or one event per message, per bulk_message_deletion', async () => {
    const { hamlet, othello, moderator } = t.users;
    const c = await createChannel(t, hamlet, 'ev deletes', [hamlet, othello]);
    const id = await sendToChannel(t, hamlet, c, 'gone', 'bye');
    const id2 = await sendToChannel(t, hamlet, c, 'gone', 'bye too');
    const [bulk, legacy, qm] = await Promise.all([
      Q.open(othello, { client_capabilities: { notification_settings_null: false, bulk_message_deletion: true } }),
      Q.open(othello),
      Q.open(moderator),
    ]);
    await ok(t.api(hamlet, 'DELETE', `/messages/${id}`));
    await ok(t.api(hamlet, 'DELETE', `/messages/${id2}`));
    // The channel's oldest message went too: a stream update with the new first_message_id follows.
    const firstIdUpdate = (value: number | null) => ({ type: 'stream', op: 'update', property: 'first_message_id', value, stream_id: c, name: 'ev deletes' });
    assert.deepEqual(await bulk.next(), [
      { type: 'delete_message', message_ids: [id], message_type: 'stream', stream_id: c, topic: 'gone' },
      firstIdUpdate(id2),
      { type: 'delete_message', message_ids: [id2], message_type: 'stream', stream_id: c, topic: 'gone' },
      firstIdUpdate(null),
    ]);
    assert.deepEqual((await legacy.next()).filter((e) => e.type === 'delete_message'), [
      { type: 'delete_message', message_id: id, message_type: 'stream', stream_id: c, topic: 'gone' },
      { type: 'delete_message', message_id: id2, message_type: 'stream', stream_id: c, topic: 'gone' },
    ]);
    assert.deepEqual(await qm.types(), ['stream:update', 'stream:update'], 'a non-subscriber sees the public channel change, not the messages');
  });
});

describe('subscription and stream events', () => {
  it('add, peer_add, update (is_muted twice), peer_remove, remove go to the right users', async () => {
    const { hamlet, othello, moderator, guest } = t.users;
    const c = await createChannel(t, hamlet, 'ev subs', [hamlet]);
    const [qh, qo, qm, qg] = await Promise.all([Q.open(hamlet), Q.open(othello), Q.open(moderator), Q.open(guest)]);
    await ok(t.api(othello, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'ev subs' }] }));
    const [add] = await qo.next();
    assert.deepEqual([add.type, add.op, add.subscriptions.map((s: Ev) => s.stream_id)], ['subscription', 'add', [c]]);
    assert.deepEqual(await qh.next(), [{ type: 'subscription', op: 'peer_add', stream_ids: [c], user_ids: [othello.id] }]);
    assert.deepEqual(await qm.next(), [{ type: 'subscription', op: 'peer_add', stream_ids: [c], user_ids: [othello.id] }], 'public channel: every member');
    assert.deepEqual(await qg.next(), [], 'guests do not see public channels they are not in');
    await ok(t.api(othello, 'POST', '/users/me/subscriptions/properties', { subscription_data: [{ stream_id: c, property: 'is_muted', value: true }] }));
    assert.deepEqual(await qo.next(), [
      { type: 'subscription', op: 'update', stream_id: c, property: 'in_home_view', value: false },
      { type: 'subscription', op: 'update', stream_id: c, property: 'is_muted', value: true },
    ]);
    assert.deepEqual(await qh.next(), [], 'own property');
    await ok(t.api(othello, 'DELETE', '/users/me/subscriptions', { subscriptions: ['ev subs'] }));
    const [rm] = await qo.next();
    assert.deepEqual([rm.type, rm.op, rm.subscriptions.map((s: Ev) => s.stream_id)], ['subscription', 'remove', [c]]);
    assert.deepEqual(await qh.next(), [{ type: 'subscription', op: 'peer_remove', stream_ids: [c], user_ids: [othello.id] }]);
  });

  it('peer events of a private channel reach its subscribers and administrators only', async () => {
    const { hamlet, othello, moderator, admin } = t.users;
    const c = await createChannel(t, hamlet, 'ev private subs', [hamlet], { invite_only: true });
    const [qh, qm, qa] = await Promise.all([Q.open(hamlet), Q.open(moderator), Q.open(admin)]);
    await ok(
      t.api(hamlet, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'ev private subs' }], principals: [othello.id], send_new_subscription_messages: false }),
    );
    assert.deepEqual(await qh.next(), [{ type: 'subscription', op: 'peer_add', stream_ids: [c], user_ids: [othello.id] }]);
    assert.deepEqual(await qa.types(), ['subscription:peer_add']);
    assert.deepEqual(await qm.next(), []);
  });

  it('stream create, update and delete: public to every member, private only to those who may see it', async () => {
    const { hamlet, othello, guest, admin } = t.users;
    const [qo, qg, qa] = await Promise.all([Q.open(othello), Q.open(guest), Q.open(admin)]);
    const pub = await createChannel(t, hamlet, 'ev created', [hamlet]);
    const [created] = await qo.next();
    assert.deepEqual([created.type, created.op, created.streams.map((s: Ev) => s.stream_id)], ['stream', 'create', [pub]]);
    assert.deepEqual(await qg.next(), []);
    await ok(t.api(hamlet, 'PATCH', `/streams/${pub}`, { description: 'about' }));
    assert.deepEqual(await qo.next(), [
      { type: 'stream', op: 'update', stream_id: pub, name: 'ev created', property: 'description', value: 'about', rendered_description: '<p>about</p>' },
    ]);
    await ok(t.api(admin, 'DELETE', `/streams/${pub}`));
    assert.deepEqual(await qo.types(), ['stream:delete']);
    const secret = await createChannel(t, hamlet, 'ev created secret', [hamlet], { invite_only: true });
    assert.deepEqual(await qo.next(), [], 'private channel');
    assert.ok((await qa.types()).includes('stream:create'));
    assert.ok((await qa.next()).length === 0);
    assert.equal(typeof secret, 'number');
  });
});

// ---- the same state two ways ------------------------------------------------------------------------

/** Applies subscription and stream events to a register response's `subscriptions`, as a client does. */
function applySubscriptions(subs: Ev[], events: Ev[]): Ev[] {
  let out = subs.map((s) => ({ ...s }));
  for (const e of events) {
    if (e.type === 'subscription' && e.op === 'add') out.push(...e.subscriptions.map((s: Ev) => ({ ...s })));
    else if (e.type === 'subscription' && e.op === 'remove') out = out.filter((s) => !e.subscriptions.some((r: Ev) => r.stream_id === s.stream_id));
    else if (e.type === 'subscription' && e.op === 'update') {
      for (const s of out) if (s.stream_id === e.stream_id) s[e.property] = e.value;
    } else if (e.type === 'subscription' && (e.op === 'peer_add' || e.op === 'peer_remove')) {
      for (const s of out) {
        if (!e.stream_ids.includes(s.stream_id)) continue;
        s.subscriber_count += (e.op === 'peer_add' ? 1 : -1) * e.user_ids.length;
      }
    } else if (e.type === 'stream' && e.op === 'update') {
      for (const s of out) {
        if (s.stream_id !== e.stream_id) continue;
        s[e.property] = e.value;
        if ('rendered_description' in e) s.rendered_description = e.rendered_description;
      }
    } else if (e.type === 'message' && e.message.type === 'stream') {
      for (const s of out) if (s.stream_id === e.message.stream_id && s.first_message_id === null) s.first_message_id = e.message.id;
    }
  }
  return out.sort((a, b) => a.stream_id - b.stream_id);
}

/** Applies message, flag and deletion events to unread_msgs, keeping the parts a client keeps. */
function applyUnread(unread: Ev, events: Ev[], mutedStreams: Set<number>): Ev {
  const streams = new Map<string, Ev>();
  for (const s of unread.streams) streams.set(`${s.stream_id}\u0000${s.topic}`, { ...s, unread_message_ids: [...s.unread_message_ids] });
  const pms = new Map<number, number[]>();
  for (const p of unread.pms) pms.set(p.other_user_id, [...p.unread_message_ids]);
  const mentions = new Set<number>(unread.mentions);
  const where = new Map<number, { key: string; pm?: number }>();
  for (const [key, s] of streams) for (const id of s.unread_message_ids) where.set(id, { key });
  for (const [uid, ids] of pms) for (const id of ids) where.set(id, { key: '', pm: uid });
  const add = (id: number, m: Ev, mentioned: boolean, self: number) => {
    if (m.type === 'stream') {
      const key = `${m.stream_id}\u0000${m.subject}`;
      const s = streams.get(key) ?? { stream_id: m.stream_id, topic: m.subject, unread_message_ids: [] };
      s.unread_message_ids.push(id);
      streams.set(key, s);
      where.set(id, { key });
    } else {
      const other = m.display_recipient.find((r: Ev) => r.id !== self)?.id ?? self;
      pms.set(other, [...(pms.get(other) ?? []), id]);
      where.set(id, { key: '', pm: other });
    }
    if (mentioned) mentions.add(id);
  };
  const drop = (id: number) => {
    const w = where.get(id);
    if (!w) return;
    if (w.pm !== undefined) pms.set(w.pm, (pms.get(w.pm) ?? []).filter((x) => x !== id));
    else {
      const s = streams.get(w.key) as Ev;
      s.unread_message_ids = s.unread_message_ids.filter((x: number) => x !== id);
    }
    where.delete(id);
    mentions.delete(id);
  };
  const self = unread.self as number;
  const messages = new Map<number, Ev>();
  for (const e of events) {
    if (e.type === 'message') {
      messages.set(e.message.id, e.message);
      if (!e.flags.includes('read')) add(e.message.id, e.message, e.flags.includes('mentioned'), self);
    } else if (e.type === 'update_message_flags' && e.flag === 'read') {
      if (e.op === 'add') for (const id of e.messages) drop(id);
      else for (const id of e.messages) {
        const d = e.message_details[id];
        const m = d.type === 'stream' ? { type: 'stream', stream_id: d.stream_id, subject: d.topic } : { type: 'private', display_recipient: [{ id: d.user_ids[0] ?? self }] };
        add(id, m, !!d.mentioned, self);
      }
    } else if (e.type === 'delete_message') {
      for (const id of e.message_ids ?? [e.message_id]) drop(id);
    }
  }
  const norm = (ids: number[]) => [...ids].sort((a, b) => a - b);
  return {
    streams: [...streams.values()]
      .filter((s) => s.unread_message_ids.length)
      .map((s) => ({ stream_id: s.stream_id, topic: s.topic, unread_message_ids: norm(s.unread_message_ids) }))
      .sort((a, b) => a.stream_id - b.stream_id || a.topic.localeCompare(b.topic)),
    pms: [...pms.entries()].filter(([, ids]) => ids.length).map(([other_user_id, ids]) => ({ other_user_id, unread_message_ids: norm(ids) })).sort((a, b) => a.other_user_id - b.other_user_id),
    mentions: norm([...mentions]),
    // As Zulip's aggregate_unread_data: muted channels' messages are not counted.
    count: [...where.values()].filter((w) => w.pm !== undefined || !mutedStreams.has((streams.get(w.key) as Ev).stream_id)).length,
  };
}

function normalizeUnread(u: Ev): Ev {
  const norm = (ids: number[]) => [...ids].sort((a, b) => a - b);
  return {
    streams: u.streams
      .map((s: Ev) => ({ stream_id: s.stream_id, topic: s.topic, unread_message_ids: norm(s.unread_message_ids) }))
      .sort((a: Ev, b: Ev) => a.stream_id - b.stream_id || a.topic.localeCompare(b.topic)),
    pms: u.pms.map((p: Ev) => ({ other_user_id: p.other_user_id, unread_message_ids: norm(p.unread_message_ids) })).sort((a: Ev, b: Ev) => a.other_user_id - b.other_user_id),
    mentions: norm(u.mentions),
    count: u.count,
  };
}

describe('register state versus a fresh register after the events', () => {
  it('subscriptions and unread_msgs come out the same both ways', async () => {
    const { hamlet, othello, moderator } = t.users;
    const fetch = { fetch_event_types: ['subscription', 'message', 'update_message_flags'], client_capabilities: { notification_settings_null: false, bulk_message_deletion: true, empty_topic_name: true } };
    const before = await Q.open(othello, fetch);
    const c1 = await createChannel(t, hamlet, 'ev state one', [hamlet, othello]);
    const c2 = await createChannel(t, hamlet, 'ev state two', [hamlet]);
    const m1 = await sendToChannel(t, hamlet, c1, 'alpha', 'one @**Othello**');
    await sendToChannel(t, hamlet, c1, 'beta', 'two');
    const m3 = await sendDirect(t, hamlet, [othello], 'three');
    await sendDirect(t, moderator, [othello, hamlet], 'group');
    await ok(t.api(othello, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'ev state two' }] }));
    await sendToChannel(t, hamlet, c2, 'gamma', 'four');
    await ok(t.api(othello, 'POST', '/messages/flags', { messages: [m1, m3], op: 'add', flag: 'read' }));
    await ok(t.api(othello, 'POST', '/messages/flags', { messages: [m3], op: 'remove', flag: 'read' }));
    await ok(t.api(othello, 'POST', '/users/me/subscriptions/properties', { subscription_data: [{ stream_id: c2, property: 'pin_to_top', value: true }, { stream_id: c1, property: 'in_home_view', value: false }] }));
    await ok(t.api(hamlet, 'PATCH', `/streams/${c1}`, { description: 'changed' }));
    await ok(t.api(moderator, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'ev state one' }] }));
    const gone = await sendToChannel(t, hamlet, c1, 'beta', 'deleted soon');
    await ok(t.api(hamlet, 'DELETE', `/messages/${gone}`));
    const events = await before.next();
    const fresh = await Q.open(othello, fetch);
    const key = (s: Ev) => ({ ...s, subscribers: undefined });
    assert.deepEqual(applySubscriptions(before.state.subscriptions, events).map(key), [...fresh.state.subscriptions].sort((a: Ev, b: Ev) => a.stream_id - b.stream_id).map(key));
    const unreadBefore = { ...before.state.unread_msgs, self: othello.id };
    // The group conversation is not in pms: that part of unread_msgs is huddles (not replayed here).
    const muted = new Set<number>(fresh.state.subscriptions.filter((s: Ev) => s.is_muted).map((s: Ev) => s.stream_id));
    assert.ok(muted.has(c1));
    const replayed = applyUnread(
      unreadBefore,
      events.filter((e) => !(e.type === 'message' && e.message.type === 'private' && e.message.display_recipient.length > 2)),
      muted,
    );
    const freshUnread = normalizeUnread(fresh.state.unread_msgs);
    const huddleCount = fresh.state.unread_msgs.huddles.reduce((n: number, h: Ev) => n + h.unread_message_ids.length, 0);
    assert.equal(huddleCount, 1);
    assert.deepEqual(replayed, { ...freshUnread, count: freshUnread.count - huddleCount });
  });
});
