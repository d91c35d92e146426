// POST /messages/{message_id}/report and the realm's moderation request channel
// (moderation_request_channel_id): Notification Bot's report in Zulip's words, who may report what,
// every refusal, and the setting's checks, events and /register field.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, err, sendDirect, sendToChannel, SUCCESS, topicMessages } from '../helpers/chat';
import { queuedEvents, registerQueue } from '../helpers/events';
import { addCatalogue } from '../../src/lib/i18n';

const NOW = 1_700_000_000; // 2023-11-14T22:13:20Z
let t: TestServer;
let moderation = 0;
let general = 0;
before(async () => {
  t = await startTestServer({ clock: { nowMs: () => NOW * 1000 } });
  const u = t.users;
  general = await createChannel(t, u.hamlet, 'general', [u.hamlet, u.othello]);
  moderation = await createChannel(t, u.admin, 'reported messages', [u.admin, u.moderator], { invite_only: true });
  const res = await t.api(u.admin, 'PATCH', '/realm', { moderation_request_channel_id: moderation });
  assert.deepEqual(res.body, { ...SUCCESS, moderation_request_channel_id: moderation });
});
after(() => t.close());

const mention = (u: TestUser) => `@_**${u.fullName}|${u.id}**`;
const AT = '<time:2023-11-14T22:13:20+00:00>';
const report = (user: TestUser, id: number, params: Record<string, unknown>) => t.api(user, 'POST', `/messages/${id}/report`, params);

/** The newest report in the moderation channel, as a moderator reads it (raw Markdown). */
async function lastReport(topic: string): Promise<Record<string, unknown>> {
  const msgs = await topicMessages(t, t.users.moderator, moderation, topic);
  const m = msgs[msgs.length - 1];
  return { sender_full_name: m.sender_full_name, subject: m.subject, content: m.content, client: m.client };
}
const botReport = (topic: string, content: string) => ({ sender_full_name: 'Notification Bot', subject: topic, content, client: 'Internal' });

/** Zulip's report text: the header, the reason and notes, the original message in a spoiler. */
const reportText = (header: string, reason: string, description: string, original: string, content: string, fence = '```') =>
  `${header}\n\`\`\`quote\n**${reason}**. ${description}\n\`\`\`\n\n${fence} spoiler ${original}\n${content}\n${fence}`;

describe('POST /messages/{message_id}/report', () => {
  it('posts the report of a channel message in the moderation channel, as Notification Bot, to its subscribers only', async () => {
    const u = t.users;
    const id = await sendToChannel(t, u.othello, general, 'civilized discussions', 'I squeeze toothpaste from the middle');
    const modQueue = await registerQueue(t, u.moderator, ['message']);
    const reporterQueue = await registerQueue(t, u.hamlet, ['message']);
    const res = await report(u.hamlet, id, { report_type: 'harassment', description: 'this is a crime against food' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, SUCCESS);
    const expected = reportText(
      `${mention(u.hamlet)} reported a message sent by ${mention(u.othello)} at ${AT}.`,
      'Harassment',
      'this is a crime against food',
      `Original message at #**general>civilized discussions@${id}**`,
      'I squeeze toothpaste from the middle',
    );
    assert.deepEqual(await lastReport('Othello moderation'), botReport('Othello moderation', expected));
    const events = await queuedEvents(t, u.moderator, modQueue);
    assert.equal(events.length, 1);
    assert.equal(events[0].type, 'message');
    assert.equal(events[0].message.display_recipient, 'reported messages');
    assert.equal(events[0].message.subject, 'Othello moderation');
    assert.deepEqual(await queuedEvents(t, u.hamlet, reporterQueue), []);
  });

  it('lets anyone who can read the message report it: unsubscribed members of a public channel, guests of their channels, bots', async () => {
    const u = t.users;
    const id = await sendToChannel(t, u.hamlet, general, 'lunch', 'Pineapple belongs on pizza');
    assert.deepEqual((await report(u.admin, id, { report_type: 'spam' })).body, SUCCESS);
    assert.deepEqual(
      await lastReport('King Hamlet moderation'),
      botReport(
        'King Hamlet moderation',
        reportText(
          `${mention(u.admin)} reported a message sent by ${mention(u.hamlet)} at ${AT}.`,
          'Spam',
          '',
          `Original message at #**general>lunch@${id}**`,
          'Pineapple belongs on pizza',
        ),
      ),
    );
    assert.deepEqual((await report(u.bot, id, { report_type: 'norms' })).body, SUCCESS);
    // Reporting one's own message is allowed too.
    assert.deepEqual((await report(u.hamlet, id, { report_type: 'inappropriate' })).body, SUCCESS);
    const guestChannel = await createChannel(t, u.hamlet, 'with guest', [u.hamlet, u.guest]);
    const forGuest = await sendToChannel(t, u.hamlet, guestChannel, 'hello', 'hi guest');
    assert.deepEqual((await report(u.guest, forGuest, { report_type: 'other', description: 'Rude.' })).body, SUCCESS);
    assert.equal(
      (await lastReport('King Hamlet moderation')).content,
      reportText(
        `${mention(u.guest)} reported a message sent by ${mention(u.hamlet)} at ${AT}.`,
        'Other reason',
        'Rude.',
        `Original message at #**with guest>hello@${forGuest}**`,
        'hi guest',
      ),
    );
  });

  it('reports direct messages with the participants and a link to the conversation', async () => {
    const u = t.users;
    const base = t.app.publicUrl.replace(/\/+$/, '');
    // A 1:1 message reported by its recipient.
    const dm = await sendDirect(t, u.othello, [u.hamlet], 'I dip fries in ice cream');
    assert.deepEqual((await report(u.hamlet, dm, { report_type: 'harassment', description: 'stop' })).body, SUCCESS);
    assert.equal(
      (await lastReport('Othello moderation')).content,
      reportText(
        `${mention(u.hamlet)} reported a direct message sent by ${mention(u.othello)} at ${AT}.`,
        'Harassment',
        'stop',
        `[Original message](${base}/#narrow/dm/${u.hamlet.id}/near/${dm})`,
        'I dip fries in ice cream',
      ),
    );
    // One's own 1:1 message names whom it went to.
    assert.deepEqual((await report(u.othello, dm, { report_type: 'spam' })).body, SUCCESS);
    assert.equal(
      (await lastReport('Othello moderation')).content,
      reportText(
        `${mention(u.othello)} reported a direct message sent by ${mention(u.othello)} to ${mention(u.hamlet)} at ${AT}.`,
        'Spam',
        '',
        `[Original message](${base}/#narrow/dm/${u.hamlet.id}/near/${dm})`,
        'I dip fries in ice cream',
      ),
    );
    // A note to self.
    const self = await sendDirect(t, u.othello, [u.othello], 'Hi, me!');
    assert.deepEqual((await report(u.othello, self, { report_type: 'spam', description: 'just testing' })).body, SUCCESS);
    assert.equal(
      (await lastReport('Othello moderation')).content,
      reportText(
        `${mention(u.othello)} reported a direct message sent by ${mention(u.othello)} to ${mention(u.othello)} at ${AT}.`,
        'Spam',
        'just testing',
        `[Original message](${base}/#narrow/dm/${u.othello.id}/near/${self})`,
        'Hi, me!',
      ),
    );
    // A group conversation: the other participants, their mentions sorted, the last after "and".
    const group = await sendDirect(t, u.othello, [u.hamlet, u.admin, u.moderator], 'I eat cereal with water');
    assert.deepEqual((await report(u.hamlet, group, { report_type: 'harassment', description: 'Call the police' })).body, SUCCESS);
    const others = [u.hamlet, u.admin, u.moderator].map(mention).sort();
    const ids = [u.othello, u.hamlet, u.admin, u.moderator].map((x) => x.id).sort((a, b) => a - b);
    assert.equal(
      (await lastReport('Othello moderation')).content,
      reportText(
        `${mention(u.hamlet)} reported a direct message sent by ${mention(u.othello)} to ${others[0]}, ${others[1]}, and ${others[2]} at ${AT}.`,
        'Harassment',
        'Call the police',
        `[Original message](${base}/#narrow/dm/${ids.join(',')}-group/near/${group})`,
        'I eat cereal with water',
      ),
    );
    // Three participants: "A and B", no comma.
    const small = await sendDirect(t, u.othello, [u.hamlet, u.admin], 'psst');
    assert.deepEqual((await report(u.admin, small, { report_type: 'spam' })).body, SUCCESS);
    const two = [u.hamlet, u.admin].map(mention).sort();
    assert.match(String((await lastReport('Othello moderation')).content), new RegExp(`^${mention(u.admin).replace(/[*|]/g, '\\$&')} reported a direct message sent by .* to ${two[0].replace(/[*|]/g, '\\$&')} and ${two[1].replace(/[*|]/g, '\\$&')} at `));
  });

  it('quotes long messages truncated, fences past the ones inside, and links oddly named channels plainly', async () => {
    const u = t.users;
    const long = '.'.repeat(8501);
    const id = await sendToChannel(t, u.othello, general, 'long', long);
    assert.deepEqual((await report(u.hamlet, id, { report_type: 'spam' })).body, SUCCESS);
    const truncated = '.'.repeat(8500 - '\n[message truncated]'.length) + '\n[message truncated]';
    assert.equal(
      (await lastReport('Othello moderation')).content,
      reportText(`${mention(u.hamlet)} reported a message sent by ${mention(u.othello)} at ${AT}.`, 'Spam', '', `Original message at #**general>long@${id}**`, truncated),
    );
    const code = 'look:\n````\ncode\n````';
    const fenced = await sendToChannel(t, u.othello, general, 'code', code);
    assert.deepEqual((await report(u.hamlet, fenced, { report_type: 'spam' })).body, SUCCESS);
    assert.equal(
      (await lastReport('Othello moderation')).content,
      reportText(
        `${mention(u.hamlet)} reported a message sent by ${mention(u.othello)} at ${AT}.`,
        'Spam',
        '',
        `Original message at #**general>code@${fenced}**`,
        code,
        '`````',
      ),
    );
    const odd = await createChannel(t, u.othello, 'Sw*den', [u.othello], { topics_policy: 'allow_empty_topic' });
    const inOdd = await sendToChannel(t, u.othello, odd, '', 'foo baz');
    assert.deepEqual((await report(u.hamlet, inOdd, { report_type: 'spam' })).body, SUCCESS);
    assert.equal(
      (await lastReport('Othello moderation')).content,
      reportText(
        `${mention(u.hamlet)} reported a message sent by ${mention(u.othello)} at ${AT}.`,
        'Spam',
        '',
        `Original message at [#Sw&#42;den > general chat @ 💬](#narrow/channel/${odd}-Sw*den/topic//near/${inOdd})`,
        'foo baz',
      ),
    );
  });

  it('posts in the empty topic of a moderation channel that allows only that', async () => {
    const u = t.users;
    const quiet = await createChannel(t, u.admin, 'quiet mods', [u.admin], { invite_only: true, topics_policy: 'empty_topic_only' });
    await t.api(u.admin, 'PATCH', '/realm', { moderation_request_channel_id: quiet });
    try {
      const id = await sendToChannel(t, u.othello, general, 'x', 'topicless');
      assert.deepEqual((await report(u.hamlet, id, { report_type: 'spam' })).body, SUCCESS);
      const msgs = await topicMessages(t, u.admin, quiet, '');
      assert.equal(msgs.length, 1);
      assert.equal(msgs[0].sender_full_name, 'Notification Bot');
      assert.equal(msgs[0].subject, '');
      assert.match(msgs[0].content, /topicless/);
    } finally {
      await t.api(u.admin, 'PATCH', '/realm', { moderation_request_channel_id: moderation });
    }
  });

  it('refuses messages the reporter cannot read, as "Invalid message(s)", and sends nothing', async () => {
    const u = t.users;
    const priv = await createChannel(t, u.othello, 'secret', [u.othello], { invite_only: true });
    const secret = await sendToChannel(t, u.othello, priv, 't', 'hidden');
    const dm = await sendDirect(t, u.othello, [u.moderator], 'between us');
    const pub = await sendToChannel(t, u.othello, general, 'guests', 'not for guests');
    const before = await topicMessages(t, u.moderator, moderation, 'Othello moderation');
    for (const [user, id] of [
      [u.hamlet, secret],
      [u.admin, secret], // administrators do not read private channels they are not in
      [u.hamlet, dm],
      [u.guest, pub], // a guest outside the channel
      [u.hamlet, 999_999],
    ] as const) {
      const res = await report(user, id, { report_type: 'spam' });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, err('Invalid message(s)'));
    }
    assert.equal((await topicMessages(t, u.moderator, moderation, 'Othello moderation')).length, before.length);
  });

  it('refuses bad parameters in Zulip\'s words', async () => {
    const u = t.users;
    const id = await sendToChannel(t, u.othello, general, 'params', 'x');
    const check = async (params: Record<string, unknown>, body: unknown) => {
      const res = await report(u.hamlet, id, params);
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, body);
    };
    await check({}, err("Missing 'report_type' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'report_type' }));
    await check({ report_type: 'rude' }, err('Invalid report_type: Value error, Not in the list of possible values'));
    await check({ report_type: 'other' }, err('An explanation is required.'));
    await check({ report_type: 'other', description: '' }, err('An explanation is required.'));
    await check({ report_type: 'spam', description: 'x'.repeat(1001) }, err('description is too long (limit: 1000 characters)'));
    // 1000 characters are fine.
    assert.deepEqual((await report(u.hamlet, id, { report_type: 'spam', description: 'x'.repeat(1000) })).body, SUCCESS);
    // The message id in the path must be an integer; an id past what is stored is no message.
    assert.equal((await t.api(u.hamlet, 'POST', '/messages/abc/report', { report_type: 'spam' })).status, 404);
    const huge = await t.api(u.hamlet, 'POST', '/messages/99999999999999999999/report', { report_type: 'spam' });
    assert.ok(huge.status === 400 || huge.status === 404, huge.text);
    assert.equal(huge.body.result, 'error');
  });

  it('answers "Message reporting is not enabled" while no moderation channel is set', async () => {
    const u = t.users;
    const id = await sendToChannel(t, u.othello, general, 'off', 'x');
    assert.deepEqual((await t.api(u.admin, 'PATCH', '/realm', { moderation_request_channel_id: -1 })).body, { ...SUCCESS, moderation_request_channel_id: -1 });
    try {
      const res = await report(u.hamlet, id, { report_type: 'spam' });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, err('Message reporting is not enabled in this organization.'));
      // The explanation is checked first, as in Zulip.
      assert.deepEqual((await report(u.hamlet, id, { report_type: 'other' })).body, err('An explanation is required.'));
    } finally {
      await t.api(u.admin, 'PATCH', '/realm', { moderation_request_channel_id: moderation });
    }
  });
});

describe('the report in the organization\'s language', () => {
  it('is written from the catalogue of the organization\'s default language, as Zulip\'s override_language', async () => {
    const u = t.users;
    // Parley ships English only; a catalogue added for the test stands for a translation.
    addCatalogue('de', {
      '{reporting_user_mention} reported a message sent by {reported_user_mention} at {reported_message_date_sent}.':
        '{reporting_user_mention} hat eine Nachricht von {reported_user_mention} vom {reported_message_date_sent} gemeldet.',
      'Original message at {channel_message_link}': 'Ursprüngliche Nachricht unter {channel_message_link}',
      Spam: 'Spam (de)',
      '{fullname} moderation': 'Moderation {fullname}',
    });
    assert.equal((await t.api(u.admin, 'PATCH', '/realm', { default_language: 'de' })).status, 200);
    try {
      const id = await sendToChannel(t, u.othello, general, 'sprache', 'Hallo {fullname}');
      assert.deepEqual((await report(u.hamlet, id, { report_type: 'spam', description: 'notes {x}' })).body, SUCCESS);
      assert.deepEqual(
        await lastReport('Moderation Othello'),
        botReport(
          'Moderation Othello',
          reportText(
            `${mention(u.hamlet)} hat eine Nachricht von ${mention(u.othello)} vom ${AT} gemeldet.`,
            'Spam (de)',
            'notes {x}',
            `Ursprüngliche Nachricht unter #**general>sprache@${id}**`,
            'Hallo {fullname}',
          ),
        ),
      );
    } finally {
      await t.api(u.admin, 'PATCH', '/realm', { default_language: 'en' });
    }
  });
});

describe('PATCH /realm moderation_request_channel_id', () => {
  it('is shown in /register, changed by administrators with a realm update event', async () => {
    const u = t.users;
    const reg = await t.api(u.hamlet, 'POST', '/register', { fetch_event_types: ['realm'] });
    assert.equal(reg.body.realm_moderation_request_channel_id, moderation);
    const other = await createChannel(t, u.admin, 'mods two', [u.admin], { invite_only: true });
    const q = await registerQueue(t, u.hamlet, ['realm']);
    assert.deepEqual((await t.api(u.admin, 'PATCH', '/realm', { moderation_request_channel_id: other })).body, { ...SUCCESS, moderation_request_channel_id: other });
    // Unchanged: nothing in the reply beyond success, no event.
    assert.deepEqual((await t.api(u.admin, 'PATCH', '/realm', { moderation_request_channel_id: other })).body, SUCCESS);
    assert.deepEqual((await t.api(u.admin, 'PATCH', '/realm', { moderation_request_channel_id: -5 })).body, { ...SUCCESS, moderation_request_channel_id: -5 });
    assert.equal((await t.api(u.hamlet, 'POST', '/register', { fetch_event_types: ['realm'] })).body.realm_moderation_request_channel_id, -1);
    assert.deepEqual((await t.api(u.admin, 'PATCH', '/realm', { moderation_request_channel_id: moderation })).body, { ...SUCCESS, moderation_request_channel_id: moderation });
    assert.deepEqual(await queuedEvents(t, u.hamlet, q), [
      { type: 'realm', op: 'update', property: 'moderation_request_channel_id', value: other },
      { type: 'realm', op: 'update', property: 'moderation_request_channel_id', value: -5 },
      { type: 'realm', op: 'update', property: 'moderation_request_channel_id', value: moderation },
    ]);
  });

  it('refuses public channels, unknown ones and non-administrators', async () => {
    const u = t.users;
    const patch = async (user: TestUser, value: unknown, body: unknown) => {
      const res = await t.api(user, 'PATCH', '/realm', { moderation_request_channel_id: value });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, body);
    };
    await patch(u.admin, general, err('Moderation request channel must be private.'));
    await patch(u.admin, 999_999, err('Invalid channel ID'));
    await patch(u.admin, 'abc', err('moderation_request_channel_id is not valid JSON'));
    await patch(u.moderator, -1, err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'));
    await patch(u.hamlet, -1, err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'));
    assert.equal((await t.api(u.hamlet, 'POST', '/register', { fetch_event_types: ['realm'] })).body.realm_moderation_request_channel_id, moderation);
  });

  it('keeps the channel private, and turns reporting off when the channel is archived', async () => {
    const u = t.users;
    const res = await t.api(u.admin, 'PATCH', `/streams/${moderation}`, { is_private: false });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, err('Moderation request channel must be private.'));
    const spare = await createChannel(t, u.admin, 'spare mods', [u.admin], { invite_only: true });
    await t.api(u.admin, 'PATCH', '/realm', { moderation_request_channel_id: spare });
    const q = await registerQueue(t, u.hamlet, ['realm']);
    assert.equal((await t.api(u.admin, 'DELETE', `/streams/${spare}`)).status, 200);
    assert.deepEqual(await queuedEvents(t, u.hamlet, q), [
      { type: 'realm', op: 'update_dict', property: 'default', data: { moderation_request_channel_id: -1 } },
    ]);
    assert.equal((await t.api(u.hamlet, 'POST', '/register', { fetch_event_types: ['realm'] })).body.realm_moderation_request_channel_id, -1);
    await t.api(u.admin, 'PATCH', '/realm', { moderation_request_channel_id: moderation });
  });
});
