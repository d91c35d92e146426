// Rendering in an organization's context (src/lib/render.ts), over POST /messages/render and sends:
// custom emoji, the sender's emoticon setting, topic permalinks to the first message the sender can
// read, exact channel names, and fences whose language names an Object.prototype member.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { basicAuth, startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { multipart } from '../helpers/multipart';
import { createChannel, sendToChannel, SUCCESS } from '../helpers/chat';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
const realmId = () => (t.app.db.prepare('SELECT realm_id FROM user WHERE id = ?').get(t.users.owner.id) as { realm_id: number }).realm_id;

async function render(user: TestUser, content: string): Promise<string> {
  const res = await t.api(user, 'POST', '/messages/render', { content });
  assert.equal(res.status, 200, res.text);
  return res.body.rendered;
}

describe('message rendering in context', () => {
  it('renders the organization’s active custom emoji, and leaves deactivated ones as text', async () => {
    const { body, contentType } = multipart([{ field: 'file', filename: 'parrot.png', type: 'image/png', data: PNG }]);
    const added = await t.raw('POST', '/api/v1/realm/emoji/party_parrot', { headers: { authorization: basicAuth(t.users.hamlet), 'content-type': contentType }, body });
    assert.deepEqual(added.body, SUCCESS);
    const id = (t.app.db.prepare("SELECT id FROM realm_emoji WHERE name = 'party_parrot'").get() as { id: number }).id;
    assert.equal(
      await render(t.users.othello, 'hi :party_parrot:'),
      `<p>hi <img alt=":party_parrot:" class="emoji" src="/user_avatars/${realmId()}/emoji/images/${id}.png" title="party parrot"></p>`,
    );
    const removed = await t.api(t.users.owner, 'DELETE', '/realm/emoji/party_parrot');
    assert.deepEqual(removed.body, SUCCESS);
    assert.equal(await render(t.users.othello, 'hi :party_parrot:'), '<p>hi :party_parrot:</p>');
  });

  it('turns emoticons into emoji only for senders with translate_emoticons on', async () => {
    assert.equal(await render(t.users.othello, 'fine :)'), '<p>fine :)</p>');
    const res = await t.api(t.users.othello, 'PATCH', '/settings', { translate_emoticons: true });
    assert.equal(res.status, 200, res.text);
    assert.equal(
      await render(t.users.othello, 'fine :)'),
      '<p>fine <span aria-label="smile" class="emoji emoji-1f642" role="img" title="smile">:smile:</span></p>',
    );
    assert.equal(await render(t.users.hamlet, 'fine :)'), '<p>fine :)</p>');
  });

  it('links a topic at its first message the sender can read, and only where the sender can read', async () => {
    const u = t.users;
    const open = await createChannel(t, u.hamlet, 'Verona', [u.hamlet]);
    const first = await sendToChannel(t, u.hamlet, open, 'lunch', 'one');
    await sendToChannel(t, u.hamlet, open, 'Lunch', 'two');
    const href = (id: number | null, channel: number, name: string) =>
      `/#narrow/channel/${channel}-${name}/topic/lunch${id === null ? '' : `/with/${id}`}`;
    assert.equal(
      await render(u.othello, '#**Verona>lunch**'),
      `<p><a class="stream-topic" data-stream-id="${open}" href="${href(first, open, 'Verona')}">#Verona &gt; lunch</a></p>`,
    );
    // Protected history: the first message othello received, not the topic's first.
    const secret = await createChannel(t, u.hamlet, 'Secret', [u.hamlet, u.othello], { invite_only: true, history_public_to_subscribers: false });
    await t.api(u.owner, 'DELETE', '/users/me/subscriptions', { subscriptions: ['Secret'], principals: [u.othello.id] });
    await sendToChannel(t, u.hamlet, secret, 'lunch', 'before othello');
    const sub = await t.api(u.owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'Secret' }], principals: [u.othello.id], send_new_subscription_messages: false });
    assert.equal(sub.status, 200, sub.text);
    const received = await sendToChannel(t, u.hamlet, secret, 'lunch', 'after othello');
    assert.equal(
      await render(u.othello, '#**Secret>lunch**'),
      `<p><a class="stream-topic" data-stream-id="${secret}" href="${href(received, secret, 'Secret')}">#Secret &gt; lunch</a></p>`,
    );
    // A channel the sender cannot read: no link at all, as for a missing channel (test/isolation/rendering.test.ts).
    assert.equal(await render(u.moderator, '#**Secret>lunch**'), '<p>#<strong>Secret&gt;lunch</strong></p>');
  });

  it('links channels by their exact name only', async () => {
    const c = await createChannel(t, t.users.hamlet, 'Exact', [t.users.hamlet]);
    assert.equal(await render(t.users.hamlet, '#**Exact**'), `<p><a class="stream" data-stream-id="${c}" href="/#narrow/channel/${c}-Exact">#Exact</a></p>`);
    assert.equal(await render(t.users.hamlet, '#**exact**'), '<p>#<strong>exact</strong></p>');
  });

  it('keeps a fence named like an Object.prototype member, with the mentions around it', async () => {
    const c = await createChannel(t, t.users.hamlet, 'fences', [t.users.hamlet, t.users.othello]);
    const id = await sendToChannel(t, t.users.hamlet, c, 'code', '@**Othello**\n```constructor\nx\n```');
    const res = await t.api(t.users.othello, 'GET', `/messages/${id}`);
    assert.equal(
      res.body.message.content,
      `<p><span class="user-mention" data-user-id="${t.users.othello.id}">@Othello</span></p>\n` +
        '<div class="codehilite" data-code-language="constructor"><pre><span></span><code>x\n</code></pre></div>',
    );
    assert.deepEqual(res.body.message.flags, ['mentioned']);
  });
});

// The renderer's name and id lookups and the organization's linkifiers are remembered between
// messages (lib/render.ts, lib/linkifiers.ts): each must see the change that follows it.
describe('remembered lookups follow the organization', () => {
  const mention = (id: number, name: string) => `<p><span class="user-mention" data-user-id="${id}">@${name}</span></p>`;

  it('a renamed or deactivated user is mentioned by the current name only', async () => {
    const { moderator, admin, hamlet } = t.users;
    assert.equal(await render(hamlet, '@**Shiva**'), mention(moderator.id, 'Shiva'));
    assert.equal(await render(hamlet, '@**Lord Shiva**'), '<p>@<strong>Lord Shiva</strong></p>');
    assert.equal(await render(hamlet, `@**|${moderator.id}**`), mention(moderator.id, 'Shiva'));
    assert.deepEqual((await t.api(admin, 'PATCH', `/users/${moderator.id}`, { full_name: 'Lord Shiva' })).body, SUCCESS);
    assert.equal(await render(hamlet, '@**Lord Shiva**'), mention(moderator.id, 'Lord Shiva'));
    assert.equal(await render(hamlet, '@**Shiva**'), '<p>@<strong>Shiva</strong></p>');
    assert.equal(await render(hamlet, `@**|${moderator.id}**`), mention(moderator.id, 'Lord Shiva'));
    assert.deepEqual((await t.api(admin, 'DELETE', `/users/${moderator.id}`)).body, SUCCESS);
    assert.equal(await render(hamlet, '@**Lord Shiva**'), '<p>@<strong>Lord Shiva</strong></p>');
    assert.deepEqual((await t.api(admin, 'POST', `/users/${moderator.id}/reactivate`)).body, SUCCESS);
    assert.deepEqual((await t.api(admin, 'PATCH', `/users/${moderator.id}`, { full_name: 'Shiva' })).body, SUCCESS);
    assert.equal(await render(hamlet, '@**Shiva**'), mention(moderator.id, 'Shiva'));
  });

  it('a renamed or archived channel is linked by its current name only', async () => {
    const { hamlet } = t.users;
    const link = (id: number, name: string) => `<p><a class="stream" data-stream-id="${id}" href="/#narrow/channel/${id}-${name}">#${name}</a></p>`;
    assert.equal(await render(hamlet, '#**Later**'), '<p>#<strong>Later</strong></p>');
    const c = await createChannel(t, hamlet, 'Before', [hamlet]);
    assert.equal(await render(hamlet, '#**Before**'), link(c, 'Before'));
    assert.deepEqual((await t.api(hamlet, 'PATCH', `/streams/${c}`, { new_name: 'Later' })).body, SUCCESS);
    assert.equal(await render(hamlet, '#**Later**'), link(c, 'Later'));
    assert.equal(await render(hamlet, '#**Before**'), '<p>#<strong>Before</strong></p>');
    assert.deepEqual((await t.api(hamlet, 'DELETE', `/streams/${c}`)).body, SUCCESS);
    assert.equal(await render(hamlet, '#**Later**'), '<p>#<strong>Later</strong></p>');
  });

  it('a custom emoji added or removed after its name was looked up', async () => {
    const { hamlet, othello, owner } = t.users;
    assert.equal(await render(othello, 'hi :dancing_cat:'), '<p>hi :dancing_cat:</p>');
    const { body, contentType } = multipart([{ field: 'file', filename: 'cat.png', type: 'image/png', data: PNG }]);
    const added = await t.raw('POST', '/api/v1/realm/emoji/dancing_cat', { headers: { authorization: basicAuth(hamlet), 'content-type': contentType }, body });
    assert.deepEqual(added.body, SUCCESS);
    const id = (t.app.db.prepare("SELECT id FROM realm_emoji WHERE name = 'dancing_cat'").get() as { id: number }).id;
    assert.equal(
      await render(othello, 'hi :dancing_cat:'),
      `<p>hi <img alt=":dancing_cat:" class="emoji" src="/user_avatars/${realmId()}/emoji/images/${id}.png" title="dancing cat"></p>`,
    );
    assert.deepEqual((await t.api(owner, 'DELETE', '/realm/emoji/dancing_cat')).body, SUCCESS);
    assert.equal(await render(othello, 'hi :dancing_cat:'), '<p>hi :dancing_cat:</p>');
  });

  it('a new, changed or removed linkifier applies to the next message and its topic', async () => {
    const { hamlet, admin } = t.users;
    const c = await createChannel(t, hamlet, 'tickets', [hamlet]);
    const topicLinks = async (topic: string) => {
      const id = await sendToChannel(t, hamlet, c, topic, 'x');
      return (await t.api(hamlet, 'GET', `/messages/${id}`)).body.message.topic_links;
    };
    assert.equal(await render(hamlet, 'see #123'), '<p>see #123</p>');
    assert.deepEqual(await topicLinks('bug #123'), []);
    const added = await t.api(admin, 'POST', '/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: 'https://trac.example.com/ticket/{id}' });
    assert.equal(added.status, 200, added.text);
    assert.equal(await render(hamlet, 'see #123'), '<p>see <a href="https://trac.example.com/ticket/123">#123</a></p>');
    assert.deepEqual(await topicLinks('bug #123'), [{ text: '#123', url: 'https://trac.example.com/ticket/123' }]);
    const changed = await t.api(admin, 'PATCH', `/realm/filters/${added.body.id}`, { pattern: '#(?P<id>[0-9]+)', url_template: 'https://bugs.example.com/{id}' });
    assert.deepEqual(changed.body, SUCCESS);
    assert.equal(await render(hamlet, 'see #123'), '<p>see <a href="https://bugs.example.com/123">#123</a></p>');
    assert.deepEqual(await topicLinks('bug #123'), [{ text: '#123', url: 'https://bugs.example.com/123' }]);
    assert.deepEqual((await t.api(admin, 'DELETE', `/realm/filters/${added.body.id}`)).body, SUCCESS);
    assert.equal(await render(hamlet, 'see #123'), '<p>see #123</p>');
    assert.deepEqual(await topicLinks('bug #123'), []);
  });
});

describe('message rendering on the app clock', () => {
  it('<time:...> takes the missing fields from the app’s today', async () => {
    const fixed = Date.UTC(2024, 1, 29, 15, 4, 5);
    const other = await startTestServer({ clock: { nowMs: () => fixed } });
    try {
      const res = await other.api(other.users.hamlet, 'POST', '/messages/render', { content: '<time:10:30>' });
      assert.deepEqual(res.body, { result: 'success', msg: '', rendered: '<p><time datetime="2024-02-29T10:30:00Z">10:30</time></p>' });
    } finally {
      await other.close();
    }
  });
});
