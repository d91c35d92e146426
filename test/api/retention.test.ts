// The message retention job (actions/retention.ts): what it deletes and what clients hear of it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server';
import { createChannel, ids, sendToChannel } from '../helpers/chat';
import { queuedEvents, registerQueue } from '../helpers/events';
import { runRetentionOnce } from '../../src/actions/retention';

const DAY = 86_400;
let now = 1_700_000_000;
let t: TestServer;
before(async () => {
  t = await startTestServer({ clock: { nowMs: () => now * 1000 } });
});
after(() => t.close());

describe('message retention', () => {
  it("deletes expired messages silently, as Zulip's retention: no delete_message or first_message_id events", async () => {
    const { owner, hamlet } = t.users;
    const id = await createChannel(t, owner, 'short-lived', [owner, hamlet], { message_retention_days: 1 });
    const old = await sendToChannel(t, hamlet, id, 'topic', 'old news');
    now += 2 * DAY;
    const fresh = await sendToChannel(t, hamlet, id, 'topic', 'fresh news');
    const q = await registerQueue(t, hamlet, ['delete_message', 'stream', 'message']);
    assert.equal(runRetentionOnce(t.app), 1);
    t.app.batch.commit();
    const res = await t.api(hamlet, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 10, narrow: [{ operator: 'channel', operand: id }] });
    assert.deepEqual(ids(res.body), [fresh]);
    assert.notEqual(old, fresh);
    assert.deepEqual(await queuedEvents(t, hamlet, q), []);
  });
});
