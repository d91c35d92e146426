// POST /streams/{stream_id}/delete_topic and the users' topic preferences (Zulip's delete_in_topic).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, sendToChannel, SUCCESS } from '../helpers/chat';
import { queuedEvents, registerQueue } from '../helpers/events';

const NOW = 1_700_000_000;
let t: TestServer;
before(async () => {
  t = await startTestServer({ clock: { nowMs: () => NOW * 1000 } });
});
after(() => t.close());

async function setPolicy(user: TestUser, streamId: number, topic: string, policy: number) {
  const res = await t.api(user, 'POST', '/user_topics', { stream_id: streamId, topic, visibility_policy: policy });
  assert.deepEqual(res.body, SUCCESS);
}

/** The user's topic preferences in the channel, as POST /register shows them. */
async function policies(user: TestUser, streamId: number) {
  const res = await t.api(user, 'POST', '/register', { fetch_event_types: ['user_topic'] });
  assert.equal(res.status, 200, res.text);
  return res.body.user_topics.filter((r: { stream_id: number }) => r.stream_id === streamId).map((r: { topic_name: string; visibility_policy: number }) => [r.topic_name, r.visibility_policy]);
}

const reset = (streamId: number, topic: string) => ({ type: 'user_topic', stream_id: streamId, topic_name: topic, last_updated: NOW, visibility_policy: 0 });

describe('POST /streams/{stream_id}/delete_topic', () => {
  it("resets every user's policy for the deleted topic to inherit, with user_topic events", async () => {
    const { hamlet, othello, admin, moderator } = t.users;
    const id = await createChannel(t, hamlet, 'topic-prefs', [hamlet, othello, admin, moderator]);
    // Sent by someone whose preferences are not checked (senders may follow their topics automatically).
    await sendToChannel(t, moderator, id, 'Doomed', 'bye');
    await sendToChannel(t, moderator, id, 'kept', 'stay');
    await setPolicy(hamlet, id, 'doomed', 1);
    await setPolicy(othello, id, 'Doomed', 3);
    await setPolicy(othello, id, 'kept', 1);
    const qh = await registerQueue(t, hamlet, ['user_topic']);
    const qo = await registerQueue(t, othello, ['user_topic']);
    const res = await t.api(admin, 'POST', `/streams/${id}/delete_topic`, { topic_name: 'DOOMED' });
    assert.deepEqual(res.body, { ...SUCCESS, complete: true });
    assert.deepEqual(await queuedEvents(t, hamlet, qh), [reset(id, 'DOOMED')]);
    assert.deepEqual(await queuedEvents(t, othello, qo), [reset(id, 'DOOMED')]);
    assert.deepEqual(await policies(hamlet, id), []);
    assert.deepEqual(await policies(othello, id), [['kept', 1]]);
  });

  it('with protected history, only for users left with no message of their own in the topic', async () => {
    const { hamlet, othello, admin, moderator } = t.users;
    const id = await createChannel(t, hamlet, 'protected-prefs', [hamlet, othello], { invite_only: true, history_public_to_subscribers: false });
    await sendToChannel(t, othello, id, 'secret', 'early');
    // The administrator and the moderator join later: neither has the early message.
    const sub = await t.api(hamlet, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'protected-prefs' }], principals: [admin.id, moderator.id] });
    assert.equal(sub.status, 200, sub.text);
    await sendToChannel(t, admin, id, 'secret', 'late');
    await setPolicy(othello, id, 'secret', 1);
    await setPolicy(moderator, id, 'secret', 1);
    const qo = await registerQueue(t, othello, ['user_topic']);
    const qm = await registerQueue(t, moderator, ['user_topic']);
    const res = await t.api(admin, 'POST', `/streams/${id}/delete_topic`, { topic_name: 'secret' });
    assert.deepEqual(res.body, { ...SUCCESS, complete: true });
    // Othello still has the early message (the administrator could not delete it).
    assert.deepEqual(await queuedEvents(t, othello, qo), []);
    assert.deepEqual(await policies(othello, id), [['secret', 1]]);
    assert.deepEqual(await queuedEvents(t, moderator, qm), [reset(id, 'secret')]);
    assert.deepEqual(await policies(moderator, id), []);
  });
});
