// POST /realm/test_welcome_bot_custom_message: an administrator previews the organization's custom
// welcome text as a direct message from Welcome Bot (Zulip's send_test_welcome_bot_custom_message).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { queuedEvents, registerQueue } from '../helpers/events';
import { startTestServer, type TestServer } from '../helpers/server';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

const PATH = '/realm/test_welcome_bot_custom_message';
const bad = (msg: string, code = 'BAD_REQUEST') => ({ result: 'error', msg, code });

describe('POST /realm/test_welcome_bot_custom_message', () => {
  it('sends the text as Welcome Bot to the administrator, who hears the message event', async () => {
    const queue = await registerQueue(t, t.users.admin, ['message']);
    const r = await t.api(t.users.admin, 'POST', PATH, { welcome_message_custom_text: 'Read the **handbook**.' });
    assert.equal(r.status, 200, r.text);
    const id = r.body.message_id;
    assert.deepEqual(r.body, { result: 'success', msg: '', message_id: id });
    assert.equal(typeof id, 'number');
    const m = (await t.api(t.users.admin, 'GET', `/messages/${id}`, { apply_markdown: false })).body.message;
    assert.equal(m.sender_full_name, 'Welcome Bot');
    assert.equal(m.type, 'private');
    assert.deepEqual(m.display_recipient.map((u: { id: number }) => u.id).sort((a: number, b: number) => a - b), [m.sender_id, t.users.admin.id].sort((a, b) => a - b));
    assert.equal(m.content, 'A message from the administrators of Test Org:\n\nRead the **handbook**.');
    const events = await queuedEvents(t, t.users.admin, queue);
    assert.deepEqual(events.filter((e) => e.type === 'message').map((e) => e.message.id), [id]);
  });

  it('is for administrators only, checked before the parameters', async () => {
    for (const who of ['hamlet', 'moderator', 'guest', 'bot'] as const) {
      const r = await t.api(t.users[who], 'POST', PATH, { welcome_message_custom_text: 'x'.repeat(9000) });
      assert.equal(r.status, 400);
      assert.deepEqual(r.body, bad('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'));
    }
    assert.equal((await t.api(null, 'POST', PATH, { welcome_message_custom_text: 'hi' })).status, 401);
  });

  it('refuses an empty, missing or too long text and sends nothing', async () => {
    const before = (await t.api(t.users.owner, 'GET', '/messages', { anchor: 'newest', num_before: 1, num_after: 0 })).body.messages;
    assert.deepEqual((await t.api(t.users.owner, 'POST', PATH, { welcome_message_custom_text: '' })).body, bad('Message must not be empty'));
    assert.deepEqual((await t.api(t.users.owner, 'POST', PATH, {})).body, { ...bad("Missing 'welcome_message_custom_text' argument", 'REQUEST_VARIABLE_MISSING'), var_name: 'welcome_message_custom_text' });
    assert.deepEqual(
      (await t.api(t.users.owner, 'POST', PATH, { welcome_message_custom_text: '😀'.repeat(8001) })).body,
      bad('welcome_message_custom_text is too long (limit: 8000 characters)'),
    );
    const after = (await t.api(t.users.owner, 'GET', '/messages', { anchor: 'newest', num_before: 1, num_after: 0 })).body.messages;
    assert.deepEqual(after, before);
    assert.equal((await t.api(t.users.owner, 'POST', PATH, { welcome_message_custom_text: '😀'.repeat(8000) })).status, 200);
  });
});
