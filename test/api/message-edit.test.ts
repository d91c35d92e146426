// PATCH /messages/{message_id} as Zulip's check_update_message / do_update_message: Notification Bot's
// notices after moves and resolves, permissions and time limits, topics policies, the flags a content
// edit changes, payload validation; and GET /messages/{id}/history under the edit history policy.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, err, sendDirect, sendToChannel, SUCCESS, systemGroups, topicMessages as topicMessagesOf } from '../helpers/chat';
import { doCreateUser } from '../../src/actions/users';
import { ROLE } from '../../src/lib/roles';

const T0 = 1_700_000_000;
let now = T0;
let t: TestServer;
before(async () => {
  t = await startTestServer({ clock: { nowMs: () => now * 1000 } });
});
after(() => t.close());

type Ev = Record<string, any>;
const OK = { ...SUCCESS, detached_uploads: [] };

/** A queue (raw Markdown content) that hands out the events that arrived since the last look. */
class Q {
  private last = -1;
  constructor(
    readonly user: TestUser,
    readonly id: string,
  ) {}
  static async open(user: TestUser, types = ['message', 'update_message', 'delete_message']): Promise<Q> {
    const res = await t.api(user, 'POST', '/register', { event_types: types, fetch_event_types: [], apply_markdown: false });
    assert.equal(res.status, 200, res.text);
    return new Q(user, res.body.queue_id);
  }
  async next(): Promise<Ev[]> {
    const res = await t.api(this.user, 'GET', '/events', { queue_id: this.id, last_event_id: this.last, dont_block: true });
    assert.equal(res.status, 200, res.text);
    const events = res.body.events.filter((e: Ev) => e.type !== 'heartbeat');
    if (events.length) this.last = events[events.length - 1].id;
    return events.map(({ id: _id, ...rest }: Ev) => rest);
  }
}

const patch = (user: TestUser, id: number, params: Record<string, unknown>) => t.api(user, 'PATCH', `/messages/${id}`, params);
const mention = (u: TestUser) => `@_**${u.fullName}|${u.id}**`;

/** A message as the tests compare them: who, where, the raw content and the reader's flags. */
const msg = (sender: string, stream_id: number, subject: string, content: string, flags: string[]) => ({ sender_full_name: sender, stream_id, subject, content, flags });
const notice = (stream_id: number, subject: string, content: string, flags: string[]) => msg('Notification Bot', stream_id, subject, content, flags);

/** The messages of a channel topic as `user` sees them, as the tests compare them. */
const topicMessages = async (user: TestUser, channelId: number, topic: string) =>
  (await topicMessagesOf(t, user, channelId, topic)).map((m: Ev) => msg(m.sender_full_name, m.stream_id, m.subject, m.content, m.flags));

/** A message event as the tests compare them. */
const asMsg = (e: Ev) => (e.type === 'message' ? { type: 'message', ...msg(e.message.sender_full_name, e.message.stream_id, e.message.subject, e.message.content, e.flags) } : e);

async function getMessage(user: TestUser, id: number) {
  const res = await t.api(user, 'GET', `/messages/${id}`, { apply_markdown: false });
  assert.equal(res.status, 200, res.text);
  return res.body.message;
}

async function setRealm(params: Record<string, unknown>) {
  const res = await t.api(t.users.owner, 'PATCH', '/realm', params);
  assert.equal(res.status, 200, res.text);
}

const moveEvent = (user: TestUser, id: number, ids: number[], streamName: string, streamId: number, extra: Ev, flags: string[] = []) => ({
  type: 'update_message',
  user_id: user.id,
  edit_timestamp: now,
  message_id: id,
  message_ids: ids,
  rendering_only: false,
  flags,
  stream_name: streamName,
  stream_id: streamId,
  ...extra,
});

describe('PATCH /messages/{message_id}: Notification Bot after moves', () => {
  it('renaming a whole topic: "This topic was moved here" in the new topic, read by the mover, unread for the others, over the wire', async () => {
    const { hamlet, othello } = t.users;
    now = T0;
    const ch = await createChannel(t, hamlet, 'moves a', [hamlet, othello]);
    const a = await sendToChannel(t, hamlet, ch, 'old', 'one');
    const b = await sendToChannel(t, othello, ch, 'old', 'two');
    const qo = await Q.open(othello);
    const res = await patch(hamlet, a, { topic: 'new', propagate_mode: 'change_all' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, OK);
    const text = `This topic was moved here from #**moves a>old** by ${mention(hamlet)}.`;
    assert.deepEqual(await topicMessages(othello, ch, 'new'), [
      msg('King Hamlet', ch, 'new', 'one', []),
      msg('Othello', ch, 'new', 'two', ['read']),
      notice(ch, 'new', text, []),
    ]);
    assert.deepEqual((await topicMessages(hamlet, ch, 'new'))[2], notice(ch, 'new', text, ['read']));
    assert.deepEqual(await topicMessages(othello, ch, 'old'), []);
    // The update_message event first, then the notice.
    assert.deepEqual((await qo.next()).map(asMsg), [
      moveEvent(hamlet, a, [a, b], 'moves a', ch, { propagate_mode: 'change_all', orig_subject: 'old', subject: 'new', topic_links: [] }),
      { type: 'message', ...notice(ch, 'new', text, []) },
    ]);
  });

  it('part of a topic: "[A message](link) was moved here" / "N messages were moved here", and the old thread told when asked', async () => {
    const { hamlet, othello } = t.users;
    const ch = await createChannel(t, hamlet, 'moves b', [hamlet, othello]);
    const [a, b, c] = [await sendToChannel(t, hamlet, ch, 'old', 'a'), await sendToChannel(t, hamlet, ch, 'old', 'b'), await sendToChannel(t, hamlet, ch, 'old', 'c')];
    let res = await patch(othello, b, { topic: 'new', send_notification_to_old_thread: true });
    assert.deepEqual(res.body, OK);
    const link = `${t.url}/#narrow/channel/${ch}-moves-b/topic/new/near/${b}`;
    assert.deepEqual(await topicMessages(hamlet, ch, 'new'), [
      msg('King Hamlet', ch, 'new', 'b', ['read']),
      notice(ch, 'new', `[A message](${link}) was moved here from #**moves b>old** by ${mention(othello)}.`, []),
    ]);
    assert.deepEqual(await topicMessages(hamlet, ch, 'old'), [
      msg('King Hamlet', ch, 'old', 'a', ['read']),
      msg('King Hamlet', ch, 'old', 'c', ['read']),
      notice(ch, 'old', `A message was moved from this topic to #**moves b>new** by ${mention(othello)}.`, []),
    ]);

    const [p, q, r] = [await sendToChannel(t, hamlet, ch, 'x', 'p'), await sendToChannel(t, hamlet, ch, 'x', 'q'), await sendToChannel(t, hamlet, ch, 'x', 'r')];
    res = await patch(othello, q, { topic: 'y', propagate_mode: 'change_later', send_notification_to_old_thread: true });
    assert.deepEqual(res.body, OK);
    assert.deepEqual(await topicMessages(othello, ch, 'y'), [
      msg('King Hamlet', ch, 'y', 'q', []),
      msg('King Hamlet', ch, 'y', 'r', []),
      notice(ch, 'y', `2 messages were moved here from #**moves b>x** by ${mention(othello)}.`, ['read']),
    ]);
    assert.deepEqual(await topicMessages(othello, ch, 'x'), [
      msg('King Hamlet', ch, 'x', 'p', []),
      notice(ch, 'x', `2 messages were moved from this topic to #**moves b>y** by ${mention(othello)}.`, ['read']),
    ]);
    assert.ok(a < c && p < r);
  });

  it('a partial move that leaves nothing behind counts as the whole topic; into a topic with messages it does not', async () => {
    const { hamlet } = t.users;
    const ch = await createChannel(t, hamlet, 'moves c', [hamlet]);
    const only = await sendToChannel(t, hamlet, ch, 'lonely', 'alone');
    assert.deepEqual((await patch(hamlet, only, { topic: 'elsewhere', send_notification_to_old_thread: true })).body, OK);
    assert.deepEqual(await topicMessages(hamlet, ch, 'elsewhere'), [
      msg('King Hamlet', ch, 'elsewhere', 'alone', ['read']),
      notice(ch, 'elsewhere', `This topic was moved here from #**moves c>lonely** by ${mention(hamlet)}.`, ['read']),
    ]);
    assert.deepEqual(await topicMessages(hamlet, ch, 'lonely'), [
      notice(ch, 'lonely', `This topic was moved to #**moves c>elsewhere** by ${mention(hamlet)}.`, ['read']),
    ]);

    // Two messages joining a topic that has messages: counted, even with change_all.
    const first = await sendToChannel(t, hamlet, ch, 'merge', 'm1');
    await sendToChannel(t, hamlet, ch, 'merge', 'm2');
    assert.deepEqual((await patch(hamlet, first, { topic: 'elsewhere', propagate_mode: 'change_all' })).body, OK);
    const merged = await topicMessages(hamlet, ch, 'elsewhere');
    assert.deepEqual(merged.at(-1), notice(ch, 'elsewhere', `2 messages were moved here from #**moves c>merge** by ${mention(hamlet)}.`, ['read']));
  });

  it('moving a topic to another channel: both notices, with #**channel>topic** links', async () => {
    const { hamlet, othello, admin } = t.users;
    const from = await createChannel(t, hamlet, 'move from', [hamlet, othello]);
    const to = await createChannel(t, hamlet, 'move to', [hamlet, admin]);
    const a = await sendToChannel(t, hamlet, from, 'travel', 'one');
    const b = await sendToChannel(t, hamlet, from, 'travel', 'two');
    const qa = await Q.open(admin);
    const res = await patch(hamlet, a, { stream_id: to, propagate_mode: 'change_all', send_notification_to_old_thread: true });
    assert.deepEqual(res.body, OK);
    const here = `This topic was moved here from #**move from>travel** by ${mention(hamlet)}.`;
    assert.deepEqual(await topicMessages(admin, to, 'travel'), [
      // The target's history is shared: its subscribers read the moved messages as history (Zulip).
      msg('King Hamlet', to, 'travel', 'one', ['read', 'historical']),
      msg('King Hamlet', to, 'travel', 'two', ['read', 'historical']),
      notice(to, 'travel', here, []),
    ]);
    assert.deepEqual(await topicMessages(othello, from, 'travel'), [
      notice(from, 'travel', `This topic was moved to #**move to>travel** by ${mention(hamlet)}.`, []),
    ]);
    const events = await qa.next();
    // The old channel's history is shared: the new channel's subscribers hear the move too (as read).
    assert.deepEqual(events.map(asMsg), [
      moveEvent(hamlet, a, [a, b], 'move from', from, { propagate_mode: 'change_all', orig_subject: 'travel', new_stream_id: to }, ['read']),
      { type: 'message', ...notice(to, 'travel', here, []) },
    ]);
  });

  it('send_notification_to_new_thread=false posts nothing; names that break #**…** syntax get a plain link', async () => {
    const { hamlet } = t.users;
    const ch = await createChannel(t, hamlet, 'moves d', [hamlet]);
    const a = await sendToChannel(t, hamlet, ch, 'quiet', 'shh');
    assert.deepEqual((await patch(hamlet, a, { topic: 'still quiet', send_notification_to_new_thread: false })).body, OK);
    assert.deepEqual(await topicMessages(hamlet, ch, 'still quiet'), [msg('King Hamlet', ch, 'still quiet', 'shh', ['read'])]);

    const b = await sendToChannel(t, hamlet, ch, 'x & y*', 'odd');
    assert.deepEqual((await patch(hamlet, b, { topic: 'plain', propagate_mode: 'change_all' })).body, OK);
    assert.deepEqual((await topicMessages(hamlet, ch, 'plain'))[1], notice(
      ch,
      'plain',
      `This topic was moved here from [#moves d > x &amp; y&#42;](#narrow/channel/${ch}-moves-d/topic/x.20.26.20y*) by ${mention(hamlet)}.`,
      ['read'],
    ));
  });
});

describe('PATCH /messages/{message_id}: resolving topics', () => {
  it('"✔ " posts "{user} has marked this topic as resolved." (not a move notice); read per resolved_topic_notice_auto_read_policy', async () => {
    const { hamlet, othello, admin, moderator } = t.users;
    now = T0 + 100_000;
    const ch = await createChannel(t, hamlet, 'resolving', [hamlet, othello, admin, moderator]);
    const a = await sendToChannel(t, hamlet, ch, 'bug', 'it broke');
    await sendToChannel(t, othello, ch, 'bug', 'fixed now');
    assert.equal((await t.api(othello, 'PATCH', '/settings', { resolved_topic_notice_auto_read_policy: 'never' })).status, 200);
    assert.equal((await t.api(admin, 'POST', '/user_topics', { stream_id: ch, topic: 'bug', visibility_policy: 3 })).status, 200);
    const qo = await Q.open(othello);
    const res = await patch(hamlet, a, { topic: '✔ bug', propagate_mode: 'change_all' });
    assert.deepEqual(res.body, OK);
    const resolved = `${mention(hamlet)} has marked this topic as resolved.`;
    // Othello never auto-reads it; the admin follows the topic (except_followed); the moderator does not.
    assert.deepEqual((await topicMessages(othello, ch, '✔ bug')).at(-1), notice(ch, '✔ bug', resolved, []));
    assert.deepEqual((await topicMessages(admin, ch, '✔ bug')).at(-1), notice(ch, '✔ bug', resolved, []));
    assert.deepEqual((await topicMessages(moderator, ch, '✔ bug')).at(-1), notice(ch, '✔ bug', resolved, ['read']));
    assert.deepEqual((await topicMessages(hamlet, ch, '✔ bug')).length, 3);
    const events = (await qo.next()).map(asMsg);
    assert.deepEqual(events.map((e) => e.type), ['update_message', 'message']);
    assert.deepEqual(events[1], { type: 'message', ...notice(ch, '✔ bug', resolved, []) });
    assert.equal((await t.api(othello, 'PATCH', '/settings', { resolved_topic_notice_auto_read_policy: 'except_followed' })).status, 200);

    // Unresolving within a minute is an undo: the notice is deleted, none is sent.
    now += 30;
    assert.deepEqual((await patch(hamlet, a, { topic: 'bug', propagate_mode: 'change_all' })).body, OK);
    assert.deepEqual(await topicMessages(moderator, ch, 'bug'), [msg('King Hamlet', ch, 'bug', 'it broke', []), msg('Othello', ch, 'bug', 'fixed now', [])]);
    const undo = await qo.next();
    assert.deepEqual(
      undo.map((e) => e.type),
      ['update_message', 'delete_message'],
    );
    assert.equal(undo[1].message_type, 'stream');

    // Later toggles post both notices.
    now += 100;
    assert.deepEqual((await patch(hamlet, a, { topic: '✔ bug', propagate_mode: 'change_all' })).body, OK);
    now += 100;
    assert.deepEqual((await patch(othello, a, { topic: 'bug', propagate_mode: 'change_all' })).body, OK);
    const final = await topicMessages(moderator, ch, 'bug');
    assert.deepEqual(final.slice(2), [notice(ch, 'bug', resolved, ['read']), notice(ch, 'bug', `${mention(othello)} has marked this topic as unresolved.`, ['read'])]);
  });

  it('needs can_resolve_topics_group (the organization\'s or a channel\'s), not the topic-moving permission', async () => {
    const { hamlet } = t.users;
    const g = systemGroups(t);
    // Created by the owner: a channel's creator administers it, and channel administrators may move topics.
    const ch = await createChannel(t, t.users.owner, 'resolve perms', [hamlet]);
    const own = await createChannel(t, t.users.owner, 'resolve here', [hamlet], { can_resolve_topics_group: g['role:members'] });
    const a = await sendToChannel(t, hamlet, ch, 'task', 'do it');
    const b = await sendToChannel(t, hamlet, own, 'task', 'do it');
    await setRealm({ can_resolve_topics_group: { new: g['role:nobody'] }, can_move_messages_between_topics_group: { new: g['role:nobody'] } });
    try {
      let res = await patch(hamlet, a, { topic: '✔ task', propagate_mode: 'change_all' });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, err("You don't have permission to resolve topics in this channel."));
      res = await patch(hamlet, a, { topic: 'renamed' });
      assert.deepEqual(res.body, err("You don't have permission to edit this message"));
      res = await patch(hamlet, b, { topic: '✔ task', propagate_mode: 'change_all' });
      assert.deepEqual(res.body, OK);
    } finally {
      await setRealm({ can_resolve_topics_group: { new: g['role:everyone'] }, can_move_messages_between_topics_group: { new: g['role:everyone'] } });
    }
  });

  it('the general chat cannot be marked as resolved', async () => {
    const { hamlet } = t.users;
    const ch = await createChannel(t, hamlet, 'resolve general', [hamlet]);
    const a = await sendToChannel(t, hamlet, ch, '', 'chat');
    for (const topic of ['✔', '✔ ', '✔ general chat']) {
      const res = await patch(hamlet, a, { topic, propagate_mode: 'change_all' });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, err('General chat cannot be marked as resolved'));
    }
  });
});

describe('PATCH /messages/{message_id}: follow and mute settings move with the topic', () => {
  const FOLLOWED = 3;
  const MUTED = 1;
  const UNMUTED = 2;
  const setPolicy = async (user: TestUser, stream_id: number, topic: string, visibility_policy: number) => {
    const res = await t.api(user, 'POST', '/user_topics', { stream_id, topic, visibility_policy });
    assert.deepEqual(res.body, SUCCESS);
  };
  /** The user's topic settings in a channel, as [topic, policy] sorted. */
  const policies = async (user: TestUser, streamId: number) => {
    const res = await t.api(user, 'POST', '/register', { fetch_event_types: ['user_topic'] });
    assert.equal(res.status, 200, res.text);
    return (res.body.user_topics as { stream_id: number; topic_name: string; visibility_policy: number }[])
      .filter((x) => x.stream_id === streamId)
      .map((x) => [x.topic_name, x.visibility_policy])
      .sort();
  };

  it("a renamed topic keeps each user's setting; the events say so (old topic cleared, new one set)", async () => {
    const { hamlet, othello, moderator } = t.users;
    now = T0 + 200_000;
    const ch = await createChannel(t, hamlet, 'settings move', [hamlet, othello, moderator]);
    const a = await sendToChannel(t, hamlet, ch, 'plans', 'draft');
    await setPolicy(othello, ch, 'plans', FOLLOWED);
    await setPolicy(moderator, ch, 'plans', MUTED);
    const q = await Q.open(othello, ['user_topic']);
    assert.deepEqual((await patch(hamlet, a, { topic: 'Plans v2', propagate_mode: 'change_all' })).body, OK);
    assert.deepEqual(await policies(othello, ch), [['Plans v2', FOLLOWED]]);
    assert.deepEqual(await policies(moderator, ch), [['Plans v2', MUTED]]);
    assert.deepEqual(
      (await q.next()).map((e) => [e.topic_name, e.visibility_policy]),
      [['plans', 0], ['Plans v2', FOLLOWED]],
    );
  });

  it('into a topic with messages the settings merge to the more visible one; a partial move moves none', async () => {
    const { hamlet, othello, moderator, admin } = t.users;
    const ch = await createChannel(t, hamlet, 'settings merge', [hamlet, othello, moderator, admin]);
    const a = await sendToChannel(t, hamlet, ch, 'from', 'one');
    await sendToChannel(t, hamlet, ch, 'into', 'two');
    await setPolicy(othello, ch, 'from', MUTED);
    await setPolicy(othello, ch, 'into', FOLLOWED);
    await setPolicy(moderator, ch, 'from', MUTED);
    await setPolicy(admin, ch, 'from', UNMUTED);
    await setPolicy(admin, ch, 'into', MUTED);
    assert.deepEqual((await patch(hamlet, a, { topic: 'into', propagate_mode: 'change_all' })).body, OK);
    assert.deepEqual(await policies(othello, ch), [['into', FOLLOWED]]);
    // Muted into a topic without a setting: the merge is "inherit" (not muted any more).
    assert.deepEqual(await policies(moderator, ch), []);
    assert.deepEqual(await policies(admin, ch), [['into', UNMUTED]]);

    const b = await sendToChannel(t, hamlet, ch, 'partial', 'first');
    await sendToChannel(t, hamlet, ch, 'partial', 'second');
    await setPolicy(othello, ch, 'partial', FOLLOWED);
    assert.deepEqual((await patch(hamlet, b, { topic: 'elsewhere', propagate_mode: 'change_one' })).body, OK);
    assert.deepEqual(await policies(othello, ch), [['into', FOLLOWED], ['partial', FOLLOWED]]);
  });

  it('to a private channel: users who lose access lose the setting, those who keep it keep theirs', async () => {
    const { hamlet, othello, moderator } = t.users;
    const from = await createChannel(t, hamlet, 'settings public', [hamlet, othello, moderator]);
    const to = await createChannel(t, hamlet, 'settings private', [hamlet, moderator], { invite_only: true });
    const a = await sendToChannel(t, hamlet, from, 'secret plans', 'shh');
    await setPolicy(othello, from, 'secret plans', FOLLOWED);
    await setPolicy(moderator, from, 'secret plans', FOLLOWED);
    assert.deepEqual((await patch(hamlet, a, { stream_id: to, propagate_mode: 'change_all' })).body, OK);
    assert.deepEqual(await policies(othello, from), []);
    assert.deepEqual(await policies(othello, to), []);
    assert.deepEqual(await policies(moderator, to), [['secret plans', FOLLOWED]]);
  });
});

describe('PATCH /messages/{message_id}: topics policy', () => {
  it('disable_empty_topic: no move to the general chat; empty_topic_only: no other topic', async () => {
    const { hamlet, owner } = t.users;
    const free = await createChannel(t, owner, 'policy free', [hamlet]);
    const strict = await createChannel(t, owner, 'policy strict', [hamlet], { topics_policy: 'disable_empty_topic' });
    const bare = await createChannel(t, owner, 'policy bare', [hamlet], { topics_policy: 'empty_topic_only' });
    const a = await sendToChannel(t, hamlet, strict, 'named', 'x');
    for (const topic of ['', 'general chat', '(no topic)']) {
      const res = await patch(hamlet, a, { topic });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, err('Sending messages to the general chat is not allowed in this channel.'));
    }
    const general = await sendToChannel(t, hamlet, free, '', 'general');
    let res = await patch(hamlet, general, { stream_id: strict });
    assert.deepEqual(res.body, err('Sending messages to the general chat is not allowed in this channel.'));
    const named = await sendToChannel(t, hamlet, free, 'named', 'y');
    res = await patch(hamlet, named, { stream_id: bare });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, err('Only the general chat topic is allowed in this channel.'));
    res = await patch(hamlet, named, { stream_id: bare, topic: '', send_notification_to_new_thread: false });
    assert.deepEqual(res.body, OK);
    assert.deepEqual(await topicMessages(hamlet, bare, ''), [msg('King Hamlet', bare, '', 'y', ['read'])]);
  });
});

describe('PATCH /messages/{message_id}: limits and permissions', () => {
  it('content: 20 seconds of grace after message_content_edit_limit_seconds', async () => {
    const { hamlet } = t.users;
    const ch = await createChannel(t, hamlet, 'limits content', [hamlet]);
    now = T0 + 200_000;
    const a = await sendToChannel(t, hamlet, ch, 'x', 'v1');
    await setRealm({ message_content_edit_limit_seconds: 600 });
    try {
      now += 620;
      assert.deepEqual((await patch(hamlet, a, { content: 'v2' })).body, OK);
      now += 1;
      const res = await patch(hamlet, a, { content: 'v3' });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, err('The time limit for editing this message has passed'));
    } finally {
      t.app.db.prepare('UPDATE realm SET message_content_edit_limit_seconds = NULL').run();
    }
  });

  it("topic: the grace applies to move_messages_within_stream_limit_seconds; moderators are exempt", async () => {
    const { hamlet, othello, moderator } = t.users;
    const ch = await createChannel(t, hamlet, 'limits topic', [hamlet, othello, moderator]);
    now = T0 + 300_000;
    const a = await sendToChannel(t, hamlet, ch, 'x', 'a');
    await setRealm({ move_messages_within_stream_limit_seconds: 600 });
    try {
      now += 620;
      assert.deepEqual((await patch(othello, a, { topic: 'y', send_notification_to_new_thread: false })).body, OK);
      now += 1;
      const res = await patch(othello, a, { topic: 'z' });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, err("The time limit for editing this message's topic has passed."));
      assert.deepEqual((await patch(moderator, a, { topic: 'z', send_notification_to_new_thread: false })).body, OK);
    } finally {
      t.app.db.prepare('UPDATE realm SET move_messages_within_stream_limit_seconds = 604800').run();
    }
  });

  it('channel: move_messages_between_streams_limit_seconds for non-moderators, with the grace', async () => {
    const { hamlet, moderator } = t.users;
    const from = await createChannel(t, hamlet, 'limits from', [hamlet, moderator]);
    const to = await createChannel(t, hamlet, 'limits to', [hamlet, moderator]);
    now = T0 + 400_000;
    const a = await sendToChannel(t, hamlet, from, 'x', 'a');
    const b = await sendToChannel(t, hamlet, from, 'y', 'b');
    await setRealm({ move_messages_between_streams_limit_seconds: 600 });
    try {
      now += 620;
      assert.deepEqual((await patch(hamlet, a, { stream_id: to, send_notification_to_new_thread: false })).body, OK);
      now += 1;
      const res = await patch(hamlet, b, { stream_id: to });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, err("The time limit for editing this message's channel has passed"));
      assert.deepEqual((await patch(moderator, b, { stream_id: to, send_notification_to_new_thread: false })).body, OK);
    } finally {
      t.app.db.prepare('UPDATE realm SET move_messages_between_streams_limit_seconds = 604800').run();
    }
  });

  it('change_all past the limit for some messages: MOVE_MESSAGES_TIME_LIMIT_EXCEEDED with the counts', async () => {
    const { hamlet, moderator } = t.users;
    const ch = await createChannel(t, hamlet, 'limits all', [hamlet, moderator]);
    now = T0 + 500_000;
    await sendToChannel(t, hamlet, ch, 'long', 'old');
    now += 1000;
    const m2 = await sendToChannel(t, hamlet, ch, 'long', 'newer');
    const m3 = await sendToChannel(t, hamlet, ch, 'long', 'newest');
    now += 10;
    await setRealm({ move_messages_within_stream_limit_seconds: 600 });
    try {
      let res = await patch(hamlet, m3, { topic: 'short', propagate_mode: 'change_all' });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, {
        result: 'error',
        msg: 'You only have permission to move the 2/3 most recent messages in this topic.',
        code: 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED',
        first_message_id_allowed_to_move: m2,
        total_messages_in_topic: 3,
        total_messages_allowed_to_move: 2,
      });
      res = await patch(hamlet, m2, { topic: 'short', propagate_mode: 'change_later', send_notification_to_new_thread: false });
      assert.deepEqual(res.body, OK);
      res = await patch(moderator, m2, { topic: 'long', propagate_mode: 'change_all', send_notification_to_new_thread: false });
      assert.deepEqual(res.body, OK);
    } finally {
      t.app.db.prepare('UPDATE realm SET move_messages_within_stream_limit_seconds = 604800').run();
    }
  });

  it('can_create_topic_group of the target: a move may not start a topic; existing topics and resolving may', async () => {
    const { hamlet, moderator, owner } = t.users;
    const g = systemGroups(t);
    now = T0 + 600_000;
    const closed = await createChannel(t, owner, 'closed topics', [hamlet, moderator], { can_create_topic_group: g['role:moderators'] });
    const open = await createChannel(t, owner, 'open topics', [hamlet, moderator]);
    await sendToChannel(t, moderator, closed, 'existing', 'hello');
    const a = await sendToChannel(t, hamlet, closed, 'existing', 'mine');
    let res = await patch(hamlet, a, { topic: 'brand new' });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, err('You do not have permission to create new topics in this channel.'));
    const b = await sendToChannel(t, hamlet, open, 'elsewhere', 'visiting');
    res = await patch(hamlet, b, { stream_id: closed });
    assert.deepEqual(res.body, err('You do not have permission to create new topics in this channel.'));
    res = await patch(hamlet, b, { stream_id: closed, topic: 'existing', send_notification_to_new_thread: false });
    assert.deepEqual(res.body, OK);
    res = await patch(hamlet, a, { topic: '✔ existing', propagate_mode: 'change_all' });
    assert.deepEqual(res.body, OK);
    res = await patch(moderator, a, { topic: 'brand new', send_notification_to_new_thread: false });
    assert.deepEqual(res.body, OK);
  });

  it('renaming a topic needs the permission, also for the sender', async () => {
    const { hamlet, owner } = t.users;
    const g = systemGroups(t);
    const ch = await createChannel(t, owner, 'rename perms', [hamlet]);
    const chan = await createChannel(t, owner, 'rename here', [hamlet], { can_move_messages_within_channel_group: g['role:members'] });
    const a = await sendToChannel(t, hamlet, ch, 'x', 'mine');
    const b = await sendToChannel(t, hamlet, chan, 'x', 'mine');
    await setRealm({ can_move_messages_between_topics_group: { new: g['role:nobody'] } });
    try {
      const res = await patch(hamlet, a, { topic: 'y' });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, err("You don't have permission to edit this message"));
      assert.deepEqual((await patch(hamlet, b, { topic: 'y', send_notification_to_new_thread: false })).body, OK);
    } finally {
      await setRealm({ can_move_messages_between_topics_group: { new: g['role:everyone'] } });
    }
  });
});

describe('PATCH /messages/{message_id}: flags of a content edit', () => {
  it('mentions are added and removed for every holder, implied rows included; the event carries the new flags', async () => {
    const { hamlet, othello, admin } = t.users;
    now = T0 + 700_000;
    const ch = await createChannel(t, hamlet, 'flags', [hamlet, othello, admin]);
    const a = await sendToChannel(t, hamlet, ch, 'talk', 'hello');
    const qo = await Q.open(othello, ['update_message']);
    assert.deepEqual((await patch(hamlet, a, { content: `hello @**Othello**` })).body, OK);
    assert.deepEqual((await getMessage(othello, a)).flags, ['mentioned']);
    assert.deepEqual((await getMessage(admin, a)).flags, []);
    assert.deepEqual((await getMessage(hamlet, a)).flags, ['read']);
    const [ev] = await qo.next();
    assert.deepEqual(ev, {
      type: 'update_message',
      user_id: hamlet.id,
      edit_timestamp: now,
      message_id: a,
      message_ids: [a],
      rendering_only: false,
      flags: ['mentioned'],
      orig_content: 'hello',
      orig_rendered_content: '<p>hello</p>',
      content: 'hello @**Othello**',
      rendered_content: `<p>hello <span class="user-mention" data-user-id="${othello.id}">@Othello</span></p>`,
      is_me_message: false,
      stream_name: 'flags',
      stream_id: ch,
    });
    assert.deepEqual((await patch(hamlet, a, { content: 'hello again' })).body, OK);
    assert.deepEqual((await getMessage(othello, a)).flags, []);
    assert.deepEqual((await qo.next()).map((e) => e.flags), [[]]);
  });

  it('wildcards, group mentions and alert words', async () => {
    const { hamlet, othello, admin } = t.users;
    const ch = await createChannel(t, hamlet, 'flags wild', [hamlet, othello, admin]);
    await sendToChannel(t, othello, ch, 'talk', 'I was here');
    const a = await sendToChannel(t, hamlet, ch, 'talk', 'plain');
    assert.deepEqual((await patch(hamlet, a, { content: '@**all** listen' })).body, OK);
    assert.deepEqual((await getMessage(othello, a)).flags, ['stream_wildcard_mentioned', 'wildcard_mentioned']);
    assert.deepEqual((await getMessage(admin, a)).flags, ['stream_wildcard_mentioned', 'wildcard_mentioned']);
    // @**topic** reaches the topic's participants only.
    assert.deepEqual((await patch(hamlet, a, { content: '@**topic** listen' })).body, OK);
    assert.deepEqual((await getMessage(othello, a)).flags, ['topic_wildcard_mentioned', 'wildcard_mentioned']);
    assert.deepEqual((await getMessage(admin, a)).flags, []);

    const group = await t.api(hamlet, 'POST', '/user_groups/create', { name: 'edit testers', description: 'x', members: [admin.id] });
    assert.equal(group.status, 200, group.text);
    assert.deepEqual((await patch(hamlet, a, { content: 'ping @*edit testers*' })).body, OK);
    assert.deepEqual((await getMessage(admin, a)).flags, ['mentioned']);
    assert.deepEqual((await getMessage(othello, a)).flags, []);

    assert.equal((await t.api(othello, 'POST', '/users/me/alert_words', { alert_words: ['pineapple'] })).status, 200);
    assert.deepEqual((await patch(hamlet, a, { content: 'who wants pineapple?' })).body, OK);
    assert.deepEqual((await getMessage(othello, a)).flags, ['has_alert_word']);
    assert.deepEqual((await getMessage(admin, a)).flags, []);

    // A direct message too.
    const dm = await sendDirect(t, hamlet, [othello], 'psst');
    assert.deepEqual((await patch(hamlet, dm, { content: 'psst @**Othello**' })).body, OK);
    assert.deepEqual((await getMessage(othello, dm)).flags, ['mentioned']);
  });

  it('wildcard mentions need can_mention_many_users_group in a big channel or topic, as on send', async () => {
    const { hamlet } = t.users;
    const realmId = (t.app.db.prepare('SELECT realm_id FROM user WHERE id = ?').get(hamlet.id) as { realm_id: number }).realm_id;
    const crowd: TestUser[] = [];
    for (let i = 0; i < 16; i++) {
      const u = doCreateUser(t.app, { realmId, email: `edit-crowd${i}@example.com`, password: null, fullName: `Edit Crowd ${i}`, role: ROLE.MEMBER, acting: null });
      crowd.push({ id: u.userId, email: `edit-crowd${i}@example.com`, apiKey: u.apiKey, password: '', fullName: `Edit Crowd ${i}` });
    }
    t.app.batch.commit();
    const big = await createChannel(t, hamlet, 'edit stadium', [hamlet, ...crowd]);
    const a = await sendToChannel(t, hamlet, big, 'quiet corner', 'hi');
    let res = await patch(hamlet, a, { content: '@**all** hi' });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, err('You do not have permission to use channel wildcard mentions in this channel.', 'STREAM_WILDCARD_MENTION_NOT_ALLOWED'));
    // A topic with few participants may be pinged; one with many may not.
    assert.deepEqual((await patch(hamlet, a, { content: '@**topic** hi' })).body, OK);
    for (const u of crowd) await sendToChannel(t, u, big, 'busy', 'me too');
    const b = await sendToChannel(t, hamlet, big, 'busy', 'hi');
    res = await patch(hamlet, b, { content: '@**topic** hi' });
    assert.deepEqual(res.body, err('You do not have permission to use topic wildcard mentions in this topic.', 'TOPIC_WILDCARD_MENTION_NOT_ALLOWED'));
    assert.equal((await getMessage(hamlet, b)).content, 'hi');
    // Administrators may (the default can_mention_many_users_group).
    const c = await sendToChannel(t, t.users.admin, big, 'busy', 'admin');
    assert.deepEqual((await patch(t.users.admin, c, { content: '@**topic** admin' })).body, OK);
  });
});

describe('PATCH /messages/{message_id}: payload validation', () => {
  it('an unchanged topic is no change: "Nothing to change", no event, no last_moved_timestamp', async () => {
    const { hamlet } = t.users;
    now = T0 + 800_000;
    const ch = await createChannel(t, hamlet, 'same topic', [hamlet]);
    const a = await sendToChannel(t, hamlet, ch, 'stay', 'v1');
    const q = await Q.open(hamlet, ['update_message', 'message']);
    let res = await patch(hamlet, a, { topic: 'stay' });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, err('Nothing to change'));
    res = await patch(hamlet, a, { topic: ' stay ', stream_id: ch });
    assert.deepEqual(res.body, err('Nothing to change'));
    assert.deepEqual(await q.next(), []);
    res = await patch(hamlet, a, { topic: 'stay', content: 'v2' });
    assert.deepEqual(res.body, OK);
    const m = await getMessage(hamlet, a);
    assert.equal(m.last_edit_timestamp, now);
    assert.equal('last_moved_timestamp' in m, false);
    assert.deepEqual(m.edit_history, [{ user_id: hamlet.id, timestamp: now, prev_content: 'v1', prev_rendered_content: '<p>v1</p>', prev_rendered_content_version: 1 }]);
    const [ev] = await q.next();
    assert.equal(ev.type, 'update_message');
    assert.equal('orig_subject' in ev || 'subject' in ev || 'propagate_mode' in ev, false);
    res = await patch(hamlet, a, { topic: 'stay', content: 'v3', propagate_mode: 'change_all' });
    assert.deepEqual(res.body, err('Invalid propagate_mode without topic edit'));
    res = await patch(hamlet, a, { content: 'v3', propagate_mode: 'change_later' });
    assert.deepEqual(res.body, err('Invalid propagate_mode without topic edit'));
  });

  it('the update_message event of a move: subject and topic_links (linkified) only when the topic changed', async () => {
    const { hamlet, admin } = t.users;
    const res = await t.api(admin, 'POST', '/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: 'https://tracker.example.com/{id}' });
    assert.equal(res.status, 200, res.text);
    const from = await createChannel(t, hamlet, 'event from', [hamlet]);
    const to = await createChannel(t, hamlet, 'event to', [hamlet]);
    const a = await sendToChannel(t, hamlet, from, 'x', 'a');
    const q = await Q.open(hamlet, ['update_message']);
    assert.deepEqual((await patch(hamlet, a, { topic: 'issue #42', send_notification_to_new_thread: false })).body, OK);
    assert.deepEqual((await patch(hamlet, a, { stream_id: to, send_notification_to_new_thread: false })).body, OK);
    assert.deepEqual(await q.next(), [
      moveEvent(hamlet, a, [a], 'event from', from, {
        propagate_mode: 'change_one',
        orig_subject: 'x',
        subject: 'issue #42',
        topic_links: [{ text: '#42', url: 'https://tracker.example.com/42' }],
      }, ['read']),
      moveEvent(hamlet, a, [a], 'event from', from, { propagate_mode: 'change_one', orig_subject: 'issue #42', new_stream_id: to }, ['read']),
    ]);
  });

  it('direct messages have no topics and no channel', async () => {
    const { hamlet, othello } = t.users;
    const dm = await sendDirect(t, hamlet, [othello], 'private');
    let res = await patch(hamlet, dm, { topic: 'subject' });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, err('Direct messages cannot have topics.'));
    const ch = await createChannel(t, hamlet, 'dm target', [hamlet]);
    res = await patch(hamlet, dm, { stream_id: ch });
    assert.deepEqual(res.body, err('Direct messages cannot be moved to channels.'));
  });

  it('a private channel the user cannot read is "Invalid channel ID", as a missing one', async () => {
    const { hamlet, admin } = t.users;
    const secret = await createChannel(t, admin, 'edit secret', [admin], { invite_only: true });
    const ch = await createChannel(t, hamlet, 'edit public', [hamlet]);
    const a = await sendToChannel(t, hamlet, ch, 'x', 'leak?');
    for (const stream_id of [secret, 999_999]) {
      const res = await patch(hamlet, a, { stream_id });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, err('Invalid channel ID'));
    }
  });

  it('prev_content_sha256 is checked on a topic edit too', async () => {
    const { hamlet } = t.users;
    const ch = await createChannel(t, hamlet, 'sha topic', [hamlet]);
    const a = await sendToChannel(t, hamlet, ch, 'x', 'the text');
    let res = await patch(hamlet, a, { topic: 'y', prev_content_sha256: 'f'.repeat(64) });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, err("'prev_content_sha256' value does not match the expected value.", 'EXPECTATION_MISMATCH'));
    const sha = crypto.createHash('sha256').update('the text').digest('hex');
    res = await patch(hamlet, a, { topic: 'y', prev_content_sha256: sha, send_notification_to_new_thread: false });
    assert.deepEqual(res.body, OK);
  });
});

describe('GET /messages/{message_id}/history: message_edit_history_visibility_policy', () => {
  it('"moves" shows moves only (content left out of mixed entries); "none" refuses', async () => {
    const { hamlet, admin } = t.users;
    const ch = await createChannel(t, hamlet, 'history moves', [hamlet, admin]);
    const ch2 = await createChannel(t, hamlet, 'history moves 2', [hamlet, admin]);
    now = T0 + 900_000;
    const a = await sendToChannel(t, hamlet, ch, 't0', 'c1');
    now += 10;
    assert.deepEqual((await patch(hamlet, a, { content: 'c2' })).body, OK);
    now += 10;
    assert.deepEqual((await patch(hamlet, a, { topic: 't1', send_notification_to_new_thread: false })).body, OK);
    now += 10;
    assert.deepEqual((await patch(hamlet, a, { topic: 't2', content: 'c3', send_notification_to_new_thread: false })).body, OK);
    now += 10;
    assert.deepEqual((await patch(admin, a, { stream_id: ch2, send_notification_to_new_thread: false })).body, OK);
    const base = T0 + 900_000;
    const p = (c: string) => `<p>${c}</p>`;
    const all = await t.api(hamlet, 'GET', `/messages/${a}/history`);
    assert.equal(all.body.message_history.length, 5);

    await setRealm({ message_edit_history_visibility_policy: 'moves' });
    try {
      const res = await t.api(hamlet, 'GET', `/messages/${a}/history`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, {
        ...SUCCESS,
        message_history: [
          { content: 'c1', rendered_content: p('c1'), timestamp: base, topic: 't0', user_id: hamlet.id },
          { content: 'c2', rendered_content: p('c2'), timestamp: base + 20, topic: 't1', prev_topic: 't0', user_id: hamlet.id },
          { content: 'c3', rendered_content: p('c3'), timestamp: base + 30, topic: 't2', prev_topic: 't1', user_id: hamlet.id },
          { content: 'c3', rendered_content: p('c3'), timestamp: base + 40, topic: 't2', prev_stream: ch, stream: ch2, user_id: admin.id },
        ],
      });
      await setRealm({ message_edit_history_visibility_policy: 'none' });
      const none = await t.api(hamlet, 'GET', `/messages/${a}/history`);
      assert.equal(none.status, 400);
      assert.deepEqual(none.body, err('Message edit history is disabled in this organization'));
    } finally {
      await setRealm({ message_edit_history_visibility_policy: 'all' });
    }
  });
});
