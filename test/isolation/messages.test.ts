// Isolation of the message read paths for the users most likely to see too much: guests,
// non-subscribers (administrators included: Zulip gives them no exception), a user's own bot and
// another user's bot, and a deactivated user whose API key must stop working. Each read path is run for
// each viewer against the same fixed set of messages, and the answer must be exactly the expected set
// (test/api/visibility.test.ts covers public versus private history; this file covers direct
// messages between others, bots and deactivation).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, err, ids, sendDirect, sendToChannel } from '../helpers/chat';
import { doCreateUser } from '../../src/actions/users';
import { BOT_TYPE, ROLE } from '../../src/lib/roles';

let t: TestServer;
const ch: Record<string, number> = {};
const m: Record<MsgKey, number> = {} as Record<MsgKey, number>;
let gone: TestUser;
let otherBot: TestUser;

type MsgKey = 'open' | 'secret' | 'dm' | 'groupDm' | 'botDm' | 'goneDm';
type Viewer = 'owner' | 'admin' | 'hamlet' | 'othello' | 'guest' | 'bot' | 'otherBot';
const VIEWERS: Viewer[] = ['owner', 'admin', 'hamlet', 'othello', 'guest', 'bot', 'otherBot'];
const DMS: MsgKey[] = ['dm', 'groupDm', 'botDm', 'goneDm'];
const USER_DEACTIVATED = { result: 'error', msg: 'Account is deactivated', code: 'USER_DEACTIVATED' };

const viewer = (v: Viewer): TestUser => (v === 'otherBot' ? otherBot : t.users[v]);

/**
 * The messages each viewer received (has a row for: the unnarrowed feed, search, matches_narrow, is:dm)
 * and the ones it may read (GET /messages/{id}: received plus public history for members). message_ids
 * without a channel narrow give only what the viewer received (Zulip's ok_to_include_history).
 * "bot" is hamlet's bot; owning a bot gives the bot nothing of its owner's, nor the owner anything of the bot's.
 */
const TABLE: Record<Viewer, { received: MsgKey[]; readable: MsgKey[] }> = {
  owner: { received: [], readable: ['open'] },
  admin: { received: [], readable: ['open'] },
  hamlet: { received: ['open', 'secret', 'dm', 'groupDm', 'botDm', 'goneDm'], readable: ['open', 'secret', 'dm', 'groupDm', 'botDm', 'goneDm'] },
  othello: { received: ['secret', 'dm', 'groupDm'], readable: ['open', 'secret', 'dm', 'groupDm'] },
  guest: { received: [], readable: [] },
  bot: { received: ['botDm'], readable: ['open', 'botDm'] },
  otherBot: { received: [], readable: ['open'] },
};

const sorted = (keys: MsgKey[]) => keys.map((k) => m[k]).sort((a, b) => a - b);
const ALL_KEYS = (): MsgKey[] => Object.keys(m) as MsgKey[];

before(async () => {
  t = await startTestServer();
  const u = t.users;
  const realmId = t.app.realmId();
  const made = doCreateUser(t.app, {
    realmId, email: 'emilia@example.com', password: 'correct-horse-battery', fullName: 'Emilia', role: ROLE.MEMBER,
    botType: null, botOwnerId: null, acting: null,
  });
  gone = { id: made.userId, email: 'emilia@example.com', apiKey: made.apiKey, password: 'correct-horse-battery', fullName: 'Emilia' };
  const bot2 = doCreateUser(t.app, {
    realmId, email: 'othello-bot@example.com', password: null, fullName: "Othello's Bot", role: ROLE.MEMBER,
    botType: BOT_TYPE.GENERIC, botOwnerId: u.othello.id, acting: null,
  });
  otherBot = { id: bot2.userId, email: 'othello-bot@example.com', apiKey: bot2.apiKey, password: '', fullName: "Othello's Bot" };
  t.app.batch.commit();

  ch.open = await createChannel(t, u.hamlet, 'open', [u.hamlet]);
  ch.secret = await createChannel(t, u.hamlet, 'secret', [u.hamlet, u.othello, gone], { invite_only: true, history_public_to_subscribers: false });
  m.open = await sendToChannel(t, u.hamlet, ch.open, 'talk', 'open marker');
  m.secret = await sendToChannel(t, u.hamlet, ch.secret, 'talk', 'secret marker');
  m.dm = await sendDirect(t, u.hamlet, [u.othello], 'dm marker');
  m.groupDm = await sendDirect(t, u.hamlet, [u.othello, gone], 'group dm marker');
  m.botDm = await sendDirect(t, u.hamlet, [u.bot], 'bot dm marker');
  m.goneDm = await sendDirect(t, u.hamlet, [gone], 'gone dm marker');
  const res = await t.api(u.admin, 'DELETE', `/users/${gone.id}`);
  assert.equal(res.status, 200, res.text);
});
after(() => t.close());

const get = async (user: TestUser, params: Record<string, unknown>) => {
  const res = await t.api(user, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 100, ...params });
  assert.equal(res.status, 200, res.text);
  return ids(res.body);
};

describe('message read paths, per viewer', () => {
  for (const v of VIEWERS) {
    const { received, readable } = TABLE[v];

    it(`GET /messages/{id}: ${v} reads exactly ${readable.join(', ') || 'nothing'}`, async () => {
      for (const key of ALL_KEYS()) {
        const res = await t.api(viewer(v), 'GET', `/messages/${m[key]}`);
        if (readable.includes(key)) {
          assert.equal(res.status, 200, `${v} should read ${key}: ${res.text}`);
          assert.equal(res.body.message.id, m[key]);
        } else {
          assert.equal(res.status, 400, `${v} must not read ${key}`);
          assert.deepEqual(res.body, err('Invalid message(s)'), `${v} must not read ${key}`);
        }
      }
    });

    it(`GET /messages with message_ids: ${v} gets exactly the received ones, and readable history only in a channel narrow`, async () => {
      const res = await t.api(viewer(v), 'GET', '/messages', { message_ids: sorted(ALL_KEYS()) });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(ids(res.body), sorted(received));
      const inOpen = await t.api(viewer(v), 'GET', '/messages', { message_ids: sorted(ALL_KEYS()), narrow: [{ operator: 'channel', operand: ch.open }] });
      assert.equal(inOpen.status, 200, inOpen.text);
      assert.deepEqual(ids(inOpen.body), sorted(readable.filter((k) => k === 'open')));
    });

    it(`GET /messages narrows: ${v} gets exactly what it received, plus readable channel history`, async () => {
      const who = viewer(v);
      const cases: [string, unknown[], MsgKey[]][] = [
        ['no narrow', [], received],
        ['is:dm', [{ operator: 'is', operand: 'dm' }], received.filter((k) => DMS.includes(k))],
        ['dm-including hamlet', [{ operator: 'dm-including', operand: t.users.hamlet.id }], v === 'hamlet' ? DMS : received.filter((k) => DMS.includes(k))],
        ['sender hamlet', [{ operator: 'sender', operand: t.users.hamlet.id }], received],
        ['search', [{ operator: 'search', operand: 'marker' }], received],
        ['channel secret', [{ operator: 'channel', operand: ch.secret }], readable.filter((k) => k === 'secret')],
        ['channel open', [{ operator: 'channel', operand: ch.open }], readable.filter((k) => k === 'open')],
        ['channels:public', [{ operator: 'channels', operand: 'public' }], v === 'guest' ? [] : readable.filter((k) => k === 'open')],
        ['channel secret + search', [{ operator: 'channel', operand: ch.secret }, { operator: 'search', operand: 'marker' }], readable.filter((k) => k === 'secret')],
        ['topic talk', [{ operator: 'topic', operand: 'talk' }], received.filter((k) => k === 'open' || k === 'secret')],
      ];
      for (const [label, narrow, expected] of cases) {
        assert.deepEqual(await get(who, { narrow }), sorted(expected), `${v}, ${label}`);
      }
    });

    it(`GET /messages with an id narrow: ${v} never gets a message it cannot read`, async () => {
      for (const key of ALL_KEYS()) {
        const got = await get(viewer(v), { narrow: [{ operator: 'id', operand: m[key] }] });
        // Received messages always match; readable history may (Zulip includes it for id narrows);
        // anything else never does.
        if (received.includes(key)) assert.deepEqual(got, [m[key]], `${v}, id ${key}`);
        else if (!readable.includes(key)) assert.deepEqual(got, [], `${v}, id ${key}`);
      }
    });

    it(`GET /messages/matches_narrow: ${v} learns only about messages it received`, async () => {
      for (const narrow of [[], [{ operator: 'search', operand: 'marker' }], [{ operator: 'is', operand: 'dm' }]]) {
        const res = await t.api(viewer(v), 'GET', '/messages/matches_narrow', { msg_ids: sorted(ALL_KEYS()), narrow });
        assert.equal(res.status, 200, res.text);
        const expected = narrow.length && (narrow[0] as { operand: string }).operand === 'dm' ? received.filter((k) => DMS.includes(k)) : received;
        assert.deepEqual(Object.keys(res.body.messages).map(Number).sort((a, b) => a - b), sorted(expected), `${v} ${JSON.stringify(narrow)}`);
      }
    });

    it(`POST /messages/flags/narrow: ${v} touches only what it may read`, async () => {
      const cases: [unknown[], MsgKey[]][] = [
        [[], received],
        [[{ operator: 'is', operand: 'dm' }], received.filter((k) => DMS.includes(k))],
        [[{ operator: 'channel', operand: ch.secret }], readable.filter((k) => k === 'secret')],
      ];
      for (const [narrow, expected] of cases) {
        const res = await t.api(viewer(v), 'POST', '/messages/flags/narrow', {
          anchor: 'oldest', num_before: 0, num_after: 100, narrow, op: 'add', flag: 'collapsed',
        });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.processed_count, expected.length, `${v} ${JSON.stringify(narrow)}`);
        assert.equal(res.body.first_processed_id, sorted(expected)[0] ?? null);
        assert.equal(res.body.last_processed_id, sorted(expected).at(-1) ?? null);
      }
    });

    it(`GET /users/me/{stream_id}/topics of the private channel: ${v}`, async () => {
      const res = await t.api(viewer(v), 'GET', `/users/me/${ch.secret}/topics`);
      if (v === 'hamlet' || v === 'othello') assert.deepEqual(res.body.topics, [{ name: 'talk', max_id: m.secret }]);
      else assert.deepEqual(res.body, err('Invalid channel ID'));
    });
  }
});

describe('a deactivated user', () => {
  const READS: [string, string, Record<string, unknown>][] = [
    ['GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 100 }],
    ['GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 100, narrow: [{ operator: 'search', operand: 'marker' }] }],
    ['GET', '/messages/{secret}', {}],
    ['GET', '/messages/{goneDm}', {}],
    ['GET', '/messages/matches_narrow', { msg_ids: [], narrow: [] }],
    ['POST', '/messages/flags/narrow', { anchor: 'oldest', num_before: 0, num_after: 10, narrow: [], op: 'add', flag: 'read' }],
    ['GET', '/users/me/{secretChannel}/topics', {}],
    ['GET', '/users/me/subscriptions', {}],
    ['POST', '/register', {}],
    ['GET', '/events', { dont_block: true }],
    ['GET', '/users/me', {}],
    ['GET', '/users', {}],
    ['GET', '/user_groups', {}],
    ['GET', '/scheduled_messages', {}],
    ['GET', '/drafts', {}],
    ['GET', '/realm/presence', {}],
  ];
  for (const [method, path, params] of READS) {
    it(`is refused with 401 USER_DEACTIVATED: ${method} ${path} ${Object.keys(params).join(',')}`, async () => {
      const real = path.replace('{secret}', String(m.secret)).replace('{goneDm}', String(m.goneDm)).replace('{secretChannel}', String(ch.secret));
      const res = await t.api(gone, method, real, params);
      assert.equal(res.status, 401, `${method} ${real}: ${res.text}`);
      assert.deepEqual(res.body, USER_DEACTIVATED);
    });
  }
});
