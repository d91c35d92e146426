import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { queuedEvents, registerQueue } from '../helpers/events';
import { createChannel, err, sendDirect, sendToChannel, SUCCESS } from '../helpers/chat';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

const queue = (user: TestUser, types: string[]) => registerQueue(t, user, types);
const events = (user: TestUser, queueId: string) => queuedEvents(t, user, queueId);

describe('GET /users/me/alert_words', () => {
  it('starts empty', async () => {
    assert.deepEqual((await t.api(t.users.hamlet, 'GET', '/users/me/alert_words')).body, { ...SUCCESS, alert_words: [] });
  });
});

describe('POST /users/me/alert_words', () => {
  it('adds trimmed words, skips blanks and case duplicates, and sends the list', async () => {
    const q = await queue(t.users.hamlet, ['alert_words']);
    const res = await t.api(t.users.hamlet, 'POST', '/users/me/alert_words', { alert_words: [' Rome ', 'castle', '', '  '] });
    assert.deepEqual(res.body, { ...SUCCESS, alert_words: ['Rome', 'castle'].sort() });
    const again = await t.api(t.users.hamlet, 'POST', '/users/me/alert_words', { alert_words: ['ROME', 'ghost'] });
    assert.deepEqual(again.body, { ...SUCCESS, alert_words: ['Rome', 'castle', 'ghost'].sort() });
    assert.deepEqual(await events(t.users.hamlet, q), [
      { type: 'alert_words', alert_words: ['Rome', 'castle'].sort() },
      { type: 'alert_words', alert_words: ['Rome', 'castle', 'ghost'].sort() },
    ]);
    assert.deepEqual((await t.api(t.users.hamlet, 'GET', '/users/me/alert_words')).body.alert_words, ['Rome', 'castle', 'ghost'].sort());
    const reg = await t.api(t.users.hamlet, 'POST', '/register', { fetch_event_types: ['alert_words'] });
    assert.deepEqual(reg.body.alert_words, ['Rome', 'castle', 'ghost'].sort());
  });

  it('refuses malformed and oversized lists', async () => {
    assert.deepEqual((await t.api(t.users.hamlet, 'POST', '/users/me/alert_words', {})).body, {
      ...err('Missing \'alert_words\' argument', 'REQUEST_VARIABLE_MISSING'),
      var_name: 'alert_words',
    });
    assert.deepEqual((await t.api(t.users.hamlet, 'POST', '/users/me/alert_words', { alert_words: 'rome' })).body, err('alert_words is not valid JSON'));
    assert.deepEqual((await t.api(t.users.hamlet, 'POST', '/users/me/alert_words', { alert_words: [1] })).body, err('alert_words[0] is not a string'));
    assert.deepEqual(
      (await t.api(t.users.hamlet, 'POST', '/users/me/alert_words', { alert_words: ['ok', 'x'.repeat(101)] })).body,
      err('alert_words[1] is too long (limit: 100 characters)'),
    );
  });

  it('keeps at most 1000 alert words and 10,000 characters per user, and refuses longer lists before reading them', async () => {
    const words = Array.from({ length: 1000 }, (_, i) => `word${i}`);
    const full = await t.api(t.users.moderator, 'POST', '/users/me/alert_words', { alert_words: words });
    assert.deepEqual(full.body, { ...SUCCESS, alert_words: [...words].sort() });
    // A case duplicate adds nothing, so it still fits; a new word does not.
    assert.deepEqual((await t.api(t.users.moderator, 'POST', '/users/me/alert_words', { alert_words: ['WORD7'] })).body, { ...SUCCESS, alert_words: [...words].sort() });
    assert.deepEqual(
      (await t.api(t.users.moderator, 'POST', '/users/me/alert_words', { alert_words: ['one more'] })).body,
      err('You can have at most 1000 alert words.'),
    );
    // 1001 items are refused whatever they hold (here: not even strings).
    assert.deepEqual(
      (await t.api(t.users.moderator, 'POST', '/users/me/alert_words', { alert_words: Array(1001).fill(0) })).body,
      err('alert_words is too long (limit: 1000 items)'),
    );
    assert.deepEqual(
      (await t.api(t.users.moderator, 'DELETE', '/users/me/alert_words', { alert_words: Array(1001).fill('x') })).body,
      err('alert_words is too long (limit: 1000 items)'),
    );
    assert.deepEqual((await t.api(t.users.moderator, 'DELETE', '/users/me/alert_words', { alert_words: words })).body, { ...SUCCESS, alert_words: [] });
    // And at most 10,000 characters in all: what the matching automaton is built from.
    const long = Array.from({ length: 100 }, (_, i) => `${String(i).padStart(3, '0')}${'é'.repeat(97)}`);
    assert.equal((await t.api(t.users.moderator, 'POST', '/users/me/alert_words', { alert_words: long })).body.alert_words.length, 100);
    assert.deepEqual((await t.api(t.users.moderator, 'POST', '/users/me/alert_words', { alert_words: ['x'] })).body, err('Your alert words can have at most 10000 characters in all.'));
    assert.deepEqual((await t.api(t.users.moderator, 'DELETE', '/users/me/alert_words', { alert_words: long })).body, { ...SUCCESS, alert_words: [] });
  });
});

describe('DELETE /users/me/alert_words', () => {
  it('removes words in any case, ignores unknown ones and sends the list', async () => {
    const q = await queue(t.users.hamlet, ['alert_words']);
    const res = await t.api(t.users.hamlet, 'DELETE', '/users/me/alert_words', { alert_words: ['GHOST', 'never-added'] });
    assert.deepEqual(res.body, { ...SUCCESS, alert_words: ['Rome', 'castle'].sort() });
    assert.deepEqual(await events(t.users.hamlet, q), [{ type: 'alert_words', alert_words: ['Rome', 'castle'].sort() }]);
  });

  it('removes a long list from a long list in linear time', async () => {
    // A statement per word given, each comparing lower(word) with every word the user has: 1000
    // against 1000 took ~130 ms a request.
    const u = t.users.moderator;
    const mine = Array.from({ length: 1000 }, (_, i) => `Word${i}`);
    assert.equal((await t.api(u, 'POST', '/users/me/alert_words', { alert_words: mine })).status, 200);
    const others = Array.from({ length: 1000 }, (_, i) => `other${i}`);
    // Removing what is not there changes nothing (its time: bench/security-bounds.ts, F).
    for (let i = 0; i < 5; i++) assert.equal((await t.api(u, 'DELETE', '/users/me/alert_words', { alert_words: others })).status, 200);
    const res = await t.api(u, 'DELETE', '/users/me/alert_words', { alert_words: [...mine.slice(2).map((w) => w.toUpperCase()), 'nothing'] });
    assert.deepEqual(res.body, { ...SUCCESS, alert_words: ['Word0', 'Word1'] });
  });
});

describe('has_alert_word at send', () => {
  it('flags recipients whose alert words appear between word boundaries', async () => {
    const channel = await createChannel(t, t.users.owner, 'alerts', [t.users.hamlet, t.users.othello]);
    const q = await queue(t.users.hamlet, ['message']);
    const hit = await sendToChannel(t, t.users.othello, channel, 'news', 'Going to rome, (Castle) tomorrow!');
    const miss = await sendToChannel(t, t.users.othello, channel, 'news', 'romes and castles');
    const evs = await events(t.users.hamlet, q);
    assert.deepEqual(evs.map((e) => [e.message.id, e.flags]), [
      [hit, ['has_alert_word']],
      [miss, []],
    ]);
    const got = await t.api(t.users.hamlet, 'GET', '/messages', { anchor: hit, num_before: 0, num_after: 1, narrow: [{ operator: 'channel', operand: channel }] });
    assert.deepEqual(got.body.messages.map((m: any) => m.flags), [['has_alert_word'], []]);
    // Othello has no alert words.
    const his = await t.api(t.users.othello, 'GET', '/messages', { anchor: hit, num_before: 0, num_after: 0, narrow: [{ operator: 'channel', operand: channel }] });
    assert.deepEqual(his.body.messages[0].flags, ['read']);
    const dm = await sendDirect(t, t.users.othello, [t.users.hamlet], 'ROME!');
    const dmGot = await t.api(t.users.hamlet, 'GET', '/messages', { anchor: dm, num_before: 0, num_after: 0, narrow: [] });
    assert.deepEqual(dmGot.body.messages[0].flags, ['has_alert_word']);
  });

  it('matches many words at once: words inside words, overlapping ones, several users, Zulip\'s boundaries', async () => {
    const channel = await createChannel(t, t.users.owner, 'alerts-many', [t.users.admin, t.users.moderator, t.users.othello]);
    await t.api(t.users.admin, 'POST', '/users/me/alert_words', { alert_words: ['sandcastle', 'sand castle', 'deploy'] });
    await t.api(t.users.moderator, 'POST', '/users/me/alert_words', { alert_words: ['castle', 'and', 'Prod deployment', 'énorme'] });
    const flags = async (content: string) => {
      const id = await sendToChannel(t, t.users.othello, channel, 'many', content);
      const get = async (u: TestUser) => (await t.api(u, 'GET', '/messages', { anchor: id, num_before: 0, num_after: 0, narrow: [] })).body.messages[0].flags;
      return { admin: await get(t.users.admin), moderator: await get(t.users.moderator) };
    };
    const none = { admin: [], moderator: [] };
    const both = { admin: ['has_alert_word'], moderator: ['has_alert_word'] };
    // "castle" and "and" occur inside "sandcastle", not between boundaries; "sandcastle" does.
    assert.deepEqual(await flags('a sandcastle!'), { admin: ['has_alert_word'], moderator: [] });
    assert.deepEqual(await flags('A sand castle.'), both);
    assert.deepEqual(await flags('the prod deployment; done'), { admin: [], moderator: ['has_alert_word'] });
    assert.deepEqual(await flags('deploy: done'), { admin: ['has_alert_word'], moderator: [] });
    assert.deepEqual(await flags('deployments and redeploy'), { admin: [], moderator: ['has_alert_word'] });
    assert.deepEqual(await flags('très (énorme)'), { admin: [], moderator: ['has_alert_word'] });
    assert.deepEqual(await flags('xcastle castlex _castle_ castle-'), none);
    assert.deepEqual(await flags('>castle'), { admin: [], moderator: ['has_alert_word'] });
    // A word changed after the automaton was built counts at the next message.
    await t.api(t.users.moderator, 'DELETE', '/users/me/alert_words', { alert_words: ['castle', 'and', 'Prod deployment', 'énorme'] });
    assert.deepEqual(await flags('A sand castle.'), { admin: ['has_alert_word'], moderator: [] });
    await t.api(t.users.admin, 'DELETE', '/users/me/alert_words', { alert_words: ['sandcastle', 'sand castle', 'deploy'] });
  });

  it('matches a long list (an automaton of its own) as a short one, and follows its changes', async () => {
    const channel = await createChannel(t, t.users.owner, 'alerts-long', [t.users.admin, t.users.moderator, t.users.othello]);
    // 40 words of 100 characters: past the 2000 characters that share the realm's automaton.
    const long = Array.from({ length: 40 }, (_, i) => `${String(i).padStart(2, '0')}${'x'.repeat(98)}`);
    await t.api(t.users.admin, 'POST', '/users/me/alert_words', { alert_words: [...long, 'Quokka'] });
    await t.api(t.users.moderator, 'POST', '/users/me/alert_words', { alert_words: ['quokka', 'wombat'] });
    const flags = async (content: string) => {
      const id = await sendToChannel(t, t.users.othello, channel, 'long', content);
      const get = async (u: TestUser) => (await t.api(u, 'GET', '/messages', { anchor: id, num_before: 0, num_after: 0, narrow: [] })).body.messages[0].flags;
      return { admin: await get(t.users.admin), moderator: await get(t.users.moderator) };
    };
    assert.deepEqual(await flags('a QUOKKA!'), { admin: ['has_alert_word'], moderator: ['has_alert_word'] });
    assert.deepEqual(await flags(`see ${long[39]}.`), { admin: ['has_alert_word'], moderator: [] });
    assert.deepEqual(await flags(`see ${long[39]}x`), { admin: [], moderator: [] });
    assert.deepEqual(await flags('a wombat'), { admin: [], moderator: ['has_alert_word'] });
    await t.api(t.users.admin, 'DELETE', '/users/me/alert_words', { alert_words: ['quokka'] });
    await t.api(t.users.admin, 'POST', '/users/me/alert_words', { alert_words: ['wombat'] });
    assert.deepEqual(await flags('a quokka and a wombat'), { admin: ['has_alert_word'], moderator: ['has_alert_word'] });
    assert.deepEqual(await flags('a quokka'), { admin: [], moderator: ['has_alert_word'] });
    await t.api(t.users.admin, 'DELETE', '/users/me/alert_words', { alert_words: [...long, 'wombat'] });
    assert.deepEqual(await flags('a wombat'), { admin: [], moderator: ['has_alert_word'] });
    await t.api(t.users.moderator, 'DELETE', '/users/me/alert_words', { alert_words: ['quokka', 'wombat'] });
  });
});
