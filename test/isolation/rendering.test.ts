// What rendering may reveal about channels and people the sender cannot see: a `#**name**` link
// resolves only to a channel whose content the sender can access (Zulip's get_content_access_streams
// in MentionBackend.get_stream_name_map), and a mention resolves only to a user the sender can access
// (MentionBackend.get_full_name_info_list drops get_inaccessible_user_ids). Anything else stays the
// text it was, as for a name that matches nothing, so the answer cannot confirm that it exists.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, sendToChannel, systemGroups } from '../helpers/chat';

let t: TestServer;
let secret: number;
let guestChannel: number;

before(async () => {
  t = await startTestServer();
  const u = t.users;
  secret = await createChannel(t, u.hamlet, 'secret plans', [u.hamlet, u.othello], { invite_only: true });
  guestChannel = await createChannel(t, u.owner, 'guests welcome', [u.guest, u.othello]);
  t.app.db.prepare('UPDATE realm SET can_access_all_users_group = ?').run(systemGroups(t)['role:members']);
});
after(() => t.close());

async function render(user: TestUser, content: string): Promise<string> {
  const res = await t.api(user, 'POST', '/messages/render', { content });
  assert.equal(res.status, 200, res.text);
  return res.body.rendered;
}

describe('channel links (POST /messages/render and sends)', () => {
  it('a subscriber gets the link to a private channel', async () => {
    assert.equal(
      await render(t.users.othello, '#**secret plans**'),
      `<p><a class="stream" data-stream-id="${secret}" href="/#narrow/channel/${secret}-secret-plans">#secret plans</a></p>`,
    );
  });

  for (const who of ['moderator', 'admin', 'guest'] as const) {
    it(`${who} (not subscribed) gets the text a missing channel gives, for the channel, a topic and a message`, async () => {
      const u = t.users[who];
      for (const [link, missing] of [
        ['#**secret plans**', '#**no such channel**'],
        ['#**secret plans>lunch**', '#**no such channel>lunch**'],
        ['#**secret plans>lunch@12**', '#**no such channel>lunch@12**'],
      ]) {
        const expected = (await render(u, missing)).replace('no such channel', 'secret plans');
        assert.equal(await render(u, link), expected, link);
        assert.ok(!expected.includes('data-stream-id'), expected);
      }
    });
  }

  it('a message sent by a non-subscriber stores no link either', async () => {
    const u = t.users;
    const general = await createChannel(t, u.owner, 'town square', [u.owner, u.moderator]);
    const id = await sendToChannel(t, u.moderator, general, 'links', 'see #**secret plans**');
    const res = await t.api(u.owner, 'GET', `/messages/${id}`);
    assert.equal(res.body.message.content, '<p>see #<strong>secret plans</strong></p>');
  });
});

describe('mentions of users the sender cannot access', () => {
  it('render as for an unknown user, by id, by name, and silently', async () => {
    const u = t.users;
    const missing = 987654;
    for (const [mention, unknown] of [
      [`@**|${u.admin.id}**`, `@**|${missing}**`],
      [`@**Iago|${u.admin.id}**`, `@**Iago|${missing}**`],
      ['@**Iago**', '@**Nobody Here**'],
      [`@_**Iago|${u.admin.id}**`, `@_**Iago|${missing}**`],
    ]) {
      const expected = (await render(u.guest, unknown)).replace(String(missing), String(u.admin.id)).replace('Nobody Here', 'Iago');
      assert.equal(await render(u.guest, mention), expected, mention);
      assert.ok(!expected.includes('user-mention'), expected);
    }
  });

  it('still render for users the sender can access, and for everyone when a member writes', async () => {
    const u = t.users;
    assert.equal(
      await render(u.guest, `@**|${u.othello.id}**`),
      `<p><span class="user-mention" data-user-id="${u.othello.id}">@Othello</span></p>`,
    );
    assert.equal(await render(u.othello, `@**|${u.admin.id}**`), `<p><span class="user-mention" data-user-id="${u.admin.id}">@Iago</span></p>`);
  });

  it('a guest’s message mentioning a hidden user does not mention them', async () => {
    const u = t.users;
    const id = await sendToChannel(t, u.guest, guestChannel, 'hello', `hi @**Iago|${u.admin.id}**`);
    const res = await t.api(u.othello, 'GET', `/messages/${id}`);
    assert.ok(!res.body.message.content.includes('user-mention'), res.body.message.content);
  });
});
