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
    assert.deepEqual(await narrowed([op('channel', 'verona'), op('near', m.image)]), [m.fox, m.link, m.image, m.mention]);
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
    res = await t.api(t.users.hamlet, 'GET', '/messages/matches_narrow', { msg_ids: [m.fox], narrow: [op('bogus', 1)] });
    assert.deepEqual(res.body, err('Invalid narrow operator: unknown operator bogus', 'BAD_NARROW'));
  });
});
