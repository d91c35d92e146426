import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, err, sendDirect, sendToChannel, SUCCESS } from '../helpers/chat';
import { htmlDiff } from '../../src/actions/message-extras';

let now = 1_700_000_000;
let t: TestServer;
before(async () => {
  t = await startTestServer({ clock: { nowMs: () => now * 1000 } });
});
after(() => t.close());

type Ev = Record<string, any>;

/** A registered queue that hands out the events that arrived since the last look. */
class Q {
  private last = -1;
  constructor(
    readonly user: TestUser,
    readonly id: string,
  ) {}
  static async open(user: TestUser, params: Record<string, unknown> = {}): Promise<Q> {
    const res = await t.api(user, 'POST', '/register', { fetch_event_types: [], ...params });
    assert.equal(res.status, 200, res.text);
    return new Q(user, res.body.queue_id);
  }
  async next(): Promise<Ev[]> {
    const res = await t.api(this.user, 'GET', '/events', { queue_id: this.id, last_event_id: this.last, dont_block: true });
    assert.equal(res.status, 200, res.text);
    const events = res.body.events as Ev[];
    if (events.length) this.last = events[events.length - 1].id;
    return events.filter((e) => e.type !== 'heartbeat').map(({ id: _id, ...e }) => e);
  }
}

async function unread(user: TestUser): Promise<number[]> {
  const res = await t.api(user, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 5000, narrow: [{ operator: 'is', operand: 'unread' }] });
  assert.equal(res.status, 200, res.text);
  return res.body.messages.map((m: { id: number }) => m.id);
}

const readEvent = (messages: number[], all = false) => ({ type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages, all });

describe('POST /mark_stream_as_read and /mark_topic_as_read', () => {
  let chan: number;
  let other: number;
  const m: Record<string, number> = {};
  before(async () => {
    const { hamlet, othello } = t.users;
    chan = await createChannel(t, hamlet, 'bulk read', [hamlet, othello]);
    other = await createChannel(t, hamlet, 'bulk other', [hamlet, othello]);
    m.a1 = await sendToChannel(t, hamlet, chan, 'alpha', 'a1');
    m.a2 = await sendToChannel(t, hamlet, chan, 'Alpha', 'a2');
    m.b1 = await sendToChannel(t, hamlet, chan, 'beta', 'b1');
    m.g1 = await sendToChannel(t, hamlet, chan, '', 'general');
    m.o1 = await sendToChannel(t, hamlet, other, 'alpha', 'o1');
  });

  it('marks one topic (case-insensitively) and sends the ids', async () => {
    const q = await Q.open(t.users.othello, { event_types: ['update_message_flags'] });
    const res = await t.api(t.users.othello, 'POST', '/mark_topic_as_read', { stream_id: chan, topic_name: 'ALPHA' });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(await q.next(), [readEvent([m.a1, m.a2])]);
    assert.deepEqual(await unread(t.users.othello), [m.b1, m.g1, m.o1]);
  });

  it("the empty topic by its display name; a topic without messages is 'No such topic'", async () => {
    let res = await t.api(t.users.othello, 'POST', '/mark_topic_as_read', { stream_id: chan, topic_name: 'general chat' });
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(await unread(t.users.othello), [m.b1, m.o1]);
    res = await t.api(t.users.othello, 'POST', '/mark_topic_as_read', { stream_id: chan, topic_name: 'gamma' });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, err("No such topic 'gamma'"));
    res = await t.api(t.users.othello, 'POST', '/mark_topic_as_read', { stream_id: chan });
    assert.deepEqual(res.body, err("Missing 'topic_name' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'topic_name' }));
  });

  it('marks a whole channel; nothing left means no event', async () => {
    const q = await Q.open(t.users.othello, { event_types: ['update_message_flags'] });
    let res = await t.api(t.users.othello, 'POST', '/mark_stream_as_read', { stream_id: chan });
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(await q.next(), [readEvent([m.b1])]);
    res = await t.api(t.users.othello, 'POST', '/mark_stream_as_read', { stream_id: chan });
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(await q.next(), []);
    assert.deepEqual(await unread(t.users.othello), [m.o1]);
  });

  it('refuses missing, inaccessible and malformed channels alike', async () => {
    const priv = await createChannel(t, t.users.hamlet, 'bulk private', [t.users.hamlet], { invite_only: true });
    for (const stream_id of [priv, 99999]) {
      const res = await t.api(t.users.othello, 'POST', '/mark_stream_as_read', { stream_id });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, err('Invalid channel ID'));
    }
    // An administrator sees the private channel's metadata, not its content.
    let res = await t.api(t.users.admin, 'POST', '/mark_stream_as_read', { stream_id: priv });
    assert.deepEqual(res.body, err('Invalid channel ID'));
    res = await t.api(t.users.othello, 'POST', '/mark_stream_as_read', { stream_id: 'x' });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'BAD_REQUEST');
    res = await t.api(t.users.othello, 'POST', '/mark_stream_as_read', {});
    assert.deepEqual(res.body, err("Missing 'stream_id' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'stream_id' }));
  });
});

describe('POST /mark_all_as_read', () => {
  it('marks every unread message, answers complete, and sends all: true without ids', async () => {
    const { hamlet, moderator } = t.users;
    const chan = await createChannel(t, hamlet, 'bulk all', [hamlet, moderator]);
    await sendToChannel(t, hamlet, chan, 'x', 'one');
    await sendDirect(t, hamlet, [moderator], 'two');
    assert.equal((await unread(moderator)).length, 2);
    const q = await Q.open(moderator, { event_types: ['update_message_flags'] });
    const res = await t.api(moderator, 'POST', '/mark_all_as_read');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { ...SUCCESS, complete: true });
    assert.deepEqual(await unread(moderator), []);
    assert.deepEqual(await q.next(), [readEvent([], true)]);
    // Nothing to do: still complete, still one event (as Zulip).
    const again = await t.api(moderator, 'POST', '/mark_all_as_read');
    assert.deepEqual(again.body, { ...SUCCESS, complete: true });
    assert.deepEqual(await q.next(), [readEvent([], true)]);
  });

  it('works through more rows than one batch', async () => {
    const { hamlet, othello } = t.users;
    const chan = await createChannel(t, hamlet, 'bulk many', [hamlet, othello]);
    const first = await sendToChannel(t, hamlet, chan, 'x', 'first');
    // Unread rows for othello beyond one batch of 2000, written directly.
    const ins = t.app.db.prepare('INSERT OR IGNORE INTO usermessage (user_id, message_id, flags) VALUES (?, ?, 0)');
    const msg = t.app.db.prepare(
      "INSERT INTO message (realm_id, sender_id, stream_id, topic, topic_key, content, rendered_content, date_sent, client) SELECT realm_id, sender_id, stream_id, topic, topic_key, content, rendered_content, date_sent, client FROM message WHERE id = ?",
    );
    t.app.db.transaction(() => {
      for (let i = 0; i < 2100; i++) ins.run(othello.id, Number(msg.run(first).lastInsertRowid));
    })();
    assert.equal((t.app.db.prepare('SELECT count(*) AS n FROM usermessage WHERE user_id = ? AND (flags & 1) = 0').get(othello.id) as { n: number }).n > 2000, true);
    const res = await t.api(othello, 'POST', '/mark_all_as_read');
    assert.deepEqual(res.body, { ...SUCCESS, complete: true });
    assert.equal((t.app.db.prepare('SELECT count(*) AS n FROM usermessage WHERE user_id = ? AND (flags & 1) = 0').get(othello.id) as { n: number }).n, 0);
  });
});

describe('GET /messages/{message_id}/history', () => {
  it('an unedited message: only the original snapshot', async () => {
    const chan = await createChannel(t, t.users.hamlet, 'history a', [t.users.hamlet]);
    now = 1_700_000_100;
    const id = await sendToChannel(t, t.users.hamlet, chan, 'start', 'hello');
    const res = await t.api(t.users.hamlet, 'GET', `/messages/${id}/history`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {
      ...SUCCESS,
      message_history: [{ content: 'hello', rendered_content: '<p>hello</p>', timestamp: 1_700_000_100, topic: 'start', user_id: t.users.hamlet.id }],
    });
  });

  it('content, topic and channel edits, oldest first, as Zulip fills them', async () => {
    const { hamlet, admin } = t.users;
    const chan = await createChannel(t, hamlet, 'history b', [hamlet, admin]);
    const chan2 = await createChannel(t, hamlet, 'history c', [hamlet, admin]);
    now = 1_700_001_000;
    const id = await sendToChannel(t, hamlet, chan, 'first topic', 'hello world');
    now = 1_700_001_010;
    let res = await t.api(hamlet, 'PATCH', `/messages/${id}`, { content: 'hello brave world' });
    assert.equal(res.status, 200, res.text);
    now = 1_700_001_020;
    res = await t.api(hamlet, 'PATCH', `/messages/${id}`, { topic: 'second topic' });
    assert.equal(res.status, 200, res.text);
    now = 1_700_001_030;
    res = await t.api(admin, 'PATCH', `/messages/${id}`, { stream_id: chan2 });
    assert.equal(res.status, 200, res.text);
    res = await t.api(hamlet, 'GET', `/messages/${id}/history`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {
      ...SUCCESS,
      message_history: [
        { content: 'hello world', rendered_content: '<p>hello world</p>', timestamp: 1_700_001_000, topic: 'first topic', user_id: hamlet.id },
        {
          content: 'hello brave world',
          rendered_content: '<p>hello brave world</p>',
          timestamp: 1_700_001_010,
          topic: 'first topic',
          user_id: hamlet.id,
          prev_content: 'hello world',
          prev_rendered_content: '<p>hello world</p>',
          content_html_diff: '<p>hello <span class="highlight_text_inserted">brave</span> world</p>',
        },
        {
          content: 'hello brave world',
          rendered_content: '<p>hello brave world</p>',
          timestamp: 1_700_001_020,
          topic: 'second topic',
          prev_topic: 'first topic',
          user_id: hamlet.id,
        },
        {
          content: 'hello brave world',
          rendered_content: '<p>hello brave world</p>',
          timestamp: 1_700_001_030,
          topic: 'second topic',
          user_id: admin.id,
          prev_stream: chan,
          stream: chan2,
        },
      ],
    });
  });

  it('the empty topic shows its display name unless allow_empty_topic_name', async () => {
    const chan = await createChannel(t, t.users.hamlet, 'history d', [t.users.hamlet]);
    now = 1_700_002_000;
    const id = await sendToChannel(t, t.users.hamlet, chan, '', 'general');
    now = 1_700_002_010;
    assert.equal((await t.api(t.users.hamlet, 'PATCH', `/messages/${id}`, { topic: 'named' })).status, 200);
    let res = await t.api(t.users.hamlet, 'GET', `/messages/${id}/history`);
    assert.deepEqual(
      res.body.message_history.map((e: Ev) => [e.topic, e.prev_topic]),
      [
        ['general chat', undefined],
        ['named', 'general chat'],
      ],
    );
    res = await t.api(t.users.hamlet, 'GET', `/messages/${id}/history`, { allow_empty_topic_name: true });
    assert.deepEqual(
      res.body.message_history.map((e: Ev) => [e.topic, e.prev_topic]),
      [
        ['', undefined],
        ['named', ''],
      ],
    );
  });

  it('access like GET /messages/{id}; disabled edit history is refused first', async () => {
    const priv = await createChannel(t, t.users.hamlet, 'history private', [t.users.hamlet], { invite_only: true });
    const id = await sendToChannel(t, t.users.hamlet, priv, 'x', 'secret');
    let res = await t.api(t.users.othello, 'GET', `/messages/${id}/history`);
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, err('Invalid message(s)'));
    res = await t.api(t.users.othello, 'GET', '/messages/999999/history');
    assert.deepEqual(res.body, err('Invalid message(s)'));
    t.app.db.prepare('UPDATE realm SET allow_edit_history = 0').run();
    try {
      res = await t.api(t.users.hamlet, 'GET', `/messages/${id}/history`);
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, err('Message edit history is disabled in this organization'));
      res = await t.api(t.users.othello, 'GET', '/messages/999999/history');
      assert.deepEqual(res.body, err('Message edit history is disabled in this organization'));
    } finally {
      t.app.db.prepare('UPDATE realm SET allow_edit_history = 1').run();
    }
  });
});

describe('htmlDiff', () => {
  it('marks deleted and inserted words, keeping the new tags', () => {
    assert.equal(htmlDiff('<p>a b c</p>', '<p>a c d</p>'), '<p>a <span class="highlight_text_deleted">b</span> c <span class="highlight_text_inserted">d</span></p>');
    assert.equal(htmlDiff('<p>same</p>', '<p>same</p>'), '<p>same</p>');
  });
});

describe('GET /messages/{message_id}/read_receipts', () => {
  it('lists readers but not the sender, users who turned receipts off, or either side of a muting', async () => {
    const { hamlet, othello, moderator, admin, owner, guest } = t.users;
    const chan = await createChannel(t, hamlet, 'receipts', [hamlet, othello, moderator, admin, owner, guest]);
    const id = await sendToChannel(t, hamlet, chan, 'r', 'read me');
    let res = await t.api(othello, 'GET', `/messages/${id}/read_receipts`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { ...SUCCESS, user_ids: [] });
    for (const u of [othello, moderator, admin, owner, guest]) {
      assert.equal((await t.api(u, 'POST', '/messages/flags', { messages: [id], op: 'add', flag: 'read' })).status, 200);
    }
    res = await t.api(hamlet, 'GET', `/messages/${id}/read_receipts`);
    assert.deepEqual(res.body, { ...SUCCESS, user_ids: [owner.id, admin.id, moderator.id, othello.id, guest.id].sort((a, b) => a - b) });
    // Moderator stops sending receipts; owner muted the requester; the requester muted the admin.
    assert.equal((await t.api(moderator, 'PATCH', '/settings', { send_read_receipts: false })).status, 200);
    t.app.db.prepare('INSERT INTO muted_user (user_id, muted_user_id, date_muted) VALUES (?, ?, 0), (?, ?, 0)').run(owner.id, othello.id, othello.id, admin.id);
    // The requester's own receipt is listed (only the sender is left out).
    res = await t.api(othello, 'GET', `/messages/${id}/read_receipts`);
    assert.deepEqual(res.body, { ...SUCCESS, user_ids: [othello.id, guest.id] });
    // Another requester is unaffected by othello's muting.
    res = await t.api(hamlet, 'GET', `/messages/${id}/read_receipts`);
    assert.deepEqual(res.body, { ...SUCCESS, user_ids: [owner.id, admin.id, othello.id, guest.id].sort((a, b) => a - b) });
    // Marking unread removes the receipt.
    assert.equal((await t.api(guest, 'POST', '/messages/flags', { messages: [id], op: 'remove', flag: 'read' })).status, 200);
    res = await t.api(othello, 'GET', `/messages/${id}/read_receipts`);
    assert.deepEqual(res.body, { ...SUCCESS, user_ids: [othello.id] });
    t.app.db.prepare('DELETE FROM muted_user').run();
  });

  it('refuses while the organization has read receipts off (on by default), after the access check', async () => {
    const id = await sendDirect(t, t.users.hamlet, [t.users.othello], 'receipts off');
    const off = await t.api(t.users.admin, 'PATCH', '/realm', { enable_read_receipts: false });
    assert.deepEqual(off.body, { ...SUCCESS, enable_read_receipts: false });
    try {
      let res = await t.api(t.users.othello, 'GET', `/messages/${id}/read_receipts`);
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, err('Read receipts are disabled in this organization.'));
      // A message the user cannot read is still "Invalid message(s)" first, as in Zulip.
      res = await t.api(t.users.moderator, 'GET', `/messages/${id}/read_receipts`);
      assert.deepEqual(res.body, err('Invalid message(s)'));
    } finally {
      await t.api(t.users.admin, 'PATCH', '/realm', { enable_read_receipts: true });
    }
    const res = await t.api(t.users.othello, 'GET', `/messages/${id}/read_receipts`);
    assert.deepEqual(res.body, { ...SUCCESS, user_ids: [] });
  });

  it('access like GET /messages/{id}', async () => {
    const id = await sendDirect(t, t.users.hamlet, [t.users.othello], 'private');
    let res = await t.api(t.users.moderator, 'GET', `/messages/${id}/read_receipts`);
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, err('Invalid message(s)'));
    res = await t.api(t.users.othello, 'GET', `/messages/${id}/read_receipts`);
    assert.deepEqual(res.body, { ...SUCCESS, user_ids: [] });
  });
});
