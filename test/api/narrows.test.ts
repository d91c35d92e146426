import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, err, ids, sendDirect, sendToChannel, SUCCESS } from '../helpers/chat';

let t: TestServer;
let verona: number;
let denmark: number;
const m: Record<string, number> = {};

before(async () => {
  t = await startTestServer();
  const u = t.users;
  verona = await createChannel(t, u.hamlet, 'verona', [u.hamlet, u.othello]);
  denmark = await createChannel(t, u.hamlet, 'denmark', [u.hamlet]);
  m.fox = await sendToChannel(t, u.hamlet, verona, 'castle', 'the quick brown fox');
  m.link = await sendToChannel(t, u.othello, verona, 'Castle', 'a link https://example.com/page');
  m.image = await sendToChannel(t, u.othello, verona, '✔ solved', 'an image https://example.com/cat.png');
  m.file = await sendToChannel(t, u.hamlet, denmark, 'castle', 'a file [doc](/user_uploads/1/ab/cd/doc.pdf)');
  m.mention = await sendToChannel(t, u.othello, verona, 'moat', 'hi @**King Hamlet**');
  m.dm = await sendDirect(t, u.hamlet, [u.othello], 'private fox business');
  m.group = await sendDirect(t, u.othello, [u.hamlet, u.admin], 'group hello');
  assert.equal((await t.api(u.othello, 'POST', `/messages/${m.fox}/reactions`, { emoji_name: 'octopus' })).status, 200);
  assert.equal((await t.api(u.hamlet, 'POST', '/messages/flags', { messages: [m.link], op: 'add', flag: 'starred' })).status, 200);
});
after(() => t.close());

async function narrowed(narrow: unknown, user: TestUser = t.users.hamlet): Promise<number[]> {
  const res = await t.api(user, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 100, narrow });
  assert.equal(res.status, 200, `${JSON.stringify(narrow)}: ${res.text}`);
  return ids(res.body);
}

const op = (operator: string, operand: unknown, negated?: boolean) => (negated === undefined ? { operator, operand } : { operator, operand, negated });

describe('narrow operators one by one', () => {
  it('channel (name, id) and its alias stream', async () => {
    const expected = [m.fox, m.link, m.image, m.mention];
    assert.deepEqual(await narrowed([op('channel', 'verona')]), expected);
    assert.deepEqual(await narrowed([op('channel', verona)]), expected);
    assert.deepEqual(await narrowed([op('stream', 'Verona')]), expected);
  });

  it('channels:public (and the streams alias)', async () => {
    const expected = [m.fox, m.link, m.image, m.file, m.mention];
    assert.deepEqual(await narrowed([op('channels', 'public')]), expected);
    assert.deepEqual(await narrowed([op('streams', 'public')]), expected);
  });

  it('topic, case-insensitively', async () => {
    assert.deepEqual(await narrowed([op('topic', 'castle')]), [m.fox, m.link, m.file]);
    assert.deepEqual(await narrowed([op('topic', 'CASTLE')]), [m.fox, m.link, m.file]);
  });

  it('sender by id and by email', async () => {
    const expected = [m.link, m.image, m.mention, m.group];
    assert.deepEqual(await narrowed([op('sender', t.users.othello.id)]), expected);
    assert.deepEqual(await narrowed([op('sender', t.users.othello.email)]), expected);
  });

  it('dm (ids or emails; legacy pm-with) names exactly one conversation', async () => {
    const u = t.users;
    assert.deepEqual(await narrowed([op('dm', [u.othello.id])]), [m.dm]);
    assert.deepEqual(await narrowed([op('dm', u.othello.email)]), [m.dm]);
    assert.deepEqual(await narrowed([op('pm-with', [u.othello.id])]), [m.dm]);
    assert.deepEqual(await narrowed([op('dm', [u.othello.id, u.admin.id])]), [m.group]);
    assert.deepEqual(await narrowed([op('dm', `${u.admin.email},${u.othello.email}`)]), [m.group]);
    assert.deepEqual(await narrowed([op('dm', [u.moderator.id])]), []);
  });

  it('dm-including', async () => {
    assert.deepEqual(await narrowed([op('dm-including', t.users.othello.id)]), [m.dm, m.group]);
    assert.deepEqual(await narrowed([op('dm-including', t.users.admin.id)]), [m.group]);
  });

  it('is:dm (and is:private), is:starred, is:unread, is:mentioned, is:resolved', async () => {
    assert.deepEqual(await narrowed([op('is', 'dm')]), [m.dm, m.group]);
    assert.deepEqual(await narrowed([op('is', 'private')]), [m.dm, m.group]);
    assert.deepEqual(await narrowed([op('is', 'starred')]), [m.link]);
    assert.deepEqual(await narrowed([op('is', 'unread')]), [m.link, m.image, m.mention, m.group]);
    assert.deepEqual(await narrowed([op('is', 'mentioned')]), [m.mention]);
    assert.deepEqual(await narrowed([op('is', 'resolved')]), [m.image]);
  });

  it('has:link, has:image, has:attachment, has:reaction', async () => {
    assert.deepEqual(await narrowed([op('has', 'link')]), [m.link, m.image, m.file]);
    assert.deepEqual(await narrowed([op('has', 'image')]), [m.image]);
    assert.deepEqual(await narrowed([op('has', 'attachment')]), [m.file]);
    assert.deepEqual(await narrowed([op('has', 'reaction')]), [m.fox]);
  });

  it('search: content and topic, with highlights', async () => {
    const res = await t.api(t.users.hamlet, 'GET', '/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [op('search', 'fox')] });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(ids(res.body), [m.fox, m.dm]);
    const [fox, dm] = res.body.messages;
    assert.equal(fox.match_content, '<p>the quick brown <span class="highlight">fox</span></p>');
    assert.equal(fox.match_subject, 'castle');
    assert.equal(dm.match_content, '<p>private <span class="highlight">fox</span> business</p>');
    assert.deepEqual(await narrowed([op('search', 'moat')]), [m.mention]);
    // Without search, no match_* keys.
    const plain = await t.api(t.users.hamlet, 'GET', '/messages', { anchor: 'newest', num_before: 1, num_after: 0 });
    assert.equal('match_content' in plain.body.messages[0], false);
  });

  it('near does not filter; id picks one message', async () => {
    assert.deepEqual(await narrowed([op('channel', 'verona'), op('near', String(m.image))]), [m.fox, m.link, m.image, m.mention]);
    assert.deepEqual(await narrowed([op('id', m.image)]), [m.image]);
    assert.deepEqual(await narrowed([op('id', String(m.dm))]), [m.dm]);
  });

  it('with: the conversation of that message', async () => {
    assert.deepEqual(await narrowed([op('with', m.link)]), [m.fox, m.link]);
    assert.deepEqual(await narrowed([op('with', m.group)]), [m.group]);
    const res = await t.api(t.users.hamlet, 'GET', '/messages', {
      anchor: 'newest',
      num_before: 1,
      num_after: 0,
      narrow: [op('with', m.link), op('with', m.fox)],
    });
    assert.deepEqual(res.body, err("Invalid narrow operator combination: Duplicate 'with' operators.", 'BAD_NARROW'));
  });
});

describe('combined and negated narrows', () => {
  it('channel + topic, sender + is:unread, channel + NOT topic', async () => {
    assert.deepEqual(await narrowed([op('channel', 'verona'), op('topic', 'castle')]), [m.fox, m.link]);
    assert.deepEqual(await narrowed([op('sender', t.users.othello.id), op('is', 'unread'), op('channel', verona)]), [m.link, m.image, m.mention]);
    assert.deepEqual(await narrowed([op('channel', 'verona'), op('topic', 'castle', true)]), [m.image, m.mention]);
    assert.deepEqual(await narrowed([op('is', 'dm', true), op('search', 'fox')]), [m.fox]);
    assert.deepEqual(await narrowed([op('has', 'link'), op('channel', 'denmark', true)]), [m.link, m.image]);
    // A negated term about channels keeps the direct messages, and one about a conversation the channel messages.
    assert.deepEqual(await narrowed([op('channels', 'public', true)]), [m.dm, m.group]);
    assert.deepEqual(await narrowed([op('channel', 'verona', true), op('search', 'fox')]), [m.dm]);
    assert.deepEqual(await narrowed([op('dm', [t.users.othello.id], true), op('search', 'fox')]), [m.fox]);
    assert.deepEqual(await narrowed([op('dm-including', t.users.admin.id, true), op('sender', t.users.othello.id)]), [m.link, m.image, m.mention]);
  });

  it('takes the legacy pair form', async () => {
    assert.deepEqual(
      await narrowed([
        ['stream', 'verona'],
        ['topic', 'castle'],
      ]),
      [m.fox, m.link],
    );
  });

  it('refuses unknown operators and operands with BAD_NARROW', async () => {
    const cases: [unknown, unknown][] = [
      [[op('colour', 'red')], err('Invalid narrow operator: unknown operator colour', 'BAD_NARROW')],
      [[op('constructor', 'red')], err('Invalid narrow operator: unknown operator constructor', 'BAD_NARROW')],
      [[op('is', 'shiny')], err("Invalid narrow operator: unknown 'is' operand shiny", 'BAD_NARROW')],
      [[op('has', 'cake')], err("Invalid narrow operator: unknown 'has' operand cake", 'BAD_NARROW')],
      [[op('channel', 'verona'), op('dm', [t.users.othello.id])], err('Invalid narrow operator: No message can be both a channel message and direct message', 'BAD_NARROW')],
      [[['stream']], err('Invalid narrow[0]: Value error, element is not a string pair')],
      [[{ operand: 'x' }], err('Invalid narrow[0]: Value error, operator is missing')],
      [[{ operator: 'topic' }], err('Invalid narrow[0]: Value error, operand is missing')],
      [[7], err('Invalid narrow[0]: Value error, dict or list required')],
    ];
    for (const [narrow, body] of cases) {
      const res = await t.api(t.users.hamlet, 'GET', '/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow });
      assert.equal(res.status, 400, JSON.stringify(narrow));
      assert.deepEqual(res.body, body, JSON.stringify(narrow));
    }
  });
});

describe('narrow validation as Zulip\'s NarrowParameter and NarrowBuilder', () => {
  const get = (narrow: unknown) => t.api(t.users.hamlet, 'GET', '/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow });

  it('answers operand type errors in plain words, element shapes first', async () => {
    const u = t.users;
    const cases: [unknown, unknown][] = [
      [[{}], err('Invalid narrow[0]: Value error, operand is missing')],
      [[{ operator: 'topic', operand: null }], err('Invalid narrow[0]: Value error, operand is missing')],
      [[{ operator: null, operand: 'x' }], err('Invalid narrow[0]: Value error, operator is missing')],
      [[op('topic', 5)], err('operand is not a string')],
      [[op('near', m.fox)], err('operand is not a string')],
      [[op('search', 5)], err('operand is not a string')],
      [[op('search', ' \t')], err('operand cannot be blank.')],
      [[['search', '']], err('operand cannot be blank.')],
      [[op('channel', 1.5)], err('operand is not a string or integer')],
      [[op('sender', [u.othello.id])], err('operand is not a string or integer')],
      [[op('dm', 5)], err('operand is not a string or an integer list')],
      [[op('dm', [u.othello.id, 1.5])], err('operand[1] is not an integer')],
      [[op('dm', [u.othello.email])], err('operand[0] is not an integer')],
      // zulip-compat: the underscore spelling takes only a string.
      [[op('pm_with', [u.othello.id])], err('operand is not a string')],
      // Every element's operand is checked before any operator is looked at.
      [[op('colour', 'red'), op('topic', 5)], err('operand is not a string')],
      [[op('colour', 5)], err('operand is not a string')],
    ];
    for (const [narrow, body] of cases) {
      const res = await get(narrow);
      assert.equal(res.status, 400, JSON.stringify(narrow));
      assert.deepEqual(res.body, body, JSON.stringify(narrow));
    }
  });

  it('refuses bad message ids and unknown users, channels and operators with BAD_NARROW, in the order of the terms', async () => {
    const u = t.users;
    const cases: [unknown, string][] = [
      [[op('id', 'abc')], 'Invalid message ID'],
      [[op('id', -5)], 'Invalid message ID'],
      [[op('id', '1.5')], 'Invalid message ID'],
      [[op('dm', [9999])], 'unknown user in [9999]'],
      [[op('dm', [u.othello.id, 9999])], `unknown user in [${u.othello.id}, 9999]`],
      [[op('dm', 'nobody@example.com')], 'unknown user in nobody@example.com'],
      [[op('dm', `${u.othello.email},`)], `unknown user in ${u.othello.email},`],
      [[op('dm', '')], 'unknown user in '],
      [[op('sender', 9999)], 'unknown user 9999'],
      // zulip-compat: a numeric string is an email or a channel name, never an id.
      [[op('sender', String(u.othello.id))], `unknown user ${u.othello.id}`],
      [[op('dm-including', String(u.othello.id))], `unknown user ${u.othello.id}`],
      [[op('channel', String(verona))], `unknown channel ${verona}`],
      [[op('sender', 9999), op('colour', 'red')], 'unknown user 9999'],
      [[op('colour', 'red'), op('sender', 9999)], 'unknown operator colour'],
      [[op('channel', 'nowhere'), op('sender', 9999)], 'unknown channel nowhere'],
    ];
    for (const [narrow, desc] of cases) {
      const res = await get(narrow);
      assert.equal(res.status, 400, JSON.stringify(narrow));
      assert.deepEqual(res.body, err(`Invalid narrow operator: ${desc}`, 'BAD_NARROW'), JSON.stringify(narrow));
    }
  });

  it('dm: [] matches nothing (not even direct messages to oneself); a channel named by digits is found by its name', async () => {
    const self = await sendDirect(t, t.users.hamlet, [t.users.hamlet], 'note to self');
    assert.deepEqual(await narrowed([op('dm', [t.users.hamlet.id])]), [self]);
    assert.deepEqual(await narrowed([op('dm', [])]), []);
    const digits = await createChannel(t, t.users.hamlet, '4242', [t.users.hamlet]);
    const id = await sendToChannel(t, t.users.hamlet, digits, 'numbers', 'by name');
    assert.deepEqual(await narrowed([op('channel', '4242')]), [id]);
    assert.deepEqual(await narrowed([op('channel', digits)]), [id]);
  });

  it('refuses a channel side with a direct-message side (check_not_both_channel_and_dm_narrow)', async () => {
    const u = t.users;
    const both = err('Invalid narrow operator: No message can be both a channel message and direct message', 'BAD_NARROW');
    const refused: unknown[][] = [
      [op('topic', 'castle'), op('dm', [u.othello.id])],
      [op('channel', 'verona'), op('dm-including', u.othello.id)],
      [op('channels', 'public'), op('dm', [u.othello.id])],
      [op('is', 'dm', true), op('dm', [u.othello.id])],
      [op('group-pm-with', u.admin.id), op('topic', 'castle')],
      [op('channel', 'verona'), op('is', 'private')],
      // Before the unknown channel, which comes after.
      [op('dm', [u.othello.id]), op('channel', 'nowhere')],
    ];
    for (const narrow of refused) {
      const res = await get(narrow);
      assert.equal(res.status, 400, JSON.stringify(narrow));
      assert.deepEqual(res.body, both, JSON.stringify(narrow));
    }
    // Negated terms other than is:dm take no side.
    assert.deepEqual(await narrowed([op('channel', 'verona', true), op('dm', [u.othello.id])]), [m.dm]);
    assert.deepEqual(await narrowed([op('dm', [u.othello.id]), op('topic', 'castle', true)]), [m.dm]);
    assert.deepEqual(await narrowed([op('is', 'dm', true), op('channel', 'verona'), op('topic', 'castle')]), [m.fox, m.link]);
  });
});

describe('narrow length', () => {
  // Zulip has no bound; past ~1000 terms SQLite refused the statement and Parley answered 500.
  const tooLong = err('narrow is too long (limit: 100 items)');
  const terms = (n: number) => Array.from({ length: n }, (_, i) => op('topic', `t${i}`, true));

  it('takes 100 terms', async () => {
    assert.deepEqual(await narrowed([op('channel', verona), ...terms(99)]), [m.fox, m.link, m.image, m.mention]);
    const flagged = await t.api(t.users.hamlet, 'POST', '/messages/flags/narrow', { anchor: 'newest', num_before: 0, num_after: 0, narrow: terms(100), op: 'add', flag: 'read' });
    assert.equal(flagged.status, 200, flagged.text);
  });

  it('answers more than 100 terms with a 400 on every endpoint that takes a narrow, never a 500', async () => {
    for (const narrow of [terms(101), Array(1001).fill(['is', 'unread']), terms(1001)]) {
      assert.deepEqual((await t.api(t.users.hamlet, 'GET', '/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow })).body, tooLong);
      assert.deepEqual(
        (await t.api(t.users.hamlet, 'POST', '/messages/flags/narrow', { anchor: 'newest', num_before: 1, num_after: 0, narrow, op: 'add', flag: 'read' })).body,
        tooLong,
      );
      assert.deepEqual((await t.api(t.users.hamlet, 'GET', '/messages/matches_narrow', { msg_ids: [m.fox], narrow })).body, tooLong);
    }
    const events = await t.api(t.users.hamlet, 'POST', '/register', { narrow: Array(101).fill(['channel', 'verona']) });
    assert.deepEqual(events.body, tooLong);
  });

  it('bounds a dm operand written as comma-separated addresses as a JSON list is, and looks each person up once', async () => {
    const u = t.users;
    // 400,000 copies of one address (9 MB) took 12 s: a lookup each, every request waiting.
    const flagged = await t.api(u.hamlet, 'POST', '/messages/flags/narrow', {
      anchor: 'newest',
      num_before: 10,
      num_after: 0,
      op: 'add',
      flag: 'read',
      narrow: [op('dm', Array(200_000).fill(u.othello.email).join(','))],
    });
    assert.deepEqual(flagged.body, err('operand is too long (limit: 10000 items)'));
    // Repeats within the bound name the same conversation.
    assert.deepEqual(await narrowed([op('dm', Array(50).fill(` ${u.othello.email}`).join(','))]), [m.dm]);
    assert.deepEqual(await narrowed([op('dm', [u.othello.id, u.othello.id])]), [m.dm]);
  });

  it('bounds direct-message recipients written as comma-separated addresses as a JSON list is', async () => {
    const u = t.users;
    const res = await t.api(u.hamlet, 'POST', '/messages', { type: 'direct', to: Array(10_001).fill(u.othello.email).join(','), content: 'x' });
    assert.deepEqual(res.body, err('to is too long (limit: 10000 items)'));
    const ok = await t.api(u.hamlet, 'POST', '/messages', { type: 'direct', to: Array(10_000).fill(u.othello.email).join(','), content: 'x' });
    assert.equal(ok.status, 200, ok.text);
  });

  it('takes at most 5000 ids in matches_narrow', async () => {
    const res = await t.api(t.users.hamlet, 'GET', '/messages/matches_narrow', { msg_ids: Array(5001).fill(m.fox), narrow: [] });
    assert.deepEqual(res.body, err('msg_ids is too long (limit: 5000 items)'));
  });
});

describe('shared channel history', () => {
  it('is:followed, like every is: term but is:resolved, reads only the messages the user received', async () => {
    const u = t.users;
    const chan = await createChannel(t, u.hamlet, 'followers', [u.hamlet]);
    const before = await sendToChannel(t, u.hamlet, chan, 'plan', 'before othello joined');
    const resolvedBefore = await sendToChannel(t, u.hamlet, chan, '✔ done', 'resolved before');
    const sub = await t.api(u.othello, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'followers' }] });
    assert.equal(sub.status, 200, sub.text);
    const follow = await t.api(u.othello, 'POST', '/user_topics', { stream_id: chan, topic: 'plan', visibility_policy: 3 });
    assert.equal(follow.status, 200, follow.text);
    const afterJoin = await sendToChannel(t, u.hamlet, chan, 'plan', 'after othello joined');
    assert.deepEqual(await narrowed([op('channel', chan), op('topic', 'plan')], u.othello), [before, afterJoin]);
    assert.deepEqual(await narrowed([op('channel', chan), op('is', 'followed')], u.othello), [afterJoin]);
    assert.deepEqual(await narrowed([op('channel', chan), op('is', 'starred', true)], u.othello), [afterJoin]);
    assert.deepEqual(await narrowed([op('channel', chan), op('is', 'resolved')], u.othello), [resolvedBefore]);
  });
});

describe('anchor=first_unread', () => {
  it("skips muted channels and topics; in a channel narrow, only that channel's muted topics", async () => {
    const u = t.users;
    const hushed = await createChannel(t, u.hamlet, 'hushed', [u.hamlet, u.othello]);
    const noisy = await createChannel(t, u.hamlet, 'noisy', [u.hamlet, u.othello]);
    const q1 = await sendToChannel(t, u.hamlet, hushed, 't1', 'zebra one');
    const q2 = await sendToChannel(t, u.hamlet, noisy, 'quiet', 'zebra two');
    const q3 = await sendToChannel(t, u.hamlet, hushed, 'kept', 'zebra three');
    const q4 = await sendToChannel(t, u.hamlet, noisy, 'x', 'zebra four');
    const ok = (res: { status: number; text: string }) => assert.equal(res.status, 200, res.text);
    ok(await t.api(u.othello, 'POST', '/users/me/subscriptions/properties', { subscription_data: [{ stream_id: hushed, property: 'is_muted', value: true }] }));
    ok(await t.api(u.othello, 'POST', '/user_topics', { stream_id: noisy, topic: 'quiet', visibility_policy: 1 }));
    ok(await t.api(u.othello, 'POST', '/user_topics', { stream_id: hushed, topic: 'kept', visibility_policy: 2 }));
    const anchorOf = async (narrow: unknown[]) => {
      const res = await t.api(u.othello, 'GET', '/messages', { anchor: 'first_unread', num_before: 0, num_after: 0, narrow });
      assert.equal(res.status, 200, res.text);
      return res.body.anchor;
    };
    assert.equal(await anchorOf([op('search', 'zebra')]), q3);
    assert.equal(await anchorOf([op('sender', u.hamlet.id), op('search', 'zebra')]), q3);
    assert.equal(await anchorOf([op('channel', hushed)]), q1);
    assert.equal(await anchorOf([op('channel', noisy)]), q4);
    // zulip-compat: a negated channel term names the channel whose topic mutes apply, and lifts channel muting.
    assert.equal(await anchorOf([op('channel', hushed, true), op('search', 'zebra')]), q2);
    // The window itself still holds the muted messages.
    const res = await t.api(u.othello, 'GET', '/messages', { anchor: 'first_unread', num_before: 5, num_after: 5, narrow: [op('search', 'zebra')] });
    assert.deepEqual(ids(res.body), [q1, q2, q3, q4]);
  });
});

describe('GET /messages/matches_narrow', () => {
  it('answers the matching ids with highlighted content and topic', async () => {
    const res = await t.api(t.users.hamlet, 'GET', '/messages/matches_narrow', {
      msg_ids: [m.fox, m.link, m.dm, m.file],
      narrow: [op('search', 'fox')],
    });
    assert.deepEqual(res.body, {
      ...SUCCESS,
      messages: {
        [m.fox]: { match_content: '<p>the quick brown <span class="highlight">fox</span></p>', match_subject: 'castle' },
        [m.dm]: { match_content: '<p>private <span class="highlight">fox</span> business</p>', match_subject: '' },
      },
    });
    const topic = await t.api(t.users.hamlet, 'GET', '/messages/matches_narrow', { msg_ids: [m.fox, m.mention], narrow: [op('search', 'castle')] });
    assert.deepEqual(topic.body, {
      ...SUCCESS,
      messages: { [m.fox]: { match_content: '<p>the quick brown fox</p>', match_subject: '<span class="highlight">castle</span>' } },
    });
    const nonSearch = await t.api(t.users.hamlet, 'GET', '/messages/matches_narrow', { msg_ids: [m.fox, m.file], narrow: [op('channel', 'denmark')] });
    assert.deepEqual(nonSearch.body, {
      ...SUCCESS,
      messages: { [m.file]: { match_content: (await t.api(t.users.hamlet, 'GET', `/messages/${m.file}`)).body.message.content, match_subject: 'castle' } },
    });
  });

  it('requires both parameters and refuses unknown operators', async () => {
    let res = await t.api(t.users.hamlet, 'GET', '/messages/matches_narrow', { msg_ids: [m.fox] });
    assert.deepEqual(res.body, err("Missing 'narrow' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'narrow' }));
    res = await t.api(t.users.hamlet, 'GET', '/messages/matches_narrow', { msg_ids: [m.fox], narrow: [op('bogus', 'x')] });
    assert.deepEqual(res.body, err('Invalid narrow operator: unknown operator bogus', 'BAD_NARROW'));
    // Operand types are checked first, as Zulip's NarrowParameter does while parsing.
    res = await t.api(t.users.hamlet, 'GET', '/messages/matches_narrow', { msg_ids: [m.fox], narrow: [op('bogus', 1)] });
    assert.deepEqual(res.body, err('operand is not a string'));
  });
});
