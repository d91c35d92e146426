// Notification Bot's messages about new channels: the announcement in the organization's new-channel
// announcements channel (announce=true), and the "channel events" message in each new channel; the
// first public channel becoming the announcements channel; all observed over the API and the wire.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, err, topicMessages as topicMessagesOf } from '../helpers/chat';
import { doCreateUser } from '../../src/actions/users';
import { ROLE } from '../../src/lib/roles';
import { addCatalogue } from '../../src/lib/i18n';

let t: TestServer;
before(async () => {
  t = await startTestServer({ channelEventsMessages: true });
});
after(() => t.close());

type Ev = Record<string, any>;

async function openQueue(user: TestUser, types?: string[]): Promise<{ id: string; state: Record<string, any> }> {
  const res = await t.api(user, 'POST', '/register', types ? { event_types: types } : { fetch_event_types: ['realm'] });
  assert.equal(res.status, 200, res.text);
  return { id: res.body.queue_id, state: res.body };
}

async function drain(user: TestUser, queueId: string): Promise<Ev[]> {
  const res = await t.api(user, 'GET', '/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  assert.equal(res.status, 200, res.text);
  return res.body.events.filter((e: Ev) => e.type !== 'heartbeat').map(({ id: _id, ...e }: Ev) => e);
}

/** The messages of a channel topic as `user` sees them: raw content and the fields that say who and where. */
const topicMessages = async (user: TestUser, channelId: number, topic: string) =>
  (await topicMessagesOf(t, user, channelId, topic)).map((m: Ev) => ({
    sender_full_name: m.sender_full_name,
    sender_email: m.sender_email,
    type: m.type,
    stream_id: m.stream_id,
    subject: m.subject,
    content: m.content,
    client: m.client,
    flags: m.flags,
  }));

let botEmail = '';
const notice = (channelId: number, topic: string, content: string, flags: string[]) => ({
  sender_full_name: 'Notification Bot',
  sender_email: botEmail,
  type: 'stream',
  stream_id: channelId,
  subject: topic,
  content,
  client: 'Internal',
  flags,
});

const mention = (u: TestUser) => `@_**${u.fullName}|${u.id}**`;

let general = 0;

describe('the first public channel', () => {
  it('becomes the new-channel and Zulip-update announcements channel, with realm update events', async () => {
    const { hamlet, othello } = t.users;
    const q = await openQueue(othello);
    assert.equal(q.state.realm_new_stream_announcements_stream_id, -1);
    assert.equal(q.state.realm_zulip_update_announcements_stream_id, -1);
    // A private channel first does not count.
    await createChannel(t, hamlet, 'hideout', [hamlet], { invite_only: true });
    const res = await t.api(hamlet, 'POST', '/channels/create', { name: 'general', subscribers: [hamlet.id, othello.id], description: 'Everyone **here**' });
    assert.deepEqual(res.body, { result: 'success', msg: '', id: res.body.id });
    general = res.body.id;
    const events = (await drain(othello, q.id)).filter((e) => e.type === 'realm');
    assert.deepEqual(events, [
      { type: 'realm', op: 'update', property: 'new_stream_announcements_stream_id', value: general },
      { type: 'realm', op: 'update', property: 'zulip_update_announcements_stream_id', value: general },
    ]);
    const state = (await openQueue(othello)).state;
    assert.equal(state.realm_new_stream_announcements_stream_id, general);
    assert.equal(state.realm_zulip_update_announcements_stream_id, general);
    assert.equal(state.realm_signup_announcements_stream_id, -1);
    // Later public channels leave the setting alone.
    await createChannel(t, hamlet, 'second', [hamlet]);
    assert.equal((await openQueue(othello)).state.realm_new_stream_announcements_stream_id, general);
  });

  it('gets the "channel events" message: read for the creator, unread for the other subscribers', async () => {
    const { hamlet, othello } = t.users;
    botEmail = (t.app.db.prepare("SELECT email FROM user WHERE full_name = 'Notification Bot'").get() as { email: string }).email;
    assert.match(botEmail, /^notification-bot@/);
    const content = `**Public** channel created by ${mention(hamlet)}. **Description:**\n\`\`\`\` quote\nEveryone **here**\n\`\`\`\``;
    assert.deepEqual(await topicMessages(hamlet, general, 'channel events'), [notice(general, 'channel events', content, ['read'])]);
    assert.deepEqual(await topicMessages(othello, general, 'channel events'), [notice(general, 'channel events', content, [])]);
    const res = await t.api(othello, 'GET', '/messages', {
      anchor: 'newest', num_before: 1, num_after: 0, narrow: [{ operator: 'channel', operand: general }],
    });
    assert.equal(
      res.body.messages[0].content,
      `<p><strong>Public</strong> channel created by <span class="user-mention silent" data-user-id="${hamlet.id}">King Hamlet</span>. <strong>Description:</strong></p>\n` +
        '<blockquote>\n<p>Everyone <strong>here</strong></p>\n</blockquote>',
    );
  });
});

describe('announce', () => {
  it('POST /channels/create with announce=true: the announcement, then the channel events message; events over the wire', async () => {
    const { hamlet, othello } = t.users;
    const qh = await openQueue(hamlet, ['message', 'update_message_flags']);
    const qo = await openQueue(othello, ['message']);
    const res = await t.api(hamlet, 'POST', '/channels/create', { name: 'design', subscribers: [hamlet.id], announce: true });
    assert.deepEqual(res.body, { result: 'success', msg: '', id: res.body.id });
    const design = res.body.id as number;
    const announcement = `${mention(hamlet)} created a new channel #**design**.`;
    assert.deepEqual(await topicMessages(othello, general, 'new channels'), [notice(general, 'new channels', announcement, [])]);
    assert.deepEqual(await topicMessages(hamlet, general, 'new channels'), [notice(general, 'new channels', announcement, ['read'])]);
    const created = `**Public** channel created by ${mention(hamlet)}. **Description:**\n\`\`\`\` quote\n*No description.*\n\`\`\`\``;
    assert.deepEqual(await topicMessages(hamlet, design, 'channel events'), [notice(design, 'channel events', created, ['read'])]);

    // Othello (in #general only) gets the announcement; Hamlet gets both, already read (no separate
    // flags event: the rows are written read, as Zulip's mark_as_read).
    const ofOthello = await drain(othello, qo.id);
    assert.deepEqual(
      ofOthello.map((e) => [e.type, e.message.subject, e.message.stream_id, e.flags]),
      [['message', 'new channels', general, []]],
    );
    const ofHamlet = await drain(hamlet, qh.id);
    const [annId, createdId] = ofHamlet.filter((e) => e.type === 'message').map((e) => e.message.id);
    assert.ok(annId < createdId);
    assert.deepEqual(
      ofHamlet.map((e) => (e.type === 'message' ? ['message', e.message.subject, e.flags] : e)),
      [
        ['message', 'new channels', ['read']],
        ['message', 'channel events', ['read']],
      ],
    );
  });

  it('POST /users/me/subscriptions creating several channels: one announcement listing them', async () => {
    const { othello } = t.users;
    const res = await t.api(othello, 'POST', '/users/me/subscriptions', {
      subscriptions: [{ name: 'alpha' }, { name: 'beta', description: 'Second one' }, { name: 'general' }],
      announce: true,
    });
    assert.deepEqual(res.body, {
      result: 'success',
      msg: '',
      subscribed: { [othello.id]: ['alpha', 'beta'] },
      already_subscribed: { [othello.id]: ['general'] },
      new_subscription_messages_sent: true,
    });
    const [ann] = (await topicMessages(othello, general, 'new channels')).slice(-1);
    assert.deepEqual(ann, notice(general, 'new channels', `${mention(othello)} created the following channels: #**alpha**, #**beta**.`, ['read']));
    const beta = (await t.api(othello, 'GET', '/get_stream_id', { stream: 'beta' })).body.stream_id;
    assert.deepEqual(await topicMessages(othello, beta, 'channel events'), [
      notice(beta, 'channel events', `**Public** channel created by ${mention(othello)}. **Description:**\n\`\`\`\` quote\nSecond one\n\`\`\`\``, ['read']),
    ]);
  });

  it('without announce, or with the announcements channel turned off: no announcement, still the channel events message', async () => {
    const { hamlet, admin } = t.users;
    const before = (await topicMessages(hamlet, general, 'new channels')).length;
    const quiet = await createChannel(t, hamlet, 'quiet', [hamlet]);
    assert.equal((await topicMessages(hamlet, general, 'new channels')).length, before);
    assert.equal((await topicMessages(hamlet, quiet, 'channel events')).length, 1);
    const off = await t.api(admin, 'PATCH', '/realm', { new_stream_announcements_stream_id: -1 });
    assert.deepEqual(off.body, { result: 'success', msg: '', new_stream_announcements_stream_id: -1 });
    await createChannel(t, hamlet, 'unannounced', [hamlet], { announce: true });
    assert.equal((await topicMessages(hamlet, general, 'new channels')).length, before);
    // Archiving the announcements channel turns the setting off (Zulip's
    // maybe_set_moderation_or_announcement_channels_none), with one update_dict event.
    const news = await createChannel(t, admin, 'news', [admin]);
    assert.equal((await t.api(admin, 'PATCH', '/realm', { new_stream_announcements_stream_id: news, signup_announcements_stream_id: news })).status, 200);
    const q = await openQueue(hamlet, ['realm']);
    assert.equal((await t.api(admin, 'DELETE', `/streams/${news}`)).status, 200);
    assert.deepEqual(await drain(hamlet, q.id), [
      { type: 'realm', op: 'update_dict', property: 'default', data: { new_stream_announcements_stream_id: -1, signup_announcements_stream_id: -1 } },
    ]);
    const state = (await openQueue(hamlet)).state;
    assert.deepEqual([state.realm_new_stream_announcements_stream_id, state.realm_signup_announcements_stream_id], [-1, -1]);
    await createChannel(t, hamlet, 'after archive', [hamlet], { announce: true });
    assert.equal((await topicMessages(admin, news, 'new channels')).length, 0);
    assert.equal((await t.api(admin, 'PATCH', '/realm', { new_stream_announcements_stream_id: general })).status, 200);
  });

  it('the creator outside the new channel: nothing marked read for them; web-public and private policy names', async () => {
    const { hamlet, othello } = t.users;
    const id = await createChannel(t, hamlet, 'for othello', [othello]);
    assert.deepEqual(await topicMessages(othello, id, 'channel events'), [
      notice(id, 'channel events', `**Public** channel created by ${mention(hamlet)}. **Description:**\n\`\`\`\` quote\n*No description.*\n\`\`\`\``, []),
    ]);
    // Notification Bot posts as a system bot: a private channel it is not subscribed to gets its
    // message too (as Zulip's cross-realm bots), and so does one where only the owner may post.
    const secret = await createChannel(t, hamlet, 'secret', [hamlet], { invite_only: true, history_public_to_subscribers: true });
    assert.deepEqual(await topicMessages(hamlet, secret, 'channel events'), [
      notice(secret, 'channel events', `**Private, shared history** channel created by ${mention(hamlet)}. **Description:**\n\`\`\`\` quote\n*No description.*\n\`\`\`\``, ['read']),
    ]);
    const quiet = await createChannel(t, hamlet, 'owner posts only', [hamlet], {
      can_send_message_group: { direct_members: [t.users.owner.id], direct_subgroups: [] },
    });
    assert.equal((await topicMessages(hamlet, quiet, 'channel events')).length, 1);
  });

  it('a channel that allows only the empty topic gets its message there', async () => {
    const { admin } = t.users;
    const id = await createChannel(t, admin, 'flat', [admin], { topics_policy: 'empty_topic_only' });
    assert.deepEqual(await topicMessages(admin, id, ''), [
      notice(id, '', `**Public** channel created by ${mention(admin)}. **Description:**\n\`\`\`\` quote\n*No description.*\n\`\`\`\``, ['read']),
    ]);
  });

  it('with send_channel_events_messages off, only the announcement', async () => {
    const { hamlet, admin } = t.users;
    const res = await t.api(admin, 'PATCH', '/realm', { send_channel_events_messages: false });
    assert.deepEqual(res.body, { result: 'success', msg: '', send_channel_events_messages: false });
    const id = await createChannel(t, hamlet, 'no events', [hamlet], { announce: true });
    assert.deepEqual(await topicMessages(hamlet, id, 'channel events'), []);
    const [ann] = (await topicMessages(hamlet, general, 'new channels')).slice(-1);
    assert.equal(ann.content, `${mention(hamlet)} created a new channel #**no events**.`);
    assert.equal((await t.api(admin, 'PATCH', '/realm', { send_channel_events_messages: true })).status, 200);
  });

  it('errors stay the creation errors: nothing is posted for a refused channel', async () => {
    const { hamlet, guest } = t.users;
    const before = (await topicMessages(hamlet, general, 'new channels')).length;
    assert.deepEqual((await t.api(guest, 'POST', '/channels/create', { name: 'nope', subscribers: [], announce: true })).body, err('Not allowed for guest users'));
    const dup = await t.api(hamlet, 'POST', '/channels/create', { name: 'design', subscribers: [], announce: true });
    assert.equal(dup.status, 409);
    assert.equal((await topicMessages(hamlet, general, 'new channels')).length, before);
  });
});

describe('POST /users/me/subscriptions subscribing other users: "subscribed you" direct messages', () => {
  /** The direct messages between `user` and Notification Bot, raw. */
  async function botDirectMessages(user: TestUser) {
    const res = await t.api(user, 'GET', '/messages', {
      anchor: 'oldest',
      num_before: 0,
      num_after: 200,
      apply_markdown: false,
      // A dm operand is a list of ids or a string of emails (Zulip's check_string_or_int_list).
      narrow: [{ operator: 'dm', operand: botEmail }],
    });
    assert.equal(res.status, 200, res.text);
    return res.body.messages.map((m: Ev) => ({ sender_email: m.sender_email, type: m.type, content: m.content, client: m.client, flags: m.flags }));
  }
  const dm = (content: string, flags: string[] = []) => ({ sender_email: botEmail, type: 'private', content, client: 'Internal', flags });

  it('tells each other human user about the existing channels: not the actor, not bots, not about channels just created', async () => {
    const { hamlet, othello, bot, moderator } = t.users;
    await createChannel(t, hamlet, 'lounge', [hamlet]);
    await createChannel(t, hamlet, 'kitchen', [hamlet]);
    const qo = await openQueue(othello, ['message']);
    const qh = await openQueue(hamlet, ['message']);
    const res = await t.api(hamlet, 'POST', '/users/me/subscriptions', {
      subscriptions: [{ name: 'lounge' }, { name: 'kitchen' }, { name: 'attic' }],
      principals: [othello.id, bot.id, hamlet.id],
    });
    assert.deepEqual(res.body, {
      result: 'success',
      msg: '',
      subscribed: { [othello.id]: ['lounge', 'kitchen', 'attic'], [bot.id]: ['lounge', 'kitchen', 'attic'], [hamlet.id]: ['attic'] },
      already_subscribed: { [hamlet.id]: ['lounge', 'kitchen'] },
      new_subscription_messages_sent: true,
    });
    // Stored without the trailing newline (message content is stripped, as in Zulip).
    const listed = `${mention(hamlet)} subscribed you to the following channels:\n\n* #**kitchen**\n* #**lounge**`;
    assert.deepEqual(await botDirectMessages(othello), [dm(listed)]);
    assert.deepEqual(await botDirectMessages(hamlet), []);
    assert.deepEqual(await botDirectMessages(bot), []);
    // Over the wire: Othello's message event (unread, a direct message); Hamlet gets the new channel's
    // "channel events" message only.
    const ofOthello = (await drain(othello, qo.id)).filter((e) => e.message.type === 'private');
    assert.deepEqual(
      ofOthello.map((e) => [e.message.sender_email, e.message.display_recipient.map((r: Ev) => r.id).sort(), e.flags]),
      [[botEmail, [othello.id, ofOthello[0].message.sender_id].sort(), []]],
    );
    assert.equal(ofOthello[0].message.content, listed); // the queue was registered without apply_markdown
    assert.deepEqual(
      (await drain(hamlet, qh.id)).map((e) => [e.message.type, e.message.subject]),
      [['stream', 'channel events']],
    );

    // One channel: the short form. An admin subscribing a moderator.
    const one = await t.api(t.users.admin, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'lounge' }], principals: [moderator.email] });
    assert.equal(one.body.new_subscription_messages_sent, true);
    assert.deepEqual(await botDirectMessages(moderator), [dm(`${mention(t.users.admin)} subscribed you to #**lounge**.`)]);
  });

  it('send_new_subscription_messages=false: no messages and no new_subscription_messages_sent', async () => {
    const { hamlet, admin } = t.users;
    await createChannel(t, admin, 'cellar', [admin]);
    const before = (await botDirectMessages(hamlet)).length;
    const res = await t.api(admin, 'POST', '/users/me/subscriptions', {
      subscriptions: [{ name: 'cellar' }],
      principals: [hamlet.id],
      send_new_subscription_messages: false,
    });
    assert.deepEqual(res.body, { result: 'success', msg: '', subscribed: { [hamlet.id]: ['cellar'] }, already_subscribed: {} });
    assert.equal((await botDirectMessages(hamlet)).length, before);
  });

  it('nobody is told when more than max_bulk_new_subscription_messages users are newly subscribed', async () => {
    const { admin, hamlet } = t.users;
    const q = await openQueue(admin, ['message']);
    assert.equal(q.state.max_bulk_new_subscription_messages ?? 100, 100);
    const realmId = (t.app.db.prepare('SELECT realm_id FROM user WHERE id = ?').get(admin.id) as { realm_id: number }).realm_id;
    const crowd: number[] = [];
    for (let i = 0; i < 100; i++) {
      crowd.push(doCreateUser(t.app, { realmId, email: `crowd${i}@example.com`, password: null, fullName: `Crowd ${i}`, role: ROLE.MEMBER, acting: null }).userId);
    }
    t.app.batch.commit();
    await createChannel(t, admin, 'stadium', [admin]);
    await createChannel(t, admin, 'arena', [admin]);
    const count = () => (t.app.db.prepare('SELECT count(*) AS n FROM message WHERE direct_group_id IS NOT NULL').get() as { n: number }).n;
    const before = count();
    // 101 new subscribers (Hamlet and the crowd): no messages, and the answer says so.
    const big = await t.api(admin, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'stadium' }], principals: [hamlet.id, ...crowd] });
    assert.equal(Object.keys(big.body.subscribed).length, 101);
    assert.equal(big.body.new_subscription_messages_sent, false);
    assert.equal(count(), before);
    // The same crowd and the admin (already subscribed) to the other channel: 100 new, all told.
    const fits = await t.api(admin, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'arena' }], principals: [admin.id, ...crowd] });
    assert.equal(Object.keys(fits.body.subscribed).length, 100);
    assert.equal(fits.body.new_subscription_messages_sent, true);
    assert.equal(count(), before + 100);
  });
});

describe('notices in the "channel events" topic when a channel changes', () => {
  const groupId = (name: string) => (t.app.db.prepare('SELECT id FROM user_group WHERE name = ?').get(name) as { id: number }).id;
  /** The notices after the channel's creation message. */
  const laterNotices = async (user: TestUser, id: number) => (await topicMessages(user, id, 'channel events')).slice(1);

  it('rename and description (Zulip\'s do_rename_stream, send_change_stream_description_notification), after the update events', async () => {
    const { hamlet, othello } = t.users;
    const id = await createChannel(t, hamlet, 'old-name', [hamlet, othello], { description: 'Before' });
    const q = await openQueue(othello, ['stream', 'message']);
    let res = await t.api(hamlet, 'PATCH', `/streams/${id}`, { new_name: 'new-name' });
    assert.deepEqual(res.body, { result: 'success', msg: '' });
    res = await t.api(hamlet, 'PATCH', `/streams/${id}`, { description: '' });
    assert.deepEqual(res.body, { result: 'success', msg: '' });
    const renamed = `${mention(hamlet)} renamed channel **old-name** to **new-name**.`;
    const described =
      `${mention(hamlet)} changed the description for this channel.\n\n` +
      '* **Old description:**\n```` quote\nBefore\n````\n* **New description:**\n```` quote\n*No description.*\n````';
    assert.deepEqual(await laterNotices(othello, id), [notice(id, 'channel events', renamed, []), notice(id, 'channel events', described, [])]);
    assert.deepEqual(
      (await drain(othello, q.id)).map((e) => (e.type === 'stream' ? [e.type, e.property] : [e.type, e.message.content])),
      [['stream', 'name'], ['message', renamed], ['stream', 'description'], ['message', described]],
    );
  });

  it('access permissions (send_change_stream_permission_notification)', async () => {
    const { hamlet } = t.users;
    const id = await createChannel(t, hamlet, 'access-notice', [hamlet]);
    const res = await t.api(hamlet, 'PATCH', `/streams/${id}`, { is_private: true });
    assert.deepEqual(res.body, { result: 'success', msg: '' });
    assert.deepEqual(await laterNotices(hamlet, id), [
      notice(
        id,
        'channel events',
        `${mention(hamlet)} changed the [access permissions](/help/channel-permissions) for this channel from **Public** to **Private, protected history**.`,
        [],
      ),
    ]);
  });

  it('posting permissions (send_stream_posting_permission_update_notification): groups, then users, by id', async () => {
    const { hamlet, othello } = t.users;
    const id = await createChannel(t, hamlet, 'posting-notice', [hamlet]);
    const res = await t.api(hamlet, 'PATCH', `/streams/${id}`, {
      can_send_message_group: { new: { direct_members: [othello.id, hamlet.id], direct_subgroups: [groupId('role:moderators')] } },
    });
    assert.deepEqual(res.body, { result: 'success', msg: '' });
    // Stored without the trailing newline (message content is stripped, as in Zulip).
    assert.deepEqual(await laterNotices(hamlet, id), [
      notice(
        id,
        'channel events',
        `${mention(hamlet)} changed the [posting permissions](/help/channel-posting-policy) for this channel:\n\n` +
          `* **Old**: @_*role:everyone*\n* **New**: @_*role:moderators*, ${mention(hamlet)}, ${mention(othello)}`,
        [],
      ),
    ]);
    // Other group settings get no notice.
    await t.api(hamlet, 'PATCH', `/streams/${id}`, { can_resolve_topics_group: { new: groupId('role:members') } });
    assert.equal((await laterNotices(hamlet, id)).length, 1);
  });

  it('topics policy (do_set_stream_property): a notice and an event per change, nothing for the current value', async () => {
    const { hamlet } = t.users;
    const id = await createChannel(t, hamlet, 'topics-notice', [hamlet]);
    const q = await openQueue(hamlet, ['stream']);
    let res = await t.api(hamlet, 'PATCH', `/streams/${id}`, { topics_policy: 'disable_empty_topic' });
    assert.deepEqual(res.body, { result: 'success', msg: '' });
    res = await t.api(hamlet, 'PATCH', `/streams/${id}`, { topics_policy: 'disable_empty_topic' });
    assert.deepEqual(res.body, { result: 'success', msg: '' });
    assert.deepEqual(await laterNotices(hamlet, id), [
      notice(id, 'channel events', `${mention(hamlet)} changed the "Allow posting to the *general chat* topic?" setting from **Automatic** to **No *general chat* topic**.`, []),
    ]);
    assert.deepEqual(
      (await drain(hamlet, q.id)).map((e) => [e.type, e.property, e.value]),
      [['stream', 'topics_policy', 'disable_empty_topic']],
    );
  });

  it('message retention (send_change_stream_message_retention_days_notification), sent even for the same value', async () => {
    const { hamlet, owner } = t.users;
    const id = await createChannel(t, hamlet, 'retention-notice', [hamlet]);
    for (const days of [30, 'unlimited', 'unlimited']) {
      const res = await t.api(owner, 'PATCH', `/streams/${id}`, { message_retention_days: days });
      assert.deepEqual(res.body, { result: 'success', msg: '' });
    }
    const changed = (before: string, after: string, summary: string) =>
      `${mention(owner)} has changed the [message retention period](/help/message-retention-policy) for this channel:\n` +
      `* **Old retention period**: ${before}\n* **New retention period**: ${after}\n\n${summary}`;
    assert.deepEqual(await laterNotices(hamlet, id), [
      // The organization keeps messages forever here: the channel's default was "Forever".
      notice(id, 'channel events', changed('Forever', '30 days', 'Messages in this channel will now be automatically deleted 30 days after they are sent.'), []),
      notice(id, 'channel events', changed('30 days', 'Forever', 'Messages in this channel will now be retained forever.'), []),
      // zulip-compat: Zulip words forever-to-forever this way too.
      notice(id, 'channel events', changed('Forever', '-1 days', 'Messages in this channel will now be automatically deleted -1 days after they are sent.'), []),
    ]);
  });

  it('archiving (do_deactivate_stream): read for everyone, its message event after the delete event', async () => {
    const { hamlet, othello } = t.users;
    const id = await createChannel(t, hamlet, 'archive-notice', [hamlet, othello]);
    const q = await openQueue(othello, ['stream', 'message']);
    const res = await t.api(hamlet, 'DELETE', `/streams/${id}`);
    assert.deepEqual(res.body, { result: 'success', msg: '' });
    const archived = 'Channel #**archive-notice** has been archived.';
    assert.deepEqual(await laterNotices(othello, id), [notice(id, 'channel events', archived, ['read'])]);
    assert.deepEqual(
      (await drain(othello, q.id)).map((e) => (e.type === 'stream' ? [e.type, e.op] : [e.type, e.message.content, e.flags])),
      [['stream', 'delete'], ['message', archived, ['read']]],
    );
    // Unarchiving says so too.
    assert.deepEqual((await t.api(hamlet, 'PATCH', `/streams/${id}`, { is_archived: false })).body, { result: 'success', msg: '' });
    assert.deepEqual((await laterNotices(othello, id)).map((m: Ev) => m.content), [archived, 'Channel #**archive-notice** has been unarchived.']);
  });
});

describe("Notification Bot's language", () => {
  it("channel notices in the organization's default language, \"subscribed you\" in the recipient's", async () => {
    const { admin, hamlet, othello } = t.users;
    // Parley ships English only; a catalogue added here stands for a translation.
    addCatalogue('de', {
      '{user_name} renamed channel {old_channel_name} to {new_channel_name}.': '{user_name} hat den Kanal {old_channel_name} in {new_channel_name} umbenannt.',
      '{user_full_name} subscribed you to {channel_name}.': '{user_full_name} hat dich für {channel_name} angemeldet.',
    });
    const id = await createChannel(t, hamlet, 'sprache', [hamlet]);
    assert.equal((await t.api(admin, 'PATCH', '/realm', { default_language: 'de' })).status, 200);
    try {
      assert.equal((await t.api(hamlet, 'PATCH', `/streams/${id}`, { new_name: 'sprache-2' })).status, 200);
      const notices = await topicMessages(hamlet, id, 'channel events');
      assert.equal(notices[notices.length - 1].content, `${mention(hamlet)} hat den Kanal **sprache** in **sprache-2** umbenannt.`);
      // Othello reads English: his "subscribed you" message is in his language, not the organization's.
      assert.equal((await t.api(hamlet, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'sprache-2' }], principals: [othello.id] })).status, 200);
      const dms = await t.api(othello, 'GET', '/messages', { anchor: 'newest', num_before: 1, num_after: 0, apply_markdown: false, narrow: [{ operator: 'is', operand: 'dm' }] });
      assert.equal(dms.body.messages[0].content, `${mention(hamlet)} subscribed you to #**sprache-2**.`);
      // With German as his language, he reads it in German.
      assert.equal((await t.api(othello, 'PATCH', '/settings', { default_language: 'de' })).status, 200);
      await createChannel(t, hamlet, 'sprache-3', [hamlet]);
      await t.api(hamlet, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'sprache-3' }], principals: [othello.id] });
      const again = await t.api(othello, 'GET', '/messages', { anchor: 'newest', num_before: 1, num_after: 0, apply_markdown: false, narrow: [{ operator: 'is', operand: 'dm' }] });
      assert.equal(again.body.messages[0].content, `${mention(hamlet)} hat dich für #**sprache-3** angemeldet.`);
    } finally {
      await t.api(othello, 'PATCH', '/settings', { default_language: 'en' });
      await t.api(admin, 'PATCH', '/realm', { default_language: 'en' });
    }
  });
});
