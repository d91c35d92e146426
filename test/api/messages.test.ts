import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server';
import { createChannel, err, ids, sendDirect, sendToChannel, SUCCESS } from '../helpers/chat';

const NOW = 1_700_000_000;
let t: TestServer;
let general: number;
before(async () => {
  t = await startTestServer({ clock: { nowMs: () => NOW * 1000 } });
  general = await createChannel(t, t.users.hamlet, 'general', [t.users.hamlet, t.users.othello, t.users.admin, t.users.owner, t.users.bot]);
});
after(() => t.close());

const MESSAGE_KEYS = [
  'avatar_url',
  'client',
  'content',
  'content_type',
  'display_recipient',
  'flags',
  'id',
  'is_me_message',
  'reactions',
  'recipient_id',
  'sender_email',
  'sender_full_name',
  'sender_id',
  'sender_realm_str',
  'subject',
  'submessages',
  'timestamp',
  'topic_links',
  'type',
];

async function getMessage(id: number, user = t.users.hamlet, params: Record<string, unknown> = {}) {
  const res = await t.api(user, 'GET', `/messages/${id}`, params);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

describe('POST /messages', () => {
  it('sends to a channel by id and answers {id}; the message reads back whole', async () => {
    const u = t.users;
    const res = await t.api(u.hamlet, 'POST', '/messages', { type: 'channel', to: general, topic: 'greetings', content: 'hello **world**' });
    assert.equal(res.status, 200, res.text);
    // hamlet started the topic: he follows it (his default automatically_follow_topics_policy).
    assert.deepEqual(res.body, { result: 'success', msg: '', id: res.body.id, automatic_new_visibility_policy: 3 });
    const body = await getMessage(res.body.id, u.othello);
    assert.deepEqual(Object.keys(body).sort(), ['message', 'msg', 'raw_content', 'result']);
    assert.equal(body.raw_content, 'hello **world**');
    const m = body.message;
    assert.deepEqual(Object.keys(m).sort(), [...MESSAGE_KEYS, 'stream_id'].sort());
    assert.deepEqual(
      { ...m, avatar_url: typeof m.avatar_url, client: typeof m.client },
      {
        id: res.body.id,
        sender_id: u.hamlet.id,
        content: '<p>hello <strong>world</strong></p>',
        recipient_id: m.recipient_id,
        timestamp: NOW,
        client: 'string',
        subject: 'greetings',
        topic_links: [],
        is_me_message: false,
        reactions: [],
        submessages: [],
        sender_full_name: 'King Hamlet',
        sender_email: u.hamlet.email,
        sender_realm_str: '',
        // GET /messages/{id} answers as client_gravatar (Zulip's json_fetch_raw_message): null for a
        // gravatar avatar.
        avatar_url: 'object',
        content_type: 'text/html',
        type: 'stream',
        stream_id: general,
        display_recipient: 'general',
        flags: [],
      },
    );
    const raw = await getMessage(res.body.id, u.othello, { apply_markdown: false });
    assert.equal(raw.message.content, 'hello **world**');
    assert.equal(raw.message.content_type, 'text/x-markdown');
    assert.deepEqual((await getMessage(res.body.id, u.hamlet)).message.flags, ['read']);
  });

  it('addresses a channel by name, by JSON-encoded id and by a one-element JSON list; "stream" means "channel"', async () => {
    const u = t.users;
    for (const params of [
      { type: 'channel', to: 'general' },
      { type: 'stream', to: 'General' },
      { type: 'channel', to: JSON.stringify(general) },
      { type: 'stream', to: [general] },
      { type: 'channel', to: ['general'] },
    ]) {
      const res = await t.api(u.hamlet, 'POST', '/messages', { ...params, topic: 'addressing', content: 'x' });
      assert.equal(res.status, 200, `${JSON.stringify(params)}: ${res.text}`);
      assert.equal((await getMessage(res.body.id)).message.stream_id, general);
    }
  });

  it('answers STREAM_DOES_NOT_EXIST with stream_id or stream', async () => {
    let res = await t.api(t.users.hamlet, 'POST', '/messages', { type: 'channel', to: 99999, topic: 'x', content: 'x' });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, err("Channel with ID '99999' does not exist", 'STREAM_DOES_NOT_EXIST', { stream_id: 99999 }));
    res = await t.api(t.users.hamlet, 'POST', '/messages', { type: 'channel', to: 'nowhere', topic: 'x', content: 'x' });
    assert.deepEqual(res.body, err("Channel 'nowhere' does not exist", 'STREAM_DOES_NOT_EXIST', { stream: 'nowhere' }));
  });

  it('sends direct messages by ids, emails, and comma-separated emails; "private" means "direct"', async () => {
    const u = t.users;
    const forms: Record<string, unknown>[] = [
      { type: 'direct', to: [u.othello.id] },
      { type: 'private', to: [u.othello.email] },
      { type: 'direct', to: `${u.othello.email}` },
      { type: 'direct', to: `${u.othello.email}, ${u.admin.email}` },
    ];
    const sent: number[] = [];
    for (const f of forms) {
      const res = await t.api(u.hamlet, 'POST', '/messages', { ...f, content: 'psst' });
      assert.equal(res.status, 200, `${JSON.stringify(f)}: ${res.text}`);
      sent.push(res.body.id);
    }
    const m = (await getMessage(sent[0], u.othello)).message;
    assert.deepEqual(Object.keys(m).sort(), MESSAGE_KEYS);
    assert.equal(m.type, 'private');
    assert.equal(m.subject, '');
    assert.deepEqual(m.display_recipient, [
      { id: u.hamlet.id, email: u.hamlet.email, full_name: 'King Hamlet', is_mirror_dummy: false },
      { id: u.othello.id, email: u.othello.email, full_name: 'Othello', is_mirror_dummy: false },
    ]);
    assert.deepEqual(m.flags, []);
    // Same conversation, same recipient_id.
    assert.equal((await getMessage(sent[1], u.othello)).message.recipient_id, m.recipient_id);
    const group = (await getMessage(sent[3], u.admin)).message;
    assert.deepEqual(
      group.display_recipient.map((r: { id: number }) => r.id),
      [u.admin.id, u.hamlet.id, u.othello.id].sort((a, b) => a - b),
    );
    // Not a recipient: not visible.
    const res = await t.api(u.moderator, 'GET', `/messages/${sent[0]}`);
    assert.deepEqual(res.body, err('Invalid message(s)'));
  });

  it('validates direct-message recipients', async () => {
    const cases: [unknown, string][] = [
      [[99999], 'Invalid user ID 99999'],
      [['ghost@example.com'], "Invalid email 'ghost@example.com'"],
      [[], 'Message must have recipients'],
    ];
    for (const [to, msg] of cases) {
      const res = await t.api(t.users.hamlet, 'POST', '/messages', { type: 'direct', to, content: 'x' });
      assert.equal(res.status, 400, msg);
      assert.deepEqual(res.body, err(msg));
    }
  });

  it('truncates content over 10000 characters and topics over 60', async () => {
    const content = 'a'.repeat(10001);
    const topic = 't'.repeat(61);
    const res = await t.api(t.users.hamlet, 'POST', '/messages', { type: 'channel', to: general, topic, content });
    assert.equal(res.status, 200, res.text);
    const body = await getMessage(res.body.id, t.users.hamlet, { apply_markdown: false });
    const notice = '\n[message truncated]';
    assert.equal(body.raw_content, 'a'.repeat(10000 - notice.length) + notice);
    assert.equal(body.raw_content.length, 10000);
    assert.equal(body.message.subject, 't'.repeat(57) + '...');
    // Exactly at the limits: unchanged.
    const exact = await t.api(t.users.hamlet, 'POST', '/messages', { type: 'channel', to: general, topic: 'u'.repeat(60), content: 'b'.repeat(10000) });
    const back = await getMessage(exact.body.id);
    assert.equal(back.raw_content, 'b'.repeat(10000));
    assert.equal(back.message.subject, 'u'.repeat(60));
  });

  it('refuses empty content and missing parameters', async () => {
    let res = await t.api(t.users.hamlet, 'POST', '/messages', { type: 'channel', to: general, topic: 'x', content: '   ' });
    assert.deepEqual(res.body, err('Message must not be empty'));
    res = await t.api(t.users.hamlet, 'POST', '/messages', { type: 'channel', to: general, topic: 'x' });
    assert.deepEqual(res.body, err("Missing 'content' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'content' }));
    res = await t.api(t.users.hamlet, 'POST', '/messages', { type: 'carrier-pigeon', to: general, topic: 'x', content: 'x' });
    assert.deepEqual(res.body, err('Invalid type'));
  });

  it('follows topics_policy: the empty topic is "general chat"; disable_empty_topic and empty_topic_only', async () => {
    const u = t.users;
    let res = await t.api(u.hamlet, 'POST', '/messages', { type: 'channel', to: general, topic: 'general chat', content: 'x' });
    assert.equal((await getMessage(res.body.id, u.hamlet, { allow_empty_topic_name: true })).message.subject, '');
    // Without allow_empty_topic_name the empty topic reads as the display name.
    assert.equal((await getMessage(res.body.id)).message.subject, 'general chat');
    // GET /messages too, by the same parameter.
    const listed = async (allow: boolean) => {
      const r = await t.api(u.hamlet, 'GET', '/messages', { message_ids: [res.body.id], allow_empty_topic_name: allow });
      assert.equal(r.status, 200, r.text);
      return r.body.messages.map((m: { subject: string }) => m.subject);
    };
    assert.deepEqual(await listed(false), ['general chat']);
    assert.deepEqual(await listed(true), ['']);
    res = await t.api(u.hamlet, 'POST', '/messages', { type: 'channel', to: general, content: 'no topic given' });
    assert.equal(res.status, 200, res.text);
    assert.equal((await getMessage(res.body.id, u.hamlet, { allow_empty_topic_name: true })).message.subject, '');
    const strict = await createChannel(t, u.moderator, 'strict-topics', [u.hamlet], { topics_policy: 'disable_empty_topic' });
    res = await t.api(u.hamlet, 'POST', '/messages', { type: 'channel', to: strict, topic: '', content: 'x' });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, err('Sending messages to the general chat is not allowed in this channel.'));
    const only = await createChannel(t, u.admin, 'only-general', [u.hamlet], { topics_policy: 'empty_topic_only' });
    res = await t.api(u.hamlet, 'POST', '/messages', { type: 'channel', to: only, topic: 'named', content: 'x' });
    assert.equal(res.status, 400);
    res = await t.api(u.hamlet, 'POST', '/messages', { type: 'channel', to: only, topic: '', content: 'x' });
    assert.equal(res.status, 200, res.text);
  });

  it('refuses topics_policy from users outside can_set_topics_policy_group (role:members by default, as Zulip)', async () => {
    const res = await t.api(t.users.guest, 'POST', '/channels/create', { name: 'guest-policy', subscribers: [], topics_policy: 'disable_empty_topic' });
    assert.deepEqual(res.body, err('Not allowed for guest users'));
    const members = await t.api(t.users.hamlet, 'POST', '/channels/create', { name: 'member-policy', subscribers: [], topics_policy: 'disable_empty_topic' });
    assert.equal(members.status, 200, members.text);
    const admin = await t.api(t.users.admin, 'PATCH', '/realm', { can_set_topics_policy_group: JSON.stringify({ new: t.app.db.prepare("SELECT id FROM user_group WHERE name = 'role:moderators'").pluck().get() }) });
    assert.equal(admin.status, 200, admin.text);
    const res2 = await t.api(t.users.hamlet, 'POST', '/channels/create', { name: 'member-policy-2', subscribers: [], topics_policy: 'disable_empty_topic' });
    assert.deepEqual(res2.body, err('Insufficient permission'));
  });

  it('private channel, not subscribed: not authorized; the sending bot\'s owner counts', async () => {
    const u = t.users;
    await createChannel(t, u.othello, 'othello-only', [u.othello], { invite_only: true });
    let res = await t.api(u.hamlet, 'POST', '/messages', { type: 'channel', to: 'othello-only', topic: 'x', content: 'x' });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, err("Not authorized to send to channel 'othello-only'"));
    // Admins are not exempt either.
    res = await t.api(u.admin, 'POST', '/messages', { type: 'channel', to: 'othello-only', topic: 'x', content: 'x' });
    assert.deepEqual(res.body, err("Not authorized to send to channel 'othello-only'"));
  });

  it('honours can_send_message_group', async () => {
    const u = t.users;
    const id = await createChannel(t, u.owner, 'announce', [u.hamlet, u.owner], {
      can_send_message_group: { direct_members: [u.owner.id], direct_subgroups: [] },
    });
    let res = await t.api(u.hamlet, 'POST', '/messages', { type: 'channel', to: id, topic: 'x', content: 'x' });
    assert.deepEqual(res.body, err('You do not have permission to post in this channel.'));
    res = await t.api(u.owner, 'POST', '/messages', { type: 'channel', to: id, topic: 'x', content: 'x' });
    assert.equal(res.status, 200);
  });

  // Sends run without a savepoint once their checks pass (WriteBatch checksFirst): refused sends in
  // the same event-loop turn as accepted ones must leave those intact, and a refused direct message
  // must not leave a new direct-message group behind.
  it('refused sends beside accepted ones in the same turn: the accepted are all stored, the refused leave nothing', async () => {
    const u = t.users;
    const groupsBefore = t.app.db.prepare('SELECT count(*) AS n FROM direct_group').get() as { n: number };
    const results = await Promise.all([
      t.api(u.hamlet, 'POST', '/messages', { type: 'channel', to: general, topic: 'same turn', content: 'first' }),
      t.api(u.hamlet, 'POST', '/messages', { type: 'channel', to: 'no such channel', topic: 'same turn', content: 'refused' }),
      t.api(u.hamlet, 'POST', '/messages', { type: 'direct', to: JSON.stringify([u.othello.id, 99999]), content: 'refused' }),
      t.api(u.othello, 'POST', '/messages', { type: 'channel', to: general, topic: 'same turn', content: 'second' }),
    ]);
    assert.deepEqual(results.map((r) => r.status), [200, 400, 400, 200]);
    assert.deepEqual(results[1].body, { ...err("Channel 'no such channel' does not exist"), code: 'STREAM_DOES_NOT_EXIST', stream: 'no such channel' });
    assert.equal(results[2].body.result, 'error');
    for (const r of [results[0], results[3]]) {
      const m = await getMessage(r.body.id);
      assert.equal(m.message.subject, 'same turn');
    }
    assert.deepEqual(t.app.db.prepare('SELECT count(*) AS n FROM direct_group').get(), groupsBefore);
  });
});

describe('GET /messages', () => {
  let chan: number;
  let m: number[];
  before(async () => {
    chan = await createChannel(t, t.users.hamlet, 'window', [t.users.hamlet, t.users.othello]);
    m = [];
    for (let i = 0; i < 6; i++) m.push(await sendToChannel(t, t.users.hamlet, chan, 'w', `m${i}`));
  });
  const narrow = () => [{ operator: 'channel', operand: chan }];
  const fetch = async (params: Record<string, unknown>, user = t.users.othello) => {
    const res = await t.api(user, 'GET', '/messages', { narrow: narrow(), ...params });
    assert.equal(res.status, 200, res.text);
    return res.body;
  };
  const meta = (b: Record<string, unknown>) => ({
    ids: ids(b as never),
    anchor: b.anchor,
    found_anchor: b.found_anchor,
    found_oldest: b.found_oldest,
    found_newest: b.found_newest,
    history_limited: b.history_limited,
  });

  it('anchor newest', async () => {
    const b = await fetch({ anchor: 'newest', num_before: 3, num_after: 0 });
    assert.deepEqual(Object.keys(b).sort(), ['anchor', 'found_anchor', 'found_newest', 'found_oldest', 'history_limited', 'messages', 'msg', 'result']);
    assert.deepEqual(meta(b), { ids: m.slice(3), anchor: 10_000_000_000_000_000, found_anchor: false, found_oldest: false, found_newest: true, history_limited: false });
  });

  it('anchor oldest', async () => {
    const b = await fetch({ anchor: 'oldest', num_before: 0, num_after: 2 });
    assert.deepEqual(meta(b), { ids: m.slice(0, 2), anchor: 0, found_anchor: false, found_oldest: true, found_newest: false, history_limited: false });
  });

  it('anchor id, with and without the anchor', async () => {
    let b = await fetch({ anchor: String(m[2]), num_before: 1, num_after: 1 });
    assert.deepEqual(meta(b), { ids: m.slice(1, 4), anchor: m[2], found_anchor: true, found_oldest: false, found_newest: false, history_limited: false });
    b = await fetch({ anchor: String(m[2]), num_before: 0, num_after: 2, include_anchor: false });
    assert.deepEqual(meta(b), { ids: m.slice(3, 5), anchor: m[2], found_anchor: false, found_oldest: false, found_newest: false, history_limited: false });
    b = await fetch({ anchor: String(m[0]), num_before: 5, num_after: 10 });
    assert.deepEqual(meta(b), { ids: m, anchor: m[0], found_anchor: true, found_oldest: true, found_newest: true, history_limited: false });
  });

  it('anchor first_unread', async () => {
    // othello has read nothing: the first unread is the oldest.
    let b = await fetch({ anchor: 'first_unread', num_before: 0, num_after: 1 });
    assert.deepEqual(meta(b), { ids: [m[0], m[1]], anchor: m[0], found_anchor: true, found_oldest: false, found_newest: false, history_limited: false });
    // hamlet sent them all (read): first_unread falls back to newest.
    b = await fetch({ anchor: 'first_unread', num_before: 1, num_after: 0 }, t.users.hamlet);
    assert.deepEqual(meta(b), { ids: [m[5]], anchor: 10_000_000_000_000_000, found_anchor: false, found_oldest: false, found_newest: true, history_limited: false });
  });

  it('message_ids', async () => {
    const res = await t.api(t.users.othello, 'GET', '/messages', { message_ids: [m[4], m[1], 99999] });
    // As Zulip's get_messages_backend: no anchor, the found_* keys false.
    assert.deepEqual(Object.keys(res.body).sort(), ['found_anchor', 'found_newest', 'found_oldest', 'history_limited', 'messages', 'msg', 'result']);
    assert.deepEqual([res.body.found_anchor, res.body.found_oldest, res.body.found_newest, res.body.history_limited], [false, false, false, false]);
    assert.deepEqual(ids(res.body), [m[1], m[4]]);
    // Zero counts are no window: they go with message_ids.
    const zero = await t.api(t.users.othello, 'GET', '/messages', { message_ids: [m[1]], num_before: 0, num_after: 0 });
    assert.deepEqual(ids(zero.body), [m[1]]);
    const many = await t.api(t.users.othello, 'GET', '/messages', { message_ids: Array.from({ length: 5001 }, (_, i) => i + 1) });
    assert.deepEqual(many.body, err('Too many messages requested (maximum 5000).'));
    const clash = await t.api(t.users.othello, 'GET', '/messages', { message_ids: [m[1]], anchor: 'newest' });
    assert.deepEqual(
      clash.body,
      err('Unsupported parameter combination: num_before, num_after, anchor, message_ids, include_anchor, use_first_unread_anchor', 'BAD_REQUEST', {
        parameters: 'num_before, num_after, anchor, message_ids, include_anchor, use_first_unread_anchor',
      }),
    );
  });

  it('errors: too many, bad anchor, missing anchor, excluded anchor in the middle', async () => {
    const cases: [Record<string, unknown>, unknown][] = [
      [{ anchor: 'newest', num_before: 4000, num_after: 1001 }, err('Too many messages requested (maximum 5000).')],
      [{ anchor: 'sideways', num_before: 1, num_after: 1 }, err('Invalid anchor')],
      [{ num_before: 1, num_after: 1 }, err("Missing 'anchor' argument.")],
      [{ anchor: String(m[2]), num_before: 1, num_after: 1, include_anchor: false }, err('The anchor can only be excluded at an end of the range')],
      [{ anchor: 'newest', num_before: -1, num_after: 0 }, err('num_before is too small')],
    ];
    for (const [params, body] of cases) {
      const res = await t.api(t.users.othello, 'GET', '/messages', params);
      assert.equal(res.status, 400, JSON.stringify(params));
      assert.deepEqual(res.body, body, JSON.stringify(params));
    }
    const ok = await t.api(t.users.othello, 'GET', '/messages', { anchor: 'newest', num_before: 2500, num_after: 2500 });
    assert.equal(ok.status, 200);
    // num_before and num_after default to 0 (Zulip's get_messages_backend).
    const none = await t.api(t.users.othello, 'GET', '/messages', { anchor: 'newest' });
    assert.deepEqual(none.body, { ...SUCCESS, messages: [], anchor: 10_000_000_000_000_000, found_anchor: false, found_oldest: false, found_newest: true, history_limited: false });
  });
});

describe('PATCH /messages/{message_id}', () => {
  it('edits content: the sender only', async () => {
    const u = t.users;
    const id = await sendToChannel(t, u.hamlet, general, 'edits', 'first draft');
    let res = await t.api(u.othello, 'PATCH', `/messages/${id}`, { content: 'vandalised' });
    assert.deepEqual(res.body, err("You don't have permission to edit this message"));
    res = await t.api(u.admin, 'PATCH', `/messages/${id}`, { content: 'vandalised' });
    assert.deepEqual(res.body, err("You don't have permission to edit this message"));
    res = await t.api(u.hamlet, 'PATCH', `/messages/${id}`, { content: 'second draft' });
    assert.deepEqual(res.body, { ...SUCCESS, detached_uploads: [] });
    const m = await getMessage(id, u.othello);
    assert.equal(m.raw_content, 'second draft');
    assert.equal(m.message.content, '<p>second draft</p>');
    assert.equal(m.message.last_edit_timestamp, NOW);
    res = await t.api(u.hamlet, 'PATCH', `/messages/${id}`, {});
    assert.deepEqual(res.body, err('Nothing to change'));
    res = await t.api(u.hamlet, 'PATCH', '/messages/99999', { content: 'x' });
    assert.deepEqual(res.body, err('Invalid message(s)'));
  });

  it('renames topics with change_one, change_later and change_all', async () => {
    const u = t.users;
    const ch = await createChannel(t, u.hamlet, 'renames', [u.hamlet, u.othello]);
    const a = [];
    for (let i = 0; i < 4; i++) a.push(await sendToChannel(t, u.hamlet, ch, 'old', `r${i}`));
    const topics = async () => {
      const res = await t.api(u.othello, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 10, narrow: [{ operator: 'channel', operand: ch }] });
      return res.body.messages.map((m: { subject: string }) => m.subject);
    };
    let res = await t.api(u.othello, 'PATCH', `/messages/${a[1]}`, { topic: 'one', propagate_mode: 'change_one', send_notification_to_new_thread: false });
    assert.deepEqual(res.body, { ...SUCCESS, detached_uploads: [] });
    assert.deepEqual(await topics(), ['old', 'one', 'old', 'old']);
    res = await t.api(u.hamlet, 'PATCH', `/messages/${a[2]}`, { topic: 'later', propagate_mode: 'change_later', send_notification_to_new_thread: false });
    assert.deepEqual(await topics(), ['old', 'one', 'later', 'later']);
    res = await t.api(u.hamlet, 'PATCH', `/messages/${a[3]}`, { topic: 'all', propagate_mode: 'change_all', send_notification_to_new_thread: false });
    assert.deepEqual(await topics(), ['old', 'one', 'all', 'all']);
    const m = (await getMessage(a[3])).message;
    assert.equal(m.last_moved_timestamp, NOW);
    assert.deepEqual(m.edit_history[0], { user_id: u.hamlet.id, timestamp: NOW, prev_topic: 'later', topic: 'all' });
    res = await t.api(u.hamlet, 'PATCH', `/messages/${a[0]}`, { topic: 'x', propagate_mode: 'change_some' });
    assert.deepEqual(res.body, err('Invalid propagate_mode'));
  });

  it('moves messages to another channel', async () => {
    const u = t.users;
    const from = await createChannel(t, u.hamlet, 'move-from', [u.hamlet, u.othello]);
    const to = await createChannel(t, u.hamlet, 'move-to', [u.hamlet, u.admin]);
    const a = await sendToChannel(t, u.hamlet, from, 'moving', 'one');
    const b = await sendToChannel(t, u.hamlet, from, 'moving', 'two');
    let res = await t.api(u.guest, 'PATCH', `/messages/${a}`, { stream_id: to });
    assert.deepEqual(res.body, err('Invalid message(s)'));
    res = await t.api(u.hamlet, 'PATCH', `/messages/${a}`, { stream_id: to, propagate_mode: 'change_all' });
    assert.deepEqual(res.body, { ...SUCCESS, detached_uploads: [] });
    for (const id of [a, b]) {
      const m = (await getMessage(id, u.admin)).message;
      assert.deepEqual([m.stream_id, m.display_recipient, m.subject], [to, 'move-to', 'moving']);
    }
    assert.equal((await t.api(u.hamlet, 'GET', `/streams/${from}`)).body.stream.first_message_id, null);
    assert.equal((await t.api(u.hamlet, 'GET', `/streams/${to}`)).body.stream.first_message_id, a);
    res = await t.api(u.hamlet, 'PATCH', `/messages/${a}`, { stream_id: 99999 });
    assert.deepEqual(res.body, err('Invalid channel ID'));
  });
});

describe('DELETE /messages/{message_id}', () => {
  it('own messages by the sender; others by administrators only', async () => {
    const u = t.users;
    const mine = await sendToChannel(t, u.hamlet, general, 'deleting', 'oops');
    const theirs = await sendToChannel(t, u.othello, general, 'deleting', 'keep');
    let res = await t.api(u.hamlet, 'DELETE', `/messages/${theirs}`);
    assert.deepEqual(res.body, err("You don't have permission to delete this message"));
    res = await t.api(u.hamlet, 'DELETE', `/messages/${mine}`);
    assert.deepEqual(res.body, SUCCESS);
    res = await t.api(u.hamlet, 'GET', `/messages/${mine}`);
    assert.deepEqual(res.body, err('Invalid message(s)'));
    res = await t.api(u.admin, 'DELETE', `/messages/${theirs}`);
    assert.deepEqual(res.body, SUCCESS);
    res = await t.api(u.admin, 'DELETE', `/messages/${theirs}`);
    assert.deepEqual(res.body, err('Invalid message(s)'));
  });

  it('a direct message cannot be deleted by someone who cannot see it', async () => {
    const id = await sendDirect(t, t.users.hamlet, [t.users.othello], 'secret');
    const res = await t.api(t.users.admin, 'DELETE', `/messages/${id}`);
    assert.deepEqual(res.body, err('Invalid message(s)'));
  });
});

describe('reactions', () => {
  it('adds and removes reactions; errors name Zulip\'s codes', async () => {
    const u = t.users;
    const id = await sendToChannel(t, u.hamlet, general, 'reactions', 'react to me');
    let res = await t.api(u.othello, 'POST', `/messages/${id}/reactions`, { emoji_name: 'octopus' });
    assert.deepEqual(res.body, SUCCESS);
    const m = (await getMessage(id)).message;
    assert.deepEqual(m.reactions, [
      {
        emoji_name: 'octopus',
        emoji_code: '1f419',
        reaction_type: 'unicode_emoji',
        // The reacting user by id only (current Zulip's ReactionDict; see test/isolation/guest-access.test.ts).
        user_id: u.othello.id,
      },
    ]);
    res = await t.api(u.othello, 'POST', `/messages/${id}/reactions`, { emoji_name: 'octopus' });
    assert.deepEqual(res.body, err('Reaction already exists.', 'REACTION_ALREADY_EXISTS'));
    res = await t.api(u.othello, 'POST', `/messages/${id}/reactions`, { emoji_name: 'not_an_emoji_at_all' });
    assert.deepEqual(res.body, err("Emoji 'not_an_emoji_at_all' does not exist"));
    res = await t.api(u.othello, 'POST', `/messages/${id}/reactions`, { emoji_name: 'octopus', emoji_code: '1f44d', reaction_type: 'unicode_emoji' });
    assert.deepEqual(res.body, err('Invalid emoji name.'));
    res = await t.api(u.othello, 'POST', `/messages/${id}/reactions`, { emoji_name: 'octopus', emoji_code: 'ffff0', reaction_type: 'unicode_emoji' });
    assert.deepEqual(res.body, err('Invalid emoji code.'));
    res = await t.api(u.othello, 'POST', `/messages/${id}/reactions`, { emoji_name: 'octopus', reaction_type: 'weird' });
    assert.deepEqual(res.body, err('Invalid emoji type.'));
    res = await t.api(u.othello, 'DELETE', `/messages/${id}/reactions`, {});
    assert.deepEqual(res.body, err('At least one of the following arguments must be present: emoji_name, emoji_code'));
    res = await t.api(u.hamlet, 'DELETE', `/messages/${id}/reactions`, { emoji_name: 'octopus' });
    assert.deepEqual(res.body, err("Reaction doesn't exist.", 'REACTION_DOES_NOT_EXIST'));
    res = await t.api(u.othello, 'DELETE', `/messages/${id}/reactions`, { emoji_code: '1f419' });
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual((await getMessage(id)).message.reactions, []);
    res = await t.api(u.othello, 'POST', '/messages/99999/reactions', { emoji_name: 'octopus' });
    assert.deepEqual(res.body, err('Invalid message(s)'));
    const dm = await sendDirect(t, u.hamlet, [u.othello], 'private');
    res = await t.api(u.admin, 'POST', `/messages/${dm}/reactions`, { emoji_name: 'octopus' });
    assert.deepEqual(res.body, err('Invalid message(s)'));
  });
});

describe('POST /messages/flags', () => {
  it('adds and removes flags and echoes the message ids', async () => {
    const u = t.users;
    const a = await sendToChannel(t, u.hamlet, general, 'flags', 'a');
    const b = await sendToChannel(t, u.hamlet, general, 'flags', 'b');
    let res = await t.api(u.othello, 'POST', '/messages/flags', { messages: [a, b], op: 'add', flag: 'starred' });
    assert.deepEqual(res.body, { ...SUCCESS, messages: [a, b] });
    assert.deepEqual((await getMessage(a, u.othello)).message.flags, ['starred']);
    res = await t.api(u.othello, 'POST', '/messages/flags', { messages: [a], op: 'add', flag: 'read' });
    assert.deepEqual((await getMessage(a, u.othello)).message.flags, ['read', 'starred']);
    res = await t.api(u.othello, 'POST', '/messages/flags', { messages: [a], op: 'remove', flag: 'read' });
    assert.deepEqual(res.body, { ...SUCCESS, messages: [a], ignored_because_not_subscribed_channels: [] });
    assert.deepEqual((await getMessage(a, u.othello)).message.flags, ['starred']);
  });

  it('refuses unknown and read-only flags, bad operations, and messages the user cannot see', async () => {
    const u = t.users;
    const a = await sendToChannel(t, u.hamlet, general, 'flags', 'c');
    const dm = await sendDirect(t, u.hamlet, [u.othello], 'x');
    const cases: [Record<string, unknown>, unknown][] = [
      [{ messages: [a], op: 'add', flag: 'shiny' }, err("Invalid flag: 'shiny'")],
      [{ messages: [a], op: 'add', flag: 'toString' }, err("Invalid flag: 'toString'")],
      [{ messages: [a], op: 'add', flag: 'mentioned' }, err("Flag not editable: 'mentioned'")],
      [{ messages: [a], op: 'toggle', flag: 'read' }, err("Invalid message flag operation: 'toggle'")],
      [{ messages: [dm], op: 'add', flag: 'starred' }, err('Invalid message(s)')],
      // Marking read a message one cannot see is no change, so no error (Zulip's do_update_message_flags); starring is.
      [{ messages: [99999], op: 'add', flag: 'starred' }, err('Invalid message(s)')],
    ];
    for (const [params, body] of cases) {
      const res = await t.api(u.admin, 'POST', '/messages/flags', params);
      assert.equal(res.status, 400, JSON.stringify(params));
      assert.deepEqual(res.body, body);
    }
  });

  it('starring a public-channel message the user never received gives a historical row', async () => {
    const u = t.users;
    const id = await sendToChannel(t, u.hamlet, general, 'history', 'before moderator existed here');
    const res = await t.api(u.moderator, 'POST', '/messages/flags', { messages: [id], op: 'add', flag: 'starred' });
    assert.deepEqual(res.body, { ...SUCCESS, messages: [id] });
    assert.deepEqual((await getMessage(id, u.moderator)).message.flags, ['read', 'starred', 'historical']);
  });
});

describe('POST /messages/render', () => {
  it('renders markdown without sending', async () => {
    const res = await t.api(t.users.hamlet, 'POST', '/messages/render', { content: '**bold** <script>x</script>' });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ['msg', 'rendered', 'result']);
    assert.ok(res.body.rendered.includes('<strong>bold</strong>'));
    assert.ok(!res.body.rendered.includes('<script>'));
  });

  // Rendering work is bounded per message (MAX_TEX_COST_PER_MESSAGE in src/lib/markdown.ts): math past
  // the budget, or math that defines macros, is shown as its source, as Zulip shows math its KaTeX
  // service did not render.
  const render = async (content: string) => (await t.api(t.users.hamlet, 'POST', '/messages/render', { content })).body;
  const source = (tex: string) => ({ ...SUCCESS, rendered: `<p><span class="tex-error">${tex.replace(/&/g, '&amp;')}</span></p>` });
  // Cost: 10 per expression, 1 per character, 5 per backslash or non-ASCII character, 8 per '&';
  // 44 + 8 × cells for this one. The budget is 2000.
  const matrix = (cells: number) => `$$\\begin{matrix}${'&'.repeat(cells)}\\end{matrix}$$`;

  it('renders math up to the budget and shows the rest as source', async () => {
    assert.ok((await render(matrix(244))).rendered.startsWith('<p><span class="katex">'), 'cost 1996 renders');
    assert.deepEqual(await render(matrix(245)), source(matrix(245)));
    // The budget is the message's: after 1988, one of cost 13 is source, one of cost 12 renders.
    const both = (await render(`${matrix(243)} $$xyz$$ $$xy$$`)).rendered as string;
    assert.ok(both.includes('<span class="tex-error">$$xyz$$</span> <span class="katex">'), both.slice(-300));
    // The review's matrix as wide as a message allows (a second of KaTeX, 5.7 MB of HTML) costs nothing to show.
    const wide = await render(matrix(9_950));
    assert.ok(wide.rendered === source(matrix(9_950)).rendered, String(wide.rendered).slice(0, 80));
    const block = '```math\n\\begin{matrix}' + '&'.repeat(2000) + '\\end{matrix}\n```';
    assert.deepEqual(await render(block), source('\\begin{matrix}' + '&'.repeat(2000) + '\\end{matrix}'));
    // Many small expressions add up too (each call to KaTeX has its cost): 153 of 13 fit.
    const many = (await render(Array(200).fill('$$x^2$$').join(' '))).rendered as string;
    assert.deepEqual([many.split('<span class="katex">').length - 1, many.split('<span class="tex-error">$$x^2$$</span>').length - 1], [153, 47]);
  });

  it('shows math that defines macros as its source (a short definition can expand to unbounded work)', async () => {
    for (const tex of ['$$\\def\\a{xx}\\a\\a$$', '$$\\gdef\\b{y}\\b$$', '$$\\newcommand{\\c}{z}\\c$$', '$$\\let\\d=x \\d$$']) {
      assert.deepEqual(await render(tex), source(tex));
    }
    assert.deepEqual(await render('```math\n\\renewcommand{\\e}{f}\\e\n```'), source('\\renewcommand{\\e}{f}\\e'));
    // A command that merely starts like one is math as usual.
    assert.ok((await render('$$\\definecolor$$ $$\\lettrine$$ $$\\delta$$')).rendered.includes('<span class="katex">'));
  });
});
