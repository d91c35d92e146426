// Ids are never used twice (issue 15, item 9): as in Zulip, deleting the newest object of a kind and
// creating another gives the new one a new id, not the deleted one's (clients cache ids).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, basicAuth, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, SUCCESS } from '../helpers/chat';
import { multipart } from '../helpers/multipart';
import { openDatabase } from '../../src/db/open';

let t: TestServer;
let channel: number;
before(async () => {
  t = await startTestServer();
  channel = await createChannel(t, t.users.owner, 'ids', [t.users.hamlet]);
});
after(() => t.close());

/** Creates three objects, deleting the second before the third: returns the three ids. */
async function createDeleteCreate(create: (n: number) => Promise<number>, remove: (id: number) => Promise<void>): Promise<number[]> {
  const first = await create(1);
  const second = await create(2);
  await remove(second);
  const third = await create(3);
  return [first, second, third];
}

function assertNewIds([first, second, third]: number[]): void {
  assert.ok(second > first, `${second} > ${first}`);
  assert.equal(third, second + 1);
}

async function ok(user: TestUser, method: string, path: string, params?: Record<string, unknown>): Promise<any> {
  const res = await t.api(user, method, path, params);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

describe('ids are not reused after the newest object is deleted', () => {
  it('linkifiers', async () => {
    const ids = await createDeleteCreate(
      async (n) => {
        const body = await ok(t.users.admin, 'POST', '/realm/filters', { pattern: `T${n}-(?P<id>[0-9]+)`, url_template: `https://t${n}.example.com/{id}` });
        assert.deepEqual(body, { ...SUCCESS, id: body.id });
        return body.id;
      },
      async (id) => assert.deepEqual(await ok(t.users.admin, 'DELETE', `/realm/filters/${id}`), SUCCESS),
    );
    assertNewIds(ids);
    const listed = (await ok(t.users.hamlet, 'GET', '/realm/linkifiers')).linkifiers.map((l: { id: number }) => l.id);
    assert.deepEqual(listed, [ids[0], ids[2]]);
  });

  it('drafts', async () => {
    const u = t.users.hamlet;
    const ids = await createDeleteCreate(
      async (n) => {
        const body = await ok(u, 'POST', '/drafts', { drafts: [{ type: '', to: [], topic: '', content: `draft ${n}`, timestamp: 1700000000 + n }] });
        assert.deepEqual(body, { ...SUCCESS, ids: [body.ids[0]] });
        return body.ids[0];
      },
      async (id) => assert.deepEqual(await ok(u, 'DELETE', `/drafts/${id}`), SUCCESS),
    );
    assertNewIds(ids);
    assert.deepEqual(
      (await ok(u, 'GET', '/drafts')).drafts.map((d: { id: number; content: string }) => [d.id, d.content]),
      [
        [ids[2], 'draft 3'],
        [ids[0], 'draft 1'],
      ],
    );
  });

  it('scheduled messages', async () => {
    const u = t.users.hamlet;
    const at = Math.floor(Date.now() / 1000) + 3600;
    const ids = await createDeleteCreate(
      async (n) => {
        const body = await ok(u, 'POST', '/scheduled_messages', { type: 'channel', to: channel, topic: 'later', content: `later ${n}`, scheduled_delivery_timestamp: at + n });
        assert.deepEqual(body, { ...SUCCESS, scheduled_message_id: body.scheduled_message_id });
        return body.scheduled_message_id;
      },
      async (id) => assert.deepEqual(await ok(u, 'DELETE', `/scheduled_messages/${id}`), SUCCESS),
    );
    assertNewIds(ids);
    const listed = (await ok(u, 'GET', '/scheduled_messages')).scheduled_messages.map((s: { scheduled_message_id: number }) => s.scheduled_message_id);
    assert.deepEqual(listed, [ids[0], ids[2]]);
  });

  it('custom profile fields', async () => {
    const ids = await createDeleteCreate(
      async (n) => {
        const body = await ok(t.users.admin, 'POST', '/realm/profile_fields', { name: `Field ${n}`, field_type: 1 });
        assert.deepEqual(body, { ...SUCCESS, id: body.id });
        return body.id;
      },
      async (id) => assert.deepEqual(await ok(t.users.admin, 'DELETE', `/realm/profile_fields/${id}`), SUCCESS),
    );
    assertNewIds(ids);
    const listed = (await ok(t.users.hamlet, 'GET', '/realm/profile_fields')).custom_fields.map((f: { id: number }) => f.id);
    assert.deepEqual(listed, [ids[0], ids[2]]);
  });

  it('attachments (uploaded files)', async () => {
    const u = t.users.othello;
    const ids = await createDeleteCreate(
      async (n) => {
        const { body, contentType } = multipart([{ field: 'file', filename: `f${n}.txt`, data: `file ${n}` }]);
        const res = await t.raw('POST', '/api/v1/user_uploads', { headers: { authorization: basicAuth(u), 'content-type': contentType }, body });
        assert.equal(res.status, 200, res.text);
        const listed = (await ok(u, 'GET', '/attachments')).attachments as { id: number; name: string }[];
        return (listed.find((a) => a.name === `f${n}.txt`) as { id: number }).id;
      },
      async (id) => assert.deepEqual(await ok(u, 'DELETE', `/attachments/${id}`), SUCCESS),
    );
    assertNewIds(ids);
    const listed = (await ok(u, 'GET', '/attachments')).attachments.map((a: { id: number }) => a.id).sort((a: number, b: number) => a - b);
    assert.deepEqual(listed, [ids[0], ids[2]]);
  });
});

describe('schema', () => {
  // Tables whose ids no client sees: plain rowids (see the head of schema.sql).
  const internal = ['reaction', 'bot_service', 'legacy_push_token', 'email_change', 'health_probe'];

  it('every table keyed by an integer id that reaches clients is AUTOINCREMENT', () => {
    const db = openDatabase(':memory:');
    const tables = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql LIKE '%id %INTEGER PRIMARY KEY%'").all() as { name: string; sql: string }[];
    const plain = tables.filter((r) => /\n\s*id\s+INTEGER PRIMARY KEY(?! AUTOINCREMENT)/.test(r.sql)).map((r) => r.name);
    db.close();
    assert.deepEqual(plain.sort(), [...internal].sort());
  });
});
