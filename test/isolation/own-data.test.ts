// Isolation of per-user data: scheduled messages, drafts and bot storage are visible to their owner
// only, through the list endpoints and the initial state of POST /register; another user's ids
// answer exactly like missing ones; bot storage belongs to its bot alone (not its owner, not another
// bot); and a deactivated user's key stops working.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { err } from '../helpers/chat';
import { doCreateUser } from '../../src/actions/users';
import { BOT_TYPE, ROLE } from '../../src/lib/roles';

let t: TestServer;
let otherBot: TestUser;
let gone: TestUser;
type Viewer = 'hamlet' | 'othello' | 'admin' | 'owner' | 'guest' | 'bot' | 'otherBot';
const VIEWERS: Viewer[] = ['hamlet', 'othello', 'admin', 'owner', 'guest', 'bot', 'otherBot'];
const viewer = (v: Viewer) => (v === 'otherBot' ? otherBot : t.users[v]);
const USER_DEACTIVATED = { result: 'error', msg: 'Account is deactivated', code: 'USER_DEACTIVATED' };

/** Ids of what each viewer created (scheduled messages and drafts). */
const scheduled: Partial<Record<Viewer | 'gone', number[]>> = {};
const drafts: Partial<Record<Viewer | 'gone', number[]>> = {};

const ok = async (p: Promise<{ status: number; text: string; body: any }>) => {
  const res = await p;
  assert.equal(res.status, 200, res.text);
  return res.body;
};

before(async () => {
  t = await startTestServer();
  const realmId = t.app.realmId();
  const b = doCreateUser(t.app, {
    realmId, email: 'othello-bot@example.com', password: null, fullName: "Othello's Bot", role: ROLE.MEMBER,
    botType: BOT_TYPE.GENERIC, botOwnerId: t.users.othello.id, acting: null,
  });
  otherBot = { id: b.userId, email: 'othello-bot@example.com', apiKey: b.apiKey, password: '', fullName: "Othello's Bot" };
  const g = doCreateUser(t.app, {
    realmId, email: 'emilia@example.com', password: 'correct-horse-battery', fullName: 'Emilia', role: ROLE.MEMBER,
    botType: null, botOwnerId: null, acting: null,
  });
  gone = { id: g.userId, email: 'emilia@example.com', apiKey: g.apiKey, password: '', fullName: 'Emilia' };
  t.app.batch.commit();
  const at = Math.floor(Date.now() / 1000) + 3600;
  const creators: [Viewer | 'gone', TestUser, number][] = [
    ['hamlet', t.users.hamlet, 2],
    ['othello', t.users.othello, 1],
    ['guest', t.users.guest, 1],
    ['bot', t.users.bot, 1],
    ['gone', gone, 1],
  ];
  for (const [name, user, n] of creators) {
    scheduled[name] = [];
    drafts[name] = [];
    for (let i = 0; i < n; i++) {
      const s = await ok(t.api(user, 'POST', '/scheduled_messages', {
        type: 'direct', to: [t.users.hamlet.id], content: `${name} scheduled ${i}`, scheduled_delivery_timestamp: at + i,
      }));
      scheduled[name]!.push(s.scheduled_message_id);
      const d = await ok(t.api(user, 'POST', '/drafts', { drafts: [{ type: 'private', to: [t.users.hamlet.id], topic: '', content: `${name} draft ${i}` }] }));
      drafts[name]!.push(...d.ids);
    }
  }
  await ok(t.api(t.users.bot, 'PUT', '/bot_storage', { storage: { token: 'hamlet-bot-secret' } }));
  await ok(t.api(otherBot, 'PUT', '/bot_storage', { storage: { mine: 'othello-bot-value' } }));
  await ok(t.api(t.users.admin, 'DELETE', `/users/${gone.id}`));
});
after(() => t.close());

const others = <T>(map: Partial<Record<string, T[]>>, v: string): T[] =>
  Object.entries(map).filter(([k]) => k !== v).flatMap(([, ids]) => ids ?? []);

describe('GET /scheduled_messages and GET /drafts list only your own', () => {
  for (const v of VIEWERS) {
    it(`${v}`, async () => {
      const s = await ok(t.api(viewer(v), 'GET', '/scheduled_messages'));
      assert.deepEqual(s.scheduled_messages.map((x: { scheduled_message_id: number }) => x.scheduled_message_id), scheduled[v] ?? []);
      assert.ok(s.scheduled_messages.every((x: { content: string }) => x.content.startsWith(`${v} `)));
      const d = await ok(t.api(viewer(v), 'GET', '/drafts'));
      assert.deepEqual(d.drafts.map((x: { id: number }) => x.id).sort((a: number, b: number) => a - b), drafts[v] ?? []);
      assert.equal(d.count, (drafts[v] ?? []).length);
    });
  }
});

describe('POST /register initial state holds only your own', () => {
  for (const v of VIEWERS) {
    it(`${v}`, async () => {
      const r = await ok(t.api(viewer(v), 'POST', '/register', { fetch_event_types: ['scheduled_messages', 'drafts'] }));
      assert.deepEqual(r.scheduled_messages.map((x: { scheduled_message_id: number }) => x.scheduled_message_id), scheduled[v] ?? []);
      assert.deepEqual(r.drafts.map((x: { id: number }) => x.id).sort((a: number, b: number) => a - b), drafts[v] ?? []);
      await ok(t.api(viewer(v), 'DELETE', '/events', { queue_id: r.queue_id }));
    });
  }
});

describe("another user's scheduled messages and drafts answer like missing ones", () => {
  for (const v of VIEWERS) {
    it(`${v} cannot edit or delete anyone else's`, async () => {
      const notScheduled = err('Scheduled message does not exist');
      for (const id of [...others(scheduled, v), 999_999]) {
        for (const [method, params] of [['PATCH', { content: 'hijack' }], ['DELETE', {}]] as const) {
          const res = await t.api(viewer(v), method, `/scheduled_messages/${id}`, params);
          assert.equal(res.status, 404, `${v} ${method} scheduled ${id}: ${res.text}`);
          assert.deepEqual(res.body, notScheduled);
        }
      }
      const notDraft = err('Draft does not exist');
      for (const id of [...others(drafts, v), 999_999]) {
        const patch = await t.api(viewer(v), 'PATCH', `/drafts/${id}`, { draft: { type: 'private', to: [], topic: '', content: 'hijack' } });
        assert.equal(patch.status, 404, `${v} PATCH draft ${id}: ${patch.text}`);
        assert.deepEqual(patch.body, notDraft);
        const del = await t.api(viewer(v), 'DELETE', `/drafts/${id}`);
        assert.equal(del.status, 404);
        assert.deepEqual(del.body, notDraft);
      }
    });
  }

  it('nothing was changed by the attempts', async () => {
    const s = await ok(t.api(t.users.hamlet, 'GET', '/scheduled_messages'));
    assert.deepEqual(s.scheduled_messages.map((x: { content: string }) => x.content), ['hamlet scheduled 0', 'hamlet scheduled 1']);
    const d = await ok(t.api(t.users.hamlet, 'GET', '/drafts'));
    assert.deepEqual(d.drafts.map((x: { content: string }) => x.content).sort(), ['hamlet draft 0', 'hamlet draft 1']);
    const count = (t.app.db.prepare('SELECT count(*) AS n FROM draft').get() as { n: number }).n;
    assert.equal(count, Object.values(drafts).flat().length);
  });
});

describe('bot storage belongs to its bot alone', () => {
  const DENIED = err('This endpoint is only available to bots.', 'PERMISSION_DENIED');

  it('each bot reads only its own storage', async () => {
    assert.deepEqual((await ok(t.api(t.users.bot, 'GET', '/bot_storage'))).storage, { token: 'hamlet-bot-secret' });
    assert.deepEqual((await ok(t.api(otherBot, 'GET', '/bot_storage'))).storage, { mine: 'othello-bot-value' });
  });

  it("another bot asking for the key gets 'Key does not exist.' and cannot delete it", async () => {
    let res = await t.api(otherBot, 'GET', '/bot_storage', { keys: ['token'] });
    assert.deepEqual(res.body, err('Key does not exist.'));
    res = await t.api(otherBot, 'DELETE', '/bot_storage', { keys: ['token'] });
    assert.deepEqual(res.body, err('Key does not exist.'));
    assert.deepEqual((await ok(t.api(t.users.bot, 'GET', '/bot_storage'))).storage, { token: 'hamlet-bot-secret' });
  });

  for (const v of ['hamlet', 'othello', 'admin', 'owner', 'guest'] as const) {
    it(`${v} (a human${v === 'hamlet' ? ", the bot's owner" : ''}) is refused with PERMISSION_DENIED on every method`, async () => {
      for (const [method, params] of [['GET', {}], ['GET', { keys: ['token'] }], ['DELETE', {}], ['PUT', { storage: { token: 'x' } }]] as const) {
        const res = await t.api(t.users[v], method, '/bot_storage', params);
        assert.equal(res.status, 400, `${v} ${method}`);
        assert.deepEqual(res.body, DENIED);
      }
    });
  }
});

describe('a deactivated user', () => {
  for (const [method, path, params] of [
    ['GET', '/scheduled_messages', {}],
    ['GET', '/drafts', {}],
    ['DELETE', '/scheduled_messages/{s}', {}],
    ['DELETE', '/drafts/{d}', {}],
  ] as const) {
    it(`is refused: ${method} ${path}`, async () => {
      const real = path.replace('{s}', String(scheduled.gone![0])).replace('{d}', String(drafts.gone![0]));
      const res = await t.api(gone, method, real, params);
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, USER_DEACTIVATED);
    });
  }
});
