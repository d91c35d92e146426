import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { basicAuth, startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { multipart } from '../helpers/multipart';
import { createChannel, sendToChannel } from '../helpers/chat';
import { queuedEvents, registerQueue } from '../helpers/events';
import { deleteOldUnclaimedAttachments, UNCLAIMED_ATTACHMENT_WEEKS } from '../../src/actions/uploads';

const DAY_MS = 86_400_000;
let nowMs = Date.now();
const clock = { nowMs: () => nowMs };
let t: TestServer;
let general: number;

before(async () => {
  t = await startTestServer({ clock });
  general = await createChannel(t, t.users.hamlet, 'general', [t.users.hamlet, t.users.othello]);
});
after(() => t.close());

async function upload(user: TestUser, filename: string): Promise<{ url: string; id: number; file: string }> {
  const { body, contentType } = multipart([{ field: 'file', filename, data: `bytes of ${filename}` }]);
  const res = await t.raw('POST', '/api/v1/user_uploads', { headers: { authorization: basicAuth(user), 'content-type': contentType }, body });
  assert.equal(res.status, 200, res.text);
  const url = res.body.url as string;
  const pathId = url.slice('/user_uploads/'.length);
  const { id } = t.app.db.prepare('SELECT id FROM attachment WHERE path_id = ?').get(pathId) as { id: number };
  return { url, id, file: path.join(t.dataDir, 'uploads', pathId) };
}

const link = (u: { url: string }) => `[file](${u.url})`;

describe('old unclaimed uploads (Zulip: delete_old_unclaimed_attachments)', () => {
  it(`are removed after ${UNCLAIMED_ATTACHMENT_WEEKS} weeks with their files; uploads a message or a pending scheduled message uses stay`, async () => {
    const u = t.users.hamlet;
    const never = await upload(u, 'never-sent.txt');
    const sent = await upload(u, 'sent.txt');
    const deleted = await upload(u, 'message-deleted.txt');
    const scheduled = await upload(u, 'scheduled.txt');
    await sendToChannel(t, u, general, 'files', `here: ${link(sent)}`);
    const gone = await sendToChannel(t, u, general, 'files', `oops: ${link(deleted)}`);
    assert.equal((await t.api(t.users.owner, 'DELETE', `/messages/${gone}`)).body.result, 'success');
    const sched = await t.api(u, 'POST', '/scheduled_messages', {
      type: 'channel',
      to: general,
      topic: 'later',
      content: `later: ${link(scheduled)}`,
      scheduled_delivery_timestamp: Math.floor(nowMs / 1000) + 60 * DAY_MS / 1000,
    });
    assert.equal(sched.body.result, 'success', sched.text);

    // Younger than the limit: nothing goes.
    nowMs += UNCLAIMED_ATTACHMENT_WEEKS * 7 * DAY_MS - DAY_MS;
    assert.equal(deleteOldUnclaimedAttachments(t.app), 0);
    const recent = await upload(u, 'recent.txt');

    nowMs += 2 * DAY_MS;
    const queue = await registerQueue(t, u, ['attachment']);
    assert.equal(deleteOldUnclaimedAttachments(t.app), 2);
    const left = (t.app.db.prepare('SELECT id FROM attachment ORDER BY id').all() as { id: number }[]).map((r) => r.id);
    assert.deepEqual(left, [sent.id, scheduled.id, recent.id]);
    await new Promise((r) => setTimeout(r, 50));
    for (const f of [never.file, deleted.file]) assert.ok(!fs.existsSync(f), f);
    for (const f of [sent.file, scheduled.file, recent.file]) assert.ok(fs.existsSync(f), f);
    const events = await queuedEvents(t, u, queue);
    assert.deepEqual(
      events.map((e) => [e.op, e.attachment.id]),
      [
        ['remove', never.id],
        ['remove', deleted.id],
      ],
    );
    assert.equal(typeof events[0].upload_space_used, 'number');
    assert.equal((await t.raw('GET', never.url, { headers: { authorization: basicAuth(u) } })).status, 404);
    // Nothing more to do.
    assert.equal(deleteOldUnclaimedAttachments(t.app), 0);
  });
});
