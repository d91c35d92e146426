import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, err, SUCCESS } from '../helpers/chat';

let t: TestServer;
let channel: number;
let privateChannel: number;
before(async () => {
  t = await startTestServer();
  channel = await createChannel(t, t.users.owner, 'drafting', [t.users.hamlet]);
  privateChannel = await createChannel(t, t.users.owner, 'secret drafts', [t.users.owner], { invite_only: true });
});
after(() => t.close());

async function queue(user: TestUser): Promise<string> {
  const res = await t.api(user, 'POST', '/register', { event_types: ['drafts'], fetch_event_types: [] });
  assert.equal(res.status, 200, res.text);
  return res.body.queue_id;
}
async function events(user: TestUser, queueId: string): Promise<any[]> {
  const res = await t.api(user, 'GET', '/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  return res.body.events.filter((e: any) => e.type !== 'heartbeat').map(({ id, ...rest }: any) => rest);
}

describe('POST /drafts', () => {
  it('creates drafts in order, returns their ids and sends one add event', async () => {
    const u = t.users.hamlet;
    const q = await queue(u);
    const drafts = [
      { type: 'stream', to: [channel], topic: 'sync drafts', content: 'Backend support?', timestamp: 1595479019 },
      { type: 'private', to: [t.users.othello.id, t.users.admin.id, t.users.othello.id], topic: 'ignored', content: 'psst', timestamp: 1595479020 },
      { type: '', to: [5], topic: 'x', content: 'nowhere yet', timestamp: 1595479021 },
    ];
    const res = await t.api(u, 'POST', '/drafts', { drafts });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.ids.length, 3);
    const [a, b, c] = res.body.ids;
    const stored = [
      { id: a, type: 'stream', to: [channel], topic: 'sync drafts', content: 'Backend support?', timestamp: 1595479019 },
      { id: b, type: 'private', to: [t.users.admin.id, t.users.othello.id].sort((x, y) => x - y), topic: '', content: 'psst', timestamp: 1595479020 },
      { id: c, type: '', to: [], topic: '', content: 'nowhere yet', timestamp: 1595479021 },
    ];
    assert.deepEqual(await events(u, q), [{ type: 'drafts', op: 'add', drafts: stored }]);
    assert.deepEqual((await t.api(u, 'GET', '/drafts')).body, { ...SUCCESS, count: 3, drafts: [...stored].reverse() });
    const reg = await t.api(u, 'POST', '/register', { fetch_event_types: ['drafts'] });
    assert.deepEqual(reg.body.drafts, [...stored].reverse());
  });

  it('takes fractional and float-written timestamps, stored as whole seconds', async () => {
    const u = t.users.guest;
    const form = new URLSearchParams({ drafts: '[{"type":"","to":[],"topic":"","content":"a","timestamp":1595479019.0},{"type":"","to":[],"topic":"","content":"b","timestamp":1595479030.7}]' });
    const res = await t.raw('POST', '/api/v1/drafts', {
      headers: { authorization: 'Basic ' + Buffer.from(`${u.email}:${u.apiKey}`).toString('base64'), 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual((await t.api(u, 'GET', '/drafts')).body.drafts.map((d: { timestamp: number }) => d.timestamp), [1595479030, 1595479019]);
  });

  it('defaults the timestamp to now and truncates long topics', async () => {
    const u = t.users.othello;
    const before = Math.floor(Date.now() / 1000);
    const res = await t.api(u, 'POST', '/drafts', { drafts: [{ type: 'stream', to: [channel], topic: 't'.repeat(70), content: 'c' }] });
    assert.equal(res.status, 200, res.text);
    const [d] = (await t.api(u, 'GET', '/drafts')).body.drafts;
    assert.ok(d.timestamp >= before && d.timestamp <= before + 2);
    assert.equal(d.topic, 't'.repeat(57) + '...');
  });

  it('refuses invalid drafts with Zulip messages', async () => {
    const u = t.users.hamlet;
    const post = (d: unknown) => t.api(u, 'POST', '/drafts', { drafts: [d] });
    const base = { type: 'stream', to: [channel], topic: 'a', content: 'b' };
    assert.deepEqual((await post({ ...base, to: [] })).body, err('Must specify exactly 1 channel ID for channel messages'));
    assert.deepEqual((await post({ ...base, to: [channel, channel] })).body, err('Must specify exactly 1 channel ID for channel messages'));
    assert.deepEqual((await post({ ...base, to: [privateChannel] })).body, err('Invalid channel ID'));
    assert.deepEqual((await post({ ...base, to: [99999] })).body, err('Invalid channel ID'));
    assert.deepEqual((await post({ ...base, topic: 'a\u0000b' })).body, err('Topic must not contain null bytes'));
    assert.deepEqual((await post({ ...base, timestamp: -1 })).body, err('Timestamp must not be negative.'));
    assert.deepEqual((await post({ ...base, timestamp: 'soon' })).body, err('drafts[0]["timestamp"] is not a float'));
    assert.deepEqual((await post({ ...base, content: '' })).body, err('drafts[0]["content"] cannot be blank'));
    assert.deepEqual((await post({ ...base, content: '   ' })).body, err('Content must not be empty'));
    assert.deepEqual((await post({ ...base, type: 'channel' })).body, err('Invalid drafts[0]["type"]'));
    assert.deepEqual((await post({ ...base, extra: 1 })).body, err('Argument "extra" at drafts[0] is unexpected'));
    assert.deepEqual((await post({ type: 'private', to: [99999], topic: '', content: 'x' })).body, err('Invalid user ID 99999'));
    const { content: _c, ...noContent } = base;
    assert.deepEqual((await post(noContent)).body, err('drafts[0]["content"] field is missing: Field required'));
    assert.deepEqual((await t.api(u, 'POST', '/drafts', { drafts: 'x' })).body, err('drafts is not valid JSON'));
    // Nothing of a failing batch is stored.
    const before = (await t.api(u, 'GET', '/drafts')).body.count;
    await t.api(u, 'POST', '/drafts', { drafts: [base, { ...base, to: [] }] });
    assert.equal((await t.api(u, 'GET', '/drafts')).body.count, before);
  });
});

describe('POST /drafts bounds', () => {
  it('takes at most 1000 drafts per request (as many as /register lists)', async () => {
    const draft = { type: '', to: [], topic: '', content: 'bulk', timestamp: 1_700_000_000 };
    assert.deepEqual((await t.api(t.users.othello, 'POST', '/drafts', { drafts: Array(1001).fill(draft) })).body, err('drafts is too long (limit: 1000 items)'));
    const ok = await t.api(t.users.othello, 'POST', '/drafts', { drafts: Array(1000).fill(draft) });
    assert.equal(ok.body.ids.length, 1000);
  });
});

describe('PATCH /drafts/{draft_id}', () => {
  it('replaces the draft and sends an update event', async () => {
    const u = t.users.admin;
    const id = (await t.api(u, 'POST', '/drafts', { drafts: [{ type: '', to: [], topic: '', content: 'v1', timestamp: 100 }] })).body.ids[0];
    const q = await queue(u);
    const draft = { type: 'stream', to: [channel], topic: 'questions', content: 'v2', timestamp: 200 };
    assert.deepEqual((await t.api(u, 'PATCH', `/drafts/${id}`, { draft })).body, SUCCESS);
    assert.deepEqual(await events(u, q), [{ type: 'drafts', op: 'update', draft: { id, ...draft } }]);
    assert.deepEqual((await t.api(u, 'GET', '/drafts')).body.drafts, [{ id, ...draft }]);
  });

  it("answers 404 for missing drafts and other users' drafts", async () => {
    const mine = (await t.api(t.users.admin, 'GET', '/drafts')).body.drafts[0].id;
    const draft = { type: '', to: [], topic: '', content: 'x' };
    for (const [user, id] of [[t.users.admin, 99999], [t.users.hamlet, mine]] as const) {
      const res = await t.api(user, 'PATCH', `/drafts/${id}`, { draft });
      assert.equal(res.status, 404);
      assert.deepEqual(res.body, err('Draft does not exist'));
    }
    assert.deepEqual((await t.api(t.users.admin, 'PATCH', `/drafts/${mine}`, {})).body, err("Missing 'draft' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'draft' }));
  });
});

describe('DELETE /drafts/{draft_id}', () => {
  it('deletes the draft and sends a remove event', async () => {
    const u = t.users.admin;
    const id = (await t.api(u, 'GET', '/drafts')).body.drafts[0].id;
    const q = await queue(u);
    assert.deepEqual((await t.api(u, 'DELETE', `/drafts/${id}`)).body, SUCCESS);
    assert.deepEqual(await events(u, q), [{ type: 'drafts', op: 'remove', draft_id: id }]);
    const again = await t.api(u, 'DELETE', `/drafts/${id}`);
    assert.equal(again.status, 404);
    assert.deepEqual(again.body, err('Draft does not exist'));
  });
});

describe('drafts with synchronization disabled', () => {
  it('refuses every write', async () => {
    const u = t.users.moderator;
    const id = (await t.api(u, 'POST', '/drafts', { drafts: [{ type: '', to: [], topic: '', content: 'x' }] })).body.ids[0];
    assert.deepEqual((await t.api(u, 'PATCH', '/settings', { enable_drafts_synchronization: false })).body, SUCCESS);
    const msg = err('User has disabled synchronizing drafts.');
    assert.deepEqual((await t.api(u, 'POST', '/drafts', { drafts: [{ type: '', to: [], topic: '', content: 'x' }] })).body, msg);
    assert.deepEqual((await t.api(u, 'PATCH', `/drafts/${id}`, { draft: { type: '', to: [], topic: '', content: 'y' } })).body, msg);
    assert.deepEqual((await t.api(u, 'DELETE', `/drafts/${id}`)).body, msg);
    assert.deepEqual((await t.api(u, 'GET', '/drafts')).body, { ...SUCCESS, count: 0, drafts: [] });
  });
});
