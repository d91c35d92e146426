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
});

describe('DELETE /users/me/alert_words', () => {
  it('removes words in any case, ignores unknown ones and sends the list', async () => {
    const q = await queue(t.users.hamlet, ['alert_words']);
    const res = await t.api(t.users.hamlet, 'DELETE', '/users/me/alert_words', { alert_words: ['GHOST', 'never-added'] });
    assert.deepEqual(res.body, { ...SUCCESS, alert_words: ['Rome', 'castle'].sort() });
    assert.deepEqual(await events(t.users.hamlet, q), [{ type: 'alert_words', alert_words: ['Rome', 'castle'].sort() }]);
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
});
