import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { basicAuth, startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { multipart, type Part } from '../helpers/multipart';
import { queuedEvents, registerQueue } from '../helpers/events';
import { createChannel, err, sendToChannel, SUCCESS, systemGroups } from '../helpers/chat';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');


async function addEmoji(user: TestUser, name: string, parts: Part[] = [{ field: 'file', filename: 'img.png', type: 'image/png', data: PNG }]) {
  const { body, contentType } = multipart(parts);
  return t.raw('POST', `/api/v1/realm/emoji/${encodeURIComponent(name)}`, { headers: { authorization: basicAuth(user), 'content-type': contentType }, body });
}

const queue = (user: TestUser, types: string[]) => registerQueue(t, user, types);
/** A queue of a client declaring individual_emoji_changes (Zulip FL 491). */
async function individualQueue(user: TestUser, types: string[] = ['realm_emoji']): Promise<string> {
  const res = await t.api(user, 'POST', '/register', {
    event_types: types,
    fetch_event_types: [],
    client_capabilities: { notification_settings_null: true, individual_emoji_changes: true },
  });
  assert.equal(res.status, 200, res.text);
  return res.body.queue_id;
}
const events = (user: TestUser, queueId: string) => queuedEvents(t, user, queueId);

const realmId = () => (t.app.db.prepare('SELECT realm_id FROM user WHERE id = ?').get(t.users.owner.id) as { realm_id: number }).realm_id;
let greenId: string;

describe('POST /realm/emoji/{emoji_name}', () => {
  it('stores the image, lists it, serves it, and sends realm_emoji', async () => {
    const q = await queue(t.users.othello, ['realm_emoji']);
    const modern = await individualQueue(t.users.othello);
    const unrelated = await individualQueue(t.users.othello, ['message']);
    const res = await addEmoji(t.users.hamlet, 'Green tick'.toLowerCase());
    assert.deepEqual(res.body, SUCCESS);
    const list = await t.api(t.users.guest, 'GET', '/realm/emoji');
    const ids = Object.keys(list.body.emoji);
    assert.equal(ids.length, 1);
    greenId = ids[0];
    const expected = {
      [greenId]: {
        id: greenId,
        name: 'green_tick',
        source_url: `/user_avatars/${realmId()}/emoji/images/${greenId}.png`,
        still_url: null,
        deactivated: false,
        author_id: t.users.hamlet.id,
      },
    };
    assert.deepEqual(list.body, { ...SUCCESS, emoji: expected });
    assert.deepEqual(await events(t.users.othello, q), [{ type: 'realm_emoji', op: 'update', realm_emoji: expected }]);
    // Clients with individual_emoji_changes get the new emoji alone (Zulip FL 491).
    assert.deepEqual(await events(t.users.othello, modern), [{ type: 'realm_emoji', op: 'add', emoji: expected[greenId] }]);
    assert.deepEqual(await events(t.users.othello, unrelated), []);
    const reg = await t.api(t.users.othello, 'POST', '/register', { fetch_event_types: ['realm_emoji'] });
    assert.deepEqual(reg.body.realm_emoji, expected);
    const img = await fetch(t.url + expected[greenId].source_url, { headers: { authorization: basicAuth(t.users.guest) } });
    assert.equal(img.status, 200);
    assert.equal(img.headers.get('content-type'), 'image/png');
    assert.deepEqual(Buffer.from(await img.arrayBuffer()), PNG);
    const anon = await fetch(t.url + expected[greenId].source_url);
    assert.equal(anon.status, 401);
    const missing = await fetch(`${t.url}/user_avatars/${realmId()}/emoji/images/999.png`, { headers: { authorization: basicAuth(t.users.guest) } });
    assert.equal(missing.status, 404);
  });

  it('makes the emoji usable in reactions and statuses', async () => {
    const channel = await createChannel(t, t.users.owner, 'emoji', [t.users.hamlet]);
    const id = await sendToChannel(t, t.users.hamlet, channel, 'x', 'hi');
    const r = await t.api(t.users.hamlet, 'POST', `/messages/${id}/reactions`, { emoji_name: 'green_tick' });
    assert.deepEqual(r.body, SUCCESS);
    const s = await t.api(t.users.hamlet, 'POST', '/users/me/status', { emoji_name: 'green_tick' });
    assert.deepEqual(s.body, SUCCESS);
    const got = await t.api(t.users.hamlet, 'GET', `/users/${t.users.hamlet.id}/status`);
    assert.deepEqual(got.body.status, { emoji_name: 'green_tick', emoji_code: greenId, reaction_type: 'realm_emoji' });
  });

  it('checks the name, permission, duplicates, files, built-in names, size and type in Zulip’s order', async () => {
    const cases: [TestUser, string, Part[] | undefined, unknown][] = [
      [t.users.hamlet, 'Bad', undefined, err('Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.')],
      [t.users.hamlet, 'bad_', undefined, err('Emoji names must end with either a letter or digit.')],
      [t.users.hamlet, 'green_tick', undefined, err('A custom emoji with this name already exists.')],
      [t.users.hamlet, 'none_given', [], err('You must upload exactly one file.')],
      [
        t.users.hamlet,
        'two_given',
        [
          { field: 'a', filename: 'a.png', data: PNG },
          { field: 'b', filename: 'b.png', data: PNG },
        ],
        err('You must upload exactly one file.'),
      ],
      [t.users.hamlet, 'car', undefined, err('Only administrators can override built-in emoji.')],
      [t.users.hamlet, 'big', [{ field: 'f', filename: 'big.png', data: Buffer.alloc(5 * 1024 * 1024 + 1) }], err('Uploaded file is larger than the allowed limit of 5 MiB')],
      [t.users.hamlet, 'text', [{ field: 'f', filename: 'notes.txt', type: 'text/plain', data: 'hello' }], err('Invalid image format')],
      [t.users.guest, 'guest_emoji', undefined, err('Not allowed for guest users')],
    ];
    for (const [user, name, parts, body] of cases) {
      const res = await addEmoji(user, name, parts);
      assert.equal(res.status, 400, name);
      assert.deepEqual(res.body, body, name);
    }
    // Administrators may override built-in names; spaces become underscores.
    assert.deepEqual((await addEmoji(t.users.admin, 'car')).body, SUCCESS);
    assert.deepEqual((await addEmoji(t.users.admin, ' party parrot ', [{ field: 'f', filename: 'p.GIF', data: 'GIF89a' }])).body, SUCCESS);
    const names = Object.values((await t.api(t.users.admin, 'GET', '/realm/emoji')).body.emoji).map((e: any) => [e.name, e.source_url.split('.').pop()]);
    assert.deepEqual(names, [
      ['green_tick', 'png'],
      ['car', 'png'],
      ['party_parrot', 'gif'],
    ]);
  });

  it('follows can_add_custom_emoji_group', async () => {
    const groups = systemGroups(t);
    t.app.db.prepare('UPDATE realm SET can_add_custom_emoji_group = ?').run(groups['role:administrators']);
    try {
      assert.deepEqual((await addEmoji(t.users.hamlet, 'members_cannot')).body, err('Insufficient permission'));
      assert.deepEqual((await addEmoji(t.users.admin, 'admins_can')).body, SUCCESS);
    } finally {
      t.app.db.prepare('UPDATE realm SET can_add_custom_emoji_group = ?').run(groups['role:members']);
    }
  });
});

describe('DELETE /realm/emoji/{emoji_name}', () => {
  it('lets only the author or an administrator deactivate, and sends realm_emoji', async () => {
    assert.deepEqual((await t.api(t.users.othello, 'DELETE', '/realm/emoji/green_tick')).body, err('Must be an organization administrator or emoji author'));
    const q = await queue(t.users.othello, ['realm_emoji']);
    const modern = await individualQueue(t.users.othello);
    assert.deepEqual((await t.api(t.users.hamlet, 'DELETE', '/realm/emoji/green_tick')).body, SUCCESS);
    const list = (await t.api(t.users.hamlet, 'GET', '/realm/emoji')).body.emoji;
    assert.equal(list[greenId].deactivated, true);
    assert.deepEqual(await events(t.users.othello, q), [{ type: 'realm_emoji', op: 'update', realm_emoji: list }]);
    assert.deepEqual(await events(t.users.othello, modern), [{ type: 'realm_emoji', op: 'update_one', emoji_id: greenId, data: { deactivated: true } }]);
    assert.deepEqual((await t.api(t.users.admin, 'DELETE', '/realm/emoji/party_parrot')).body, SUCCESS);
    // Deactivated emoji can no longer be used for reactions.
    const channel = await createChannel(t, t.users.owner, 'emoji2', [t.users.hamlet]);
    const id = await sendToChannel(t, t.users.hamlet, channel, 'x', 'hi');
    const r = await t.api(t.users.hamlet, 'POST', `/messages/${id}/reactions`, { emoji_name: 'green_tick', emoji_code: greenId, reaction_type: 'realm_emoji' });
    assert.deepEqual(r.body, err('This custom emoji has been deactivated.'));
    // The name is free again.
    assert.deepEqual((await addEmoji(t.users.hamlet, 'green_tick')).body, SUCCESS);
  });

  it('answers 404 for unknown and already deactivated emoji', async () => {
    const res = await t.api(t.users.admin, 'DELETE', '/realm/emoji/party_parrot');
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, err("Emoji 'party_parrot' does not exist"));
    assert.deepEqual((await t.api(t.users.admin, 'DELETE', '/realm/emoji/nothing')).body, err("Emoji 'nothing' does not exist"));
  });
});
