import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, err, SUCCESS, systemGroups } from '../helpers/chat';

// A frozen clock the tests move by hand, so timestamps are exact.
let nowMs = 1_900_000_000_000;
const clock = { nowMs: () => nowMs };
const now = () => Math.floor(nowMs / 1000);
const advance = (seconds: number) => {
  nowMs += seconds * 1000;
};

let t: TestServer;
before(async () => {
  t = await startTestServer({ clock });
});
after(() => t.close());

const report = (u: TestUser, params: Record<string, unknown> = {}) => t.api(u, 'POST', '/users/me/presence', { status: 'active', ...params });
const legacy = (status: 'active' | 'idle', timestamp: number) => ({
  aggregated: { client: 'website', status, timestamp },
  website: { client: 'website', status, timestamp, pushable: false },
});

async function queue(user: TestUser, params: Record<string, unknown> = {}): Promise<string> {
  const res = await t.api(user, 'POST', '/register', { event_types: ['presence'], fetch_event_types: [], ...params });
  assert.equal(res.status, 200, res.text);
  return res.body.queue_id;
}
async function events(user: TestUser, queueId: string): Promise<any[]> {
  const res = await t.api(user, 'GET', '/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  assert.equal(res.status, 200, res.text);
  return res.body.events.filter((e: any) => e.type !== 'heartbeat').map(({ id, ...rest }: any) => rest);
}

describe('POST /users/me/presence', () => {
  let t0: number;
  it('records the first report and answers in the legacy format by default', async () => {
    t0 = now();
    const res = await report(t.users.hamlet);
    assert.deepEqual(res.body, {
      ...SUCCESS,
      presences: { [t.users.hamlet.email]: legacy('active', t0) },
      server_timestamp: nowMs / 1000,
      presence_last_update_id: 1,
    });
  });

  it('answers in the modern format with slim_presence', async () => {
    const res = await report(t.users.hamlet, { slim_presence: true });
    assert.deepEqual(res.body, {
      ...SUCCESS,
      presences: { [String(t.users.hamlet.id)]: { active_timestamp: t0, idle_timestamp: t0 } },
      server_timestamp: nowMs / 1000,
      presence_last_update_id: 1,
    });
  });

  it('returns nothing but success with ping_only', async () => {
    advance(60);
    assert.deepEqual((await report(t.users.othello, { ping_only: true })).body, SUCCESS);
  });

  it('follows the last_update_id protocol across calls', async () => {
    const h = t.users.hamlet;
    const o = t.users.othello;
    // -1: everything (modern format), and the newest update id.
    const first = await report(h, { last_update_id: -1 });
    const all = first.body.presences;
    // hamlet's second report 60 s later refreshed both of his timestamps (update 3); othello's ping was update 2.
    assert.deepEqual(all, {
      [String(h.id)]: { active_timestamp: now(), idle_timestamp: now() },
      [String(o.id)]: { active_timestamp: now(), idle_timestamp: now() },
    });
    assert.equal(first.body.presence_last_update_id, 3);
    // Nothing new: the client's id comes back and no presences.
    const none = await report(h, { last_update_id: 3 });
    assert.deepEqual(none.body, { ...SUCCESS, presences: {}, server_timestamp: nowMs / 1000, presence_last_update_id: 3 });
    // othello goes idle 100 s later: only his entry, with the next id.
    advance(100);
    assert.deepEqual((await report(o, { status: 'idle', ping_only: true })).body, SUCCESS);
    const next = await report(h, { last_update_id: 3 });
    assert.deepEqual(next.body.presences, {
      [String(o.id)]: { active_timestamp: now() - 100, idle_timestamp: now() },
      [String(h.id)]: { active_timestamp: now(), idle_timestamp: now() },
    });
    assert.equal(next.body.presence_last_update_id, 5);
    // The legacy format shows othello idle since his last connection.
    const old = await report(h);
    assert.deepEqual(old.body.presences, { [h.email]: legacy('active', now()), [o.email]: legacy('idle', now()) });
    assert.equal(old.body.presence_last_update_id, 5);
  });

  it('applies history_limit_days on full fetches only', async () => {
    const a = t.users.admin;
    advance(-20 * 86400);
    await report(a, { ping_only: true });
    advance(20 * 86400);
    const aid = String(a.id);
    const byDefault = await report(t.users.hamlet, { last_update_id: -1 });
    assert.ok(!(aid in byDefault.body.presences));
    const wider = await report(t.users.hamlet, { last_update_id: -1, history_limit_days: 30 });
    assert.deepEqual(wider.body.presences[aid], { active_timestamp: now() - 20 * 86400, idle_timestamp: now() - 20 * 86400 });
    const zero = await report(t.users.hamlet, { slim_presence: true, history_limit_days: 0 });
    // Only those connected this very second: hamlet and (idle) othello.
    assert.deepEqual(zero.body.presences, {
      [String(t.users.hamlet.id)]: { active_timestamp: now(), idle_timestamp: now() },
      [String(t.users.othello.id)]: { active_timestamp: now() - 100, idle_timestamp: now() },
    });
    // With a positive last_update_id the window is ignored.
    const since = await report(t.users.hamlet, { last_update_id: 5, history_limit_days: 0 });
    assert.deepEqual(Object.keys(since.body.presences), [aid]);
  });

  it('validates its parameters and refuses bots', async () => {
    const h = t.users.hamlet;
    assert.deepEqual((await report(h, { status: 'away' })).body, err('Invalid status: away'));
    assert.deepEqual((await t.api(h, 'POST', '/users/me/presence', {})).body, err("Missing 'status' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'status' }));
    assert.deepEqual((await report(h, { ping_only: 'yes' })).body, err('ping_only is not valid JSON'));
    assert.deepEqual((await report(h, { last_update_id: 1.5 })).body, err('last_update_id is not an integer'));
    assert.deepEqual((await report(h, { new_user_input: true, ping_only: true })).body, SUCCESS);
    assert.deepEqual((await report(t.users.bot)).body, err('This endpoint does not accept bot requests.'));
    assert.deepEqual((await t.api(t.users.bot, 'POST', '/users/me/presence', {})).body, err('This endpoint does not accept bot requests.'));
  });

  it('hides users who turned presence off', async () => {
    const o = t.users.othello;
    assert.equal((await t.api(o, 'PATCH', '/settings', { presence_enabled: false })).status, 200);
    const res = await report(t.users.hamlet, { slim_presence: true });
    assert.ok(!(String(o.id) in res.body.presences));
    assert.deepEqual((await t.api(t.users.hamlet, 'GET', `/users/${o.id}/presence`)).body, err(`No presence data for ${o.id}`));
    await t.api(o, 'PATCH', '/settings', { presence_enabled: true });
  });
});

describe('presence events', () => {
  it('announce a user coming online in the form each queue asked for', async () => {
    const m = t.users.moderator;
    const legacyQ = await queue(t.users.hamlet);
    const slimQ = await queue(t.users.othello, { slim_presence: true });
    const modernQ = await queue(t.users.admin, { client_capabilities: { notification_settings_null: false, simplified_presence_events: true } });
    await report(m, { ping_only: true });
    const ts = now();
    assert.deepEqual(await events(t.users.hamlet, legacyQ), [
      { type: 'presence', user_id: m.id, email: m.email, server_timestamp: nowMs / 1000, presence: { website: { client: 'website', status: 'active', timestamp: ts, pushable: false } } },
    ]);
    assert.deepEqual(await events(t.users.othello, slimQ), [
      { type: 'presence', user_id: m.id, server_timestamp: nowMs / 1000, presence: { website: { client: 'website', status: 'active', timestamp: ts, pushable: false } } },
    ]);
    assert.deepEqual(await events(t.users.admin, modernQ), [
      { type: 'presence', presences: { [String(m.id)]: { active_timestamp: ts, idle_timestamp: ts } } },
    ]);
    // A repeated report while online sends nothing.
    advance(30);
    await report(m, { ping_only: true });
    assert.equal((await events(t.users.admin, modernQ)).length, 1);
  });

  it('register returns the same presences as the endpoint', async () => {
    const reg = await t.api(t.users.hamlet, 'POST', '/register', { fetch_event_types: ['presence'], slim_presence: true });
    const res = await report(t.users.hamlet, { slim_presence: true });
    assert.deepEqual(reg.body.presences, res.body.presences);
    assert.equal(reg.body.presence_last_update_id, res.body.presence_last_update_id);
  });

  it('register writes the same presences text as the endpoint (its JSON is built by SQLite), a non-integer timestamp too', async () => {
    // The text of the "presences" object in an answer.
    const presencesText = (text: string) => {
      const start = text.indexOf('"presences":') + '"presences":'.length;
      let depth = 0;
      for (let i = start; i < text.length; i++) {
        if (text[i] === '{') depth++;
        else if (text[i] === '}' && --depth === 0) return text.slice(start, i + 1);
      }
      throw new Error('no presences');
    };
    const compare = async () => {
      const reg = await t.api(t.users.hamlet, 'POST', '/register', { fetch_event_types: ['presence'], slim_presence: true });
      const res = await report(t.users.hamlet, { slim_presence: true });
      assert.equal(presencesText(reg.text), presencesText(res.text));
      assert.equal(reg.body.presence_last_update_id, res.body.presence_last_update_id);
    };
    await compare();
    // Written by no API (an import of Zulip's float timestamps could): both answers give whole
    // seconds, as Zulip does, never the fraction.
    const stored = (t.app.db.prepare('SELECT last_active_time AS a FROM presence WHERE user_id = ?').get(t.users.othello.id) as { a: number }).a;
    t.app.batch.write(() => t.app.db.prepare('UPDATE presence SET last_active_time = last_active_time + 0.9234567 WHERE user_id = ?').run(t.users.othello.id));
    t.app.batch.commit();
    await compare();
    const reg = await t.api(t.users.hamlet, 'POST', '/register', { fetch_event_types: ['presence'], slim_presence: true });
    assert.equal(reg.body.presences[String(t.users.othello.id)].active_timestamp, stored);
    t.app.batch.write(() => t.app.db.prepare('UPDATE presence SET last_active_time = ? WHERE user_id = ?').run(stored, t.users.othello.id));
    t.app.batch.commit();
  });
});

describe('GET /realm/presence', () => {
  it('lists everyone in the legacy format', async () => {
    const res = await t.api(t.users.guest, 'GET', '/realm/presence');
    const viaPost = await report(t.users.hamlet, { ping_only: false });
    assert.deepEqual(res.body, { ...SUCCESS, presences: viaPost.body.presences, server_timestamp: nowMs / 1000 });
    assert.ok(t.users.hamlet.email in res.body.presences);
  });
});

describe('GET /users/{user_id_or_email}/presence', () => {
  it('answers by id and by email', async () => {
    const h = t.users.hamlet;
    const byId = await t.api(t.users.othello, 'GET', `/users/${h.id}/presence`);
    const { presences } = (await report(t.users.othello)).body;
    assert.deepEqual(byId.body, { ...SUCCESS, presence: presences[h.email] });
    assert.deepEqual((await t.api(t.users.othello, 'GET', `/users/${h.email}/presence`)).body, byId.body);
  });

  it('refuses unknown users, bots and users without data', async () => {
    const u = t.users.othello;
    assert.deepEqual((await t.api(u, 'GET', '/users/99999/presence')).body, err('No such user'));
    assert.deepEqual((await t.api(u, 'GET', '/users/nobody@example.com/presence')).body, err('No such user'));
    assert.deepEqual((await t.api(u, 'GET', `/users/${t.users.bot.id}/presence`)).body, err('Presence is not supported for bot users.'));
    assert.deepEqual((await t.api(u, 'GET', `/users/${t.users.owner.email}/presence`)).body, err(`No presence data for ${t.users.owner.email}`));
  });
});

describe('presence limited to accessible users', () => {
  it('shows users outside can_access_all_users_group only the people they share a channel or conversation with', async () => {
    const groups = systemGroups(t);
    const g = t.users.guest;
    await report(g, { ping_only: true });
    t.app.db.prepare('UPDATE realm SET can_access_all_users_group = ?').run(groups['role:members']);
    try {
      const slim = async () => Object.keys((await report(g, { slim_presence: true })).body.presences).sort();
      assert.deepEqual(await slim(), [String(g.id)]);
      assert.deepEqual((await t.api(g, 'GET', `/users/${t.users.hamlet.id}/presence`)).body, err('No such user'));
      await createChannel(t, t.users.owner, 'guest room', [g, t.users.hamlet]);
      assert.deepEqual(await slim(), [String(g.id), String(t.users.hamlet.id)].sort());
      // Members still see everyone, the guest included.
      assert.ok(String(g.id) in (await report(t.users.othello, { slim_presence: true })).body.presences);
      // An event about othello does not reach the guest.
      const q = await queue(g);
      const hq = await queue(t.users.hamlet);
      advance(200);
      await report(t.users.othello, { ping_only: true });
      assert.deepEqual(await events(g, q), []);
      assert.deepEqual((await events(t.users.hamlet, hq)).map((e) => e.user_id), [t.users.othello.id]);
      // With the server setting off, everyone sees everyone.
      t.app.config.accessLimitsPresence = false;
      assert.ok((await slim()).includes(String(t.users.othello.id)));
    } finally {
      t.app.config.accessLimitsPresence = true;
      t.app.db.prepare('UPDATE realm SET can_access_all_users_group = ?').run(groups['role:everyone']);
    }
  });
});
