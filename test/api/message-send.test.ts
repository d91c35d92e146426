// POST /messages as Zulip's send path decides it: addressing (extract_stream_indicator,
// extract_private_recipients, Addressee.legacy_build), access (access_stream_for_send_message),
// direct-message permissions (check_can_send_direct_message), wildcard and group mention
// permissions, and the content normalisation of normalize_body.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { basicAuth, startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, err, sendDirect, sendToChannel, systemGroups } from '../helpers/chat';

let t: TestServer;
let general: number;
before(async () => {
  t = await startTestServer();
  general = await createChannel(t, t.users.owner, 'send-general', [t.users.owner, t.users.hamlet, t.users.othello, t.users.guest]);
});
after(() => t.close());

async function send(user: TestUser, params: Record<string, unknown>) {
  return t.api(user, 'POST', '/messages', { content: 'x', ...params });
}

async function readBack(user: TestUser, id: number) {
  const res = await t.api(user, 'GET', `/messages/${id}`, { allow_empty_topic_name: true });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

async function patchRealm(params: Record<string, unknown>) {
  const res = await t.api(t.users.owner, 'PATCH', '/realm', params);
  assert.equal(res.status, 200, res.text);
}

describe('POST /messages addressing', () => {
  it('reads `to` as Zulip does: a string is a name, a number an id, a list one of either', async () => {
    const numeric = await createChannel(t, t.users.owner, '2024', [t.users.hamlet]);
    // A JSON-quoted number is a channel name.
    let res = await send(t.users.hamlet, { type: 'channel', to: JSON.stringify('2024'), topic: 't' });
    assert.equal(res.status, 200, res.text);
    assert.equal((await readBack(t.users.hamlet, res.body.id)).message.stream_id, numeric);
    res = await send(t.users.hamlet, { type: 'channel', to: `["send-general"]`, topic: 't' });
    assert.equal((await readBack(t.users.hamlet, res.body.id)).message.stream_id, general);
    res = await send(t.users.hamlet, { type: 'channel', to: ' send-general ', topic: 't' });
    assert.equal((await readBack(t.users.hamlet, res.body.id)).message.stream_id, general, 'the name is trimmed');
    res = await send(t.users.hamlet, { type: 'channel', to: `[${general}, "x"]`, topic: 't' });
    assert.deepEqual(res.body, err('Expected exactly one channel'));
    res = await send(t.users.hamlet, { type: 'channel', to: '{"a": 1}', topic: 't' });
    assert.deepEqual(res.body, err('Invalid data type for channel'));
    res = await send(t.users.hamlet, { type: 'channel', to: '   ', topic: 't' });
    assert.deepEqual(res.body, err("Channel name can't be empty."));
    res = await send(t.users.hamlet, { type: 'channel', topic: 't' });
    assert.deepEqual(res.body, err('Missing channel'));
  });

  it('reads direct recipients as ids or emails, not both, and trims emails', async () => {
    const u = t.users;
    let res = await send(u.hamlet, { type: 'direct', to: String(u.othello.id) });
    assert.deepEqual(res.body, err('Invalid data type for recipients'));
    res = await send(u.hamlet, { type: 'direct', to: JSON.stringify([u.othello.id, u.owner.email]) });
    assert.deepEqual(res.body, err('Recipient lists may contain emails or user IDs, but not both.'));
    res = await send(u.hamlet, { type: 'direct', to: JSON.stringify([u.owner.email, u.othello.id]) });
    assert.deepEqual(res.body, err('Recipient lists may contain emails or user IDs, but not both.'));
    res = await send(u.hamlet, { type: 'direct', to: ` ${u.othello.email} ,${u.othello.email}, ` });
    assert.equal(res.status, 200, res.text);
    const m = (await readBack(u.hamlet, res.body.id)).message;
    assert.deepEqual(m.display_recipient.map((r: { id: number }) => r.id).sort(), [u.hamlet.id, u.othello.id].sort());
    res = await send(u.hamlet, { type: 'direct' });
    assert.deepEqual(res.body, err('Message must have recipients'));
  });

  it('a bot without `to` posts to its default sending channel', async () => {
    const bot = t.users.bot;
    const res = await t.api(t.users.hamlet, 'PATCH', `/bots/${bot.id}`, { default_sending_stream: 'send-general' });
    assert.equal(res.status, 200, res.text);
    const sent = await send(bot, { type: 'channel', topic: 'defaults' });
    assert.equal(sent.status, 200, sent.text);
    assert.equal((await readBack(t.users.hamlet, sent.body.id)).message.stream_id, general);
  });

  it('drops leading blank lines and trailing whitespace (normalize_body)', async () => {
    const res = await send(t.users.hamlet, { type: 'channel', to: general, topic: 't', content: '\n\n  indented\n\n' });
    assert.equal((await readBack(t.users.hamlet, res.body.id)).raw_content, '  indented');
  });

  it('normalises content in linear time: a long run of whitespace inside the text, or a huge message, does not stall the server', async () => {
    // /\s+$/ retried its \s+ from every character of a run not at the end: 100,000 spaces before a
    // letter took seconds (quadratic), and every other request waited.
    // (Their time is measured in bench/security-bounds.ts.)
    const res = await send(t.users.hamlet, { type: 'channel', to: general, topic: 't', content: 'a' + ' '.repeat(100_000) + 'b \u3000\n' });
    assert.equal(res.status, 200, res.text);
    // As large as the body limit takes (é is 6 bytes percent-encoded).
    const huge = await send(t.users.hamlet, { type: 'channel', to: general, topic: 't'.repeat(100_000), content: 'é'.repeat(900_000) });
    assert.equal(huge.status, 200, huge.text);
    // The text is kept up to the limit, then Zulip's truncation notice, as before.
    const kept = (await readBack(t.users.hamlet, res.body.id)).raw_content as string;
    assert.equal([...kept].length, 10_000);
    assert.ok(kept.startsWith('a   ') && kept.endsWith(' \n[message truncated]'));
    const cut = await readBack(t.users.hamlet, huge.body.id);
    assert.equal(cut.raw_content, 'é'.repeat(10_000 - 20) + '\n[message truncated]');
    assert.equal(cut.message.subject, 't'.repeat(57) + '...');
  });

  it('renders in linear time what used to be trimmed by backtracking: blank lines inside code, spaces inside <time:…>', async () => {
    // /^\n+|\n+$/g and Python's strip as /^[ws]+|[ws]+$/g retried their second half from every
    // character of a run inside the text: ~60 ms per trim of a code block with 10,000 blank lines in
    // it (trimmed three times), ~90 ms for a <time:> with 9000 spaces.
    const contents = ['```\n\na' + '\n'.repeat(9000) + 'b\n\n```', '    a' + '\n'.repeat(9000) + '    b', '<time:2020 ' + ' '.repeat(9000) + 'x>'];
    // (Their time is measured in bench/security-bounds.ts.)
    const rendered: string[] = [];
    for (const content of contents) {
      const res = await t.api(t.users.hamlet, 'POST', '/messages/render', { content });
      assert.equal(res.status, 200, res.text);
      rendered.push(res.body.rendered);
    }
    // The same HTML as before: the blank lines around the code go, those inside stay.
    const code = `<div class="codehilite"><pre><span></span><code>a${'\n'.repeat(9000)}b\n</code></pre></div>`;
    assert.deepEqual(rendered.slice(0, 2), [code, code]);
    assert.match(rendered[2], /^<p><span class="timestamp-error">Invalid time format: 2020 +x<\/span><\/p>$/);
  });
});

describe('POST /messages access', () => {
  it('refuses an archived channel by id and by name as not authorized, not as missing', async () => {
    const c = await createChannel(t, t.users.owner, 'send-archived', [t.users.hamlet]);
    assert.equal((await t.api(t.users.owner, 'DELETE', `/streams/${c}`)).status, 200);
    const refused = err("Not authorized to send to channel 'send-archived'");
    assert.deepEqual((await send(t.users.hamlet, { type: 'channel', to: c, topic: 't' })).body, refused);
    assert.deepEqual((await send(t.users.hamlet, { type: 'channel', to: 'send-archived', topic: 't' })).body, refused);
  });

  it('a bot may post to a private channel its owner is subscribed to', async () => {
    // The seeded bot belongs to hamlet.
    const c = await createChannel(t, t.users.hamlet, 'send-owner-private', [t.users.hamlet], { invite_only: true });
    const res = await send(t.users.bot, { type: 'channel', to: c, topic: 't' });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual((await send(t.users.othello, { type: 'channel', to: c, topic: 't' })).body, err("Not authorized to send to channel 'send-owner-private'"));
  });

  it('a bot may start a topic where its owner may (can_create_topic_group), as on moves', async () => {
    const c = await createChannel(t, t.users.hamlet, 'send-owner-topics', [t.users.hamlet, t.users.othello], {
      can_create_topic_group: { direct_members: [t.users.hamlet.id], direct_subgroups: [] },
    });
    const res = await send(t.users.bot, { type: 'channel', to: c, topic: 'started by a bot' });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual((await send(t.users.othello, { type: 'channel', to: c, topic: 'new one' })).body, err('You do not have permission to create new topics in this channel.'));
    // An existing topic takes anyone who may post.
    assert.equal((await send(t.users.othello, { type: 'channel', to: c, topic: 'started by a bot' })).status, 200);
  });

  it("a bot borrows only an active owner's access: reactivated without its owner, it reaches nothing of theirs", async () => {
    // Carol, a member whose bot posts to her private channel and starts topics where only she may.
    const made = await t.api(t.users.admin, 'POST', '/users', { email: 'carol@example.com', password: 'carol-password-1', full_name: 'Carol' });
    assert.equal(made.status, 200, made.text);
    const key = await t.api(null, 'POST', '/fetch_api_key', { username: 'carol@example.com', password: 'carol-password-1' });
    const carol: TestUser = { id: made.body.user_id, email: 'carol@example.com', apiKey: key.body.api_key, password: '', fullName: 'Carol' };
    const created = await t.api(carol, 'POST', '/bots', { full_name: 'Carol Bot', short_name: 'carol' });
    assert.equal(created.status, 200, created.text);
    const bot: TestUser = { id: created.body.user_id, email: 'carol-bot@example.com', apiKey: created.body.api_key, password: '', fullName: 'Carol Bot' };
    const priv = await createChannel(t, carol, 'send-carol-private', [carol], { invite_only: true });
    const topics = await createChannel(t, carol, 'send-carol-topics', [carol, t.users.othello], {
      can_create_topic_group: { direct_members: [carol.id], direct_subgroups: [] },
    });
    const announce = await createChannel(t, carol, 'send-carol-announce', [carol], {
      can_send_message_group: { direct_members: [carol.id], direct_subgroups: [] },
    });
    assert.equal((await send(bot, { type: 'channel', to: priv, topic: 't' })).status, 200);
    assert.equal((await send(bot, { type: 'channel', to: topics, topic: 'by the bot' })).status, 200);
    assert.equal((await send(bot, { type: 'channel', to: announce, topic: 't' })).status, 200);

    // Carol leaves (her bot with her); an administrator brings the bot back, but not Carol.
    assert.equal((await t.api(t.users.admin, 'DELETE', `/users/${carol.id}`)).status, 200);
    assert.equal((await t.api(t.users.admin, 'POST', `/users/${bot.id}/reactivate`)).status, 200);
    // It came back with a new key (Carol knew the old one), which the administrator reads.
    bot.apiKey = (await t.api(t.users.admin, 'GET', `/bots/${bot.id}/api_key`)).body.api_key;
    assert.deepEqual((await send(bot, { type: 'channel', to: priv, topic: 't' })).body, err("Not authorized to send to channel 'send-carol-private'"));
    assert.deepEqual(
      (await send(bot, { type: 'channel', to: topics, topic: 'another' })).body,
      err('You do not have permission to create new topics in this channel.'),
    );
    assert.deepEqual((await send(bot, { type: 'channel', to: announce, topic: 't' })).body, err('You do not have permission to post in this channel.'));
  });
});

describe('POST /messages direct-message permissions', () => {
  it('direct_message_permission_group: someone in the conversation must be in it', async () => {
    const g = systemGroups(t);
    const u = t.users;
    await patchRealm({ direct_message_permission_group: JSON.stringify({ new: g['role:nobody'] }) });
    assert.deepEqual((await send(u.hamlet, { type: 'direct', to: JSON.stringify([u.othello.id]) })).body, err('Direct messages are disabled in this organization.'));
    // To oneself and to bots is always allowed.
    assert.equal((await send(u.hamlet, { type: 'direct', to: JSON.stringify([u.hamlet.id]) })).status, 200);
    assert.equal((await send(u.hamlet, { type: 'direct', to: JSON.stringify([u.bot.id]) })).status, 200);
    await patchRealm({ direct_message_permission_group: JSON.stringify({ new: g['role:administrators'] }) });
    assert.deepEqual(
      (await send(u.hamlet, { type: 'direct', to: JSON.stringify([u.othello.id]) })).body,
      err('This conversation does not include any users who can authorize it.'),
    );
    assert.equal((await send(u.hamlet, { type: 'direct', to: JSON.stringify([u.admin.id]) })).status, 200, 'an administrator in the conversation authorizes it');
    await patchRealm({ direct_message_permission_group: JSON.stringify({ new: g['role:everyone'] }) });
  });

  it('direct_message_initiator_group: others may only write in conversations that exist', async () => {
    const g = systemGroups(t);
    const u = t.users;
    await patchRealm({ direct_message_initiator_group: JSON.stringify({ new: g['role:administrators'] }) });
    assert.deepEqual(
      (await send(u.hamlet, { type: 'direct', to: JSON.stringify([u.moderator.id]) })).body,
      err('You do not have permission to initiate direct message conversations.'),
    );
    // An administrator starts a conversation; hamlet may answer in it.
    await sendDirect(t, u.admin, [u.hamlet], 'hello hamlet');
    assert.equal((await send(u.hamlet, { type: 'direct', to: JSON.stringify([u.admin.id]) })).status, 200);
    await patchRealm({ direct_message_initiator_group: JSON.stringify({ new: g['role:everyone'] }) });
  });
});

describe('POST /messages mention permissions', () => {
  it('a topic wildcard counts the topic’s participants, and mentions only them', async () => {
    const u = t.users;
    const many: TestUser[] = [];
    for (let i = 0; i < 17; i++) {
      const res = await t.api(u.owner, 'POST', '/users', { email: `many${i}@example.com`, password: 'pw-many-users', full_name: `Many ${i}` });
      assert.equal(res.status, 200, res.text);
      many.push({ id: res.body.user_id, email: `many${i}@example.com`, apiKey: '', password: '', fullName: `Many ${i}` });
    }
    const c = await createChannel(t, u.owner, 'send-crowd', [u.hamlet, u.othello, ...many]);
    // A channel of 20: a channel wildcard needs can_mention_many_users_group (administrators).
    assert.deepEqual(
      (await send(u.hamlet, { type: 'channel', to: c, topic: 'quiet', content: '@**all** hi' })).body,
      err('You do not have permission to use channel wildcard mentions in this channel.', 'STREAM_WILDCARD_MENTION_NOT_ALLOWED'),
    );
    // A topic with two participants: fine, and only they are mentioned.
    await sendToChannel(t, u.othello, c, 'quiet', 'first');
    const res = await send(u.hamlet, { type: 'channel', to: c, topic: 'quiet', content: '@**topic** look' });
    assert.equal(res.status, 200, res.text);
    const flags = t.app.db.prepare('SELECT user_id, flags FROM usermessage WHERE message_id = ? AND (flags & 32) <> 0 ORDER BY user_id').all(res.body.id);
    assert.deepEqual(flags.map((r: any) => r.user_id), [u.hamlet.id, u.othello.id].sort((a, b) => a - b));
  });

  it('a group mention needs the group’s can_mention_group; a silent one does not', async () => {
    const g = systemGroups(t);
    const created = await t.api(t.users.owner, 'POST', '/user_groups/create', {
      name: 'leads',
      description: 'd',
      members: JSON.stringify([t.users.othello.id]),
      can_mention_group: JSON.stringify(g['role:administrators']),
    });
    assert.equal(created.status, 200, created.text);
    assert.deepEqual(
      (await send(t.users.hamlet, { type: 'channel', to: general, topic: 't', content: 'ping @*leads*' })).body,
      err("You are not allowed to mention user group 'leads'."),
    );
    assert.equal((await send(t.users.hamlet, { type: 'channel', to: general, topic: 't', content: 'ping @_*leads*' })).status, 200);
    assert.equal((await send(t.users.admin, { type: 'channel', to: general, topic: 't', content: 'ping @*leads*' })).status, 200);
  });
});

describe('message objects', () => {
  it('show edit history as message_edit_history_visibility_policy allows, and resolving is not a move', async () => {
    const u = t.users;
    const id = await sendToChannel(t, u.hamlet, general, 'history', 'before');
    let res = await t.api(u.hamlet, 'PATCH', `/messages/${id}`, { content: 'after' });
    assert.equal(res.status, 200, res.text);
    res = await t.api(u.hamlet, 'PATCH', `/messages/${id}`, { topic: 'history moved', send_notification_to_new_thread: false });
    assert.equal(res.status, 200, res.text);
    const fetchOne = async () => (await t.api(u.othello, 'GET', '/messages', { message_ids: JSON.stringify([id]), narrow: JSON.stringify([{ operator: 'channel', operand: general }]) })).body.messages[0];
    let m = await fetchOne();
    assert.deepEqual(m.edit_history.map((e: Record<string, unknown>) => Object.keys(e).sort()), [
      ['prev_topic', 'timestamp', 'topic', 'user_id'],
      ['prev_content', 'prev_rendered_content', 'prev_rendered_content_version', 'timestamp', 'user_id'],
    ]);
    await patchRealm({ message_edit_history_visibility_policy: 'moves' });
    m = await fetchOne();
    assert.deepEqual(m.edit_history.map((e: Record<string, unknown>) => Object.keys(e).sort()), [['prev_topic', 'timestamp', 'topic', 'user_id']]);
    assert.equal(typeof m.last_edit_timestamp, 'number');
    await patchRealm({ message_edit_history_visibility_policy: 'none' });
    m = await fetchOne();
    assert.equal('edit_history' in m, false);
    assert.equal(typeof m.last_moved_timestamp, 'number');
    await patchRealm({ message_edit_history_visibility_policy: 'all' });
    // Resolving a topic is not a move.
    const r = await sendToChannel(t, u.hamlet, general, 'to resolve', 'x');
    res = await t.api(u.hamlet, 'PATCH', `/messages/${r}`, { topic: '✔ to resolve', send_notification_to_new_thread: false });
    assert.equal(res.status, 200, res.text);
    const resolved = (await readBack(u.othello, r)).message;
    assert.equal(resolved.subject, '✔ to resolve');
    assert.equal('last_moved_timestamp' in resolved, false);
  });
});


describe('automatic topic visibility after a send', () => {
  const userTopics = async (user: TestUser) => {
    const res = await t.api(user, 'POST', '/register', { event_types: JSON.stringify(['user_topic']), fetch_event_types: JSON.stringify(['user_topic']) });
    assert.equal(res.status, 200, res.text);
    return (res.body.user_topics as { stream_id: number; topic_name: string; visibility_policy: number }[]).map((x) => [x.stream_id, x.topic_name, x.visibility_policy]);
  };

  it('the sender follows a topic they start (the default), and the reply says so; later messages change nothing', async () => {
    const u = t.users;
    const c = await createChannel(t, u.owner, 'auto-follow', [u.hamlet, u.othello]);
    let res = await send(u.hamlet, { type: 'channel', to: c, topic: 'fresh' });
    assert.deepEqual(res.body, { result: 'success', msg: '', id: res.body.id, automatic_new_visibility_policy: 3 });
    res = await send(u.hamlet, { type: 'channel', to: c, topic: 'fresh' });
    assert.deepEqual(res.body, { result: 'success', msg: '', id: res.body.id });
    // othello did not start it: nothing for him.
    res = await send(u.othello, { type: 'channel', to: c, topic: 'fresh' });
    assert.deepEqual(res.body, { result: 'success', msg: '', id: res.body.id });
    assert.deepEqual((await userTopics(u.hamlet)).filter(([s]) => s === c), [[c, 'fresh', 3]]);
    assert.deepEqual((await userTopics(u.othello)).filter(([s]) => s === c), []);
  });

  it('mentioned people who asked for it follow the topic, unless they muted it', async () => {
    const u = t.users;
    const c = await createChannel(t, u.owner, 'auto-mention', [u.hamlet, u.othello, u.moderator]);
    await sendToChannel(t, u.hamlet, c, 'talk', 'first');
    const muted = await t.api(u.moderator, 'POST', '/user_topics', { stream_id: c, topic: 'talk', visibility_policy: 1 });
    assert.equal(muted.status, 200, muted.text);
    await sendToChannel(t, u.hamlet, c, 'talk', '@**Othello** @**Shiva** look');
    assert.deepEqual((await userTopics(u.othello)).filter(([s]) => s === c), [[c, 'talk', 3]]);
    assert.deepEqual((await userTopics(u.moderator)).filter(([s]) => s === c), [[c, 'talk', 1]]);
  });

  it('a mentioned bot, and a mentioned user who turned the setting off, follow nothing; a mention by name ignores case', async () => {
    const u = t.users;
    const c = await createChannel(t, u.owner, 'auto-mention-off', [u.hamlet, u.othello, u.admin, u.bot]);
    await sendToChannel(t, u.hamlet, c, 'quiet', 'first');
    let res = await t.api(u.admin, 'PATCH', '/settings', { automatically_follow_topics_where_mentioned: false });
    assert.equal(res.status, 200, res.text);
    res = await send(u.hamlet, { type: 'channel', to: c, topic: 'quiet', content: '@**iago** @**Helper Bot** @**OTHELLO** look' });
    assert.deepEqual(res.body, { result: 'success', msg: '', id: res.body.id });
    const m = (await readBack(u.othello, res.body.id)).message;
    assert.equal(
      m.content,
      `<p><span class="user-mention" data-user-id="${u.admin.id}">@Iago</span> <span class="user-mention" data-user-id="${u.bot.id}">@Helper Bot</span> ` +
        `<span class="user-mention" data-user-id="${u.othello.id}">@Othello</span> look</p>`,
    );
    assert.deepEqual(m.flags, ['mentioned']);
    assert.deepEqual((await userTopics(u.othello)).filter(([s]) => s === c), [[c, 'quiet', 3]]);
    assert.deepEqual((await userTopics(u.admin)).filter(([s]) => s === c), []);
    res = await t.api(u.admin, 'PATCH', '/settings', { automatically_follow_topics_where_mentioned: true });
    assert.equal(res.status, 200, res.text);
  });

  it('the defaults are Zulip’s: follow topics one starts (3), unmute on send in muted channels (2), follow where mentioned', async () => {
    const res = await t.api(t.users.othello, 'POST', '/register', { fetch_event_types: JSON.stringify(['user_settings', 'realm_user_settings_defaults']) });
    assert.equal(res.status, 200, res.text);
    const pick = (o: Record<string, unknown>) => [o.automatically_follow_topics_policy, o.automatically_unmute_topics_in_muted_streams_policy, o.automatically_follow_topics_where_mentioned];
    assert.deepEqual(pick(res.body.user_settings), [3, 2, true]);
    assert.deepEqual(pick(res.body.realm_user_settings_defaults), [3, 2, true]);
  });

  it('sending in a muted channel unmutes the topic, per automatically_unmute_topics_in_muted_streams_policy', async () => {
    const u = t.users;
    const c = await createChannel(t, u.owner, 'auto-unmute', [u.hamlet, u.othello]);
    await sendToChannel(t, u.othello, c, 'old', 'first');
    let res = await t.api(u.hamlet, 'PATCH', '/settings', { automatically_follow_topics_policy: 4, automatically_unmute_topics_in_muted_streams_policy: 2 });
    assert.equal(res.status, 200, res.text);
    res = await t.api(u.hamlet, 'POST', '/users/me/subscriptions/properties', { subscription_data: JSON.stringify([{ stream_id: c, property: 'is_muted', value: true }]) });
    assert.equal(res.status, 200, res.text);
    res = await send(u.hamlet, { type: 'channel', to: c, topic: 'old' });
    assert.deepEqual(res.body, { result: 'success', msg: '', id: res.body.id, automatic_new_visibility_policy: 2 });
    assert.deepEqual((await userTopics(u.hamlet)).filter(([s]) => s === c), [[c, 'old', 2]]);
    res = await t.api(u.hamlet, 'PATCH', '/settings', { automatically_follow_topics_policy: 3, automatically_unmute_topics_in_muted_streams_policy: 2 });
    assert.equal(res.status, 200, res.text);
  });
});

describe('POST /messages read_by_sender', () => {
  async function sendAs(userAgent: string, extra: Record<string, unknown> = {}) {
    const u = t.users.hamlet;
    const headers: Record<string, string> = { authorization: basicAuth(u), 'content-type': 'application/x-www-form-urlencoded', 'user-agent': userAgent };
    const body = new URLSearchParams({ type: 'channel', to: String(general), topic: 'clients', content: 'x', ...extra }).toString();
    const res = await t.raw('POST', '/api/v1/messages', { headers, body });
    assert.equal(res.status, 200, res.text);
    const m = (await readBack(u, res.body.id)).message;
    return { client: m.client, flags: m.flags };
  }

  it('is read for the sender when sent from a Zulip app, unread from an integration, as Zulip’s default_read_by_sender', async () => {
    assert.deepEqual(await sendAs('ZulipMobile/27.1 (iOS 17.2)'), { client: 'ZulipMobile', flags: ['read'] });
    assert.deepEqual(await sendAs('ZulipElectron/5.11.1'), { client: 'ZulipElectron', flags: ['read'] });
    assert.deepEqual(await sendAs('python-requests/2.31.0'), { client: 'python-requests', flags: [] });
    assert.deepEqual(await sendAs('ZulipGitHubWebhook/1.0'), { client: 'ZulipGitHubWebhook', flags: [] });
  });

  it('read_by_sender overrides the client heuristic', async () => {
    assert.deepEqual(await sendAs('ZulipMobile/27.1', { read_by_sender: 'false' }), { client: 'ZulipMobile', flags: [] });
    assert.deepEqual(await sendAs('curl/8.5.0', { read_by_sender: 'true' }), { client: 'curl', flags: ['read'] });
  });
});
