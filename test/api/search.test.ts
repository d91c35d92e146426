// Full-text search: the last word matches as a prefix, whether the server writes it as an OR of the
// indexed terms it covers (few terms, plain ASCII) or as FTS5's own prefix query (src/lib/narrow.ts).
// Either way the results must be exactly FTS5's prefix semantics, with the same anchors and highlights.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, ids, sendToChannel } from '../helpers/chat';

let t: TestServer;
let lobby: number;
const m: Record<string, number> = {};

before(async () => {
  t = await startTestServer();
  const u = t.users;
  lobby = await createChannel(t, u.hamlet, 'lobby', [u.hamlet, u.othello]);
  m.hotel = await sendToChannel(t, u.hamlet, lobby, 'stay', 'the hotel is full');
  m.hotels = await sendToChannel(t, u.othello, lobby, 'stay', 'two hotels nearby');
  m.hotelier = await sendToChannel(t, u.othello, lobby, 'stay', 'ask the HOTELIER');
  m.accent = await sendToChannel(t, u.hamlet, lobby, 'stay', 'un Hôtel de ville');
  m.hot = await sendToChannel(t, u.othello, lobby, 'weather', 'hot today');
  m.shotel = await sendToChannel(t, u.hamlet, lobby, 'stay', 'shotel is not a prefix match');
  m.topic = await sendToChannel(t, u.othello, lobby, 'hotel plans', 'see topic');
  m.bravo = await sendToChannel(t, u.othello, lobby, 'stay', 'bravo hotel booked');
  m.bravo2 = await sendToChannel(t, u.hamlet, lobby, 'stay', 'Bravo, the hotels are booked');
  // More than 32 indexed terms starting with "zeta": the prefix stays an FTS5 prefix query.
  m.zetas = 0;
  for (let i = 0; i < 40; i++) {
    const id = await sendToChannel(t, i % 2 ? u.othello : u.hamlet, lobby, 'greek', `zeta${i} item`);
    if (i === 0) m.zetas = id;
  }
});
after(() => t.close());

const op = (operator: string, operand: unknown, negated?: boolean) => (negated === undefined ? { operator, operand } : { operator, operand, negated });

async function search(narrow: unknown[], params: Record<string, unknown> = {}, user: TestUser = t.users.hamlet) {
  const res = await t.api(user, 'GET', '/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow, ...params });
  assert.equal(res.status, 200, `${JSON.stringify(narrow)}: ${res.text}`);
  return res.body;
}

/** FTS5's own answer: every word whole, the last one as a prefix, oldest first. */
function ftsPrefix(words: string[]): number[] {
  const q = words.map((w, i) => `"${w}"${i === words.length - 1 ? '*' : ''}`).join(' ');
  return (t.app.db.prepare('SELECT rowid AS id FROM message_fts WHERE message_fts MATCH ? ORDER BY rowid').all(q) as { id: number }[]).map((r) => r.id);
}

describe('search: the last word as a prefix', () => {
  it('a common prefix matches every indexed term it begins, in content and topic, case and accents folded', async () => {
    const expected = [m.hotel, m.hotels, m.hotelier, m.accent, m.topic, m.bravo, m.bravo2];
    assert.deepEqual(ids(await search([op('search', 'hotel')])), expected);
    assert.deepEqual(ids(await search([op('search', 'HOTE')])), expected);
    assert.deepEqual(ids(await search([op('search', 'hot')])), [m.hotel, m.hotels, m.hotelier, m.accent, m.hot, m.topic, m.bravo, m.bravo2]);
    assert.deepEqual(ids(await search([op('search', 'hotels')])), [m.hotels, m.bravo2]);
  });

  it('earlier words match whole words only', async () => {
    assert.deepEqual(ids(await search([op('search', 'bravo hotel')])), [m.bravo, m.bravo2]);
    assert.deepEqual(ids(await search([op('search', 'bravo hotels')])), [m.bravo2]);
    assert.deepEqual(ids(await search([op('search', 'brav hotel')])), []);
    assert.deepEqual(ids(await search([op('search', 'hotel bravo')])), [m.bravo]);
  });

  it('matches exactly what an FTS5 prefix query matches, for prefixes of every kind', async () => {
    const cases = [
      ['h'], ['ho'], ['hot'], ['hotel'], ['hoteli'], ['hotelier'], ['hotelz'], ['Hôtel'], ['hôt'], ['z'], ['zeta'], ['zeta1'], ['zeta39'],
      ['bravo', 'h'], ['the', 'hotel'], ['stay', 'hot'], ['item', 'zet'], ['nothing'], ['ville'], ['3'],
    ];
    for (const words of cases) {
      const got = ids(await search([op('channel', lobby), op('search', words.join(' '))]));
      assert.deepEqual(got, ftsPrefix(words), words.join(' '));
    }
    assert.equal(ftsPrefix(['zeta']).length, 40);
    assert.equal(ftsPrefix(['hotelz']).length, 0);
  });

  it('highlights the words a prefix matched', async () => {
    const body = await search([op('search', 'bravo hote')]);
    assert.deepEqual(
      body.messages.map((x: any) => [x.id, x.match_content, x.match_subject]),
      [
        [m.bravo, '<p><span class="highlight">bravo</span> <span class="highlight">hotel</span> booked</p>', 'stay'],
        [m.bravo2, '<p><span class="highlight">Bravo</span>, the <span class="highlight">hotels</span> are booked</p>', 'stay'],
      ],
    );
    const res = await t.api(t.users.hamlet, 'GET', '/messages/matches_narrow', { msg_ids: [m.topic, m.hot], narrow: [op('search', 'hote')] });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {
      result: 'success',
      msg: '',
      messages: { [m.topic]: { match_content: '<p>see topic</p>', match_subject: '<span class="highlight">hotel</span> plans' } },
    });
  });

  it('negated: everything else in the channel', async () => {
    const all = ids(await search([op('channel', lobby)]));
    const hits = new Set(ftsPrefix(['hote']));
    assert.deepEqual(ids(await search([op('channel', lobby), op('search', 'hote', true)])), all.filter((id) => !hits.has(id)));
  });
});

describe('search: anchors and windows', () => {
  const hits = () => [m.hotel, m.hotels, m.hotelier, m.accent, m.topic, m.bravo, m.bravo2];
  const window = (b: any) => ({ ids: ids(b), anchor: b.anchor, found_anchor: b.found_anchor, found_oldest: b.found_oldest, found_newest: b.found_newest, history_limited: b.history_limited });

  it('newest, with fewer matches than asked and with more', async () => {
    assert.deepEqual(window(await search([op('search', 'hote')])), {
      ids: hits(), anchor: 10_000_000_000_000_000, found_anchor: false, found_oldest: true, found_newest: true, history_limited: false,
    });
    assert.deepEqual(window(await search([op('search', 'hote')], { num_before: 3 })), {
      ids: hits().slice(-3), anchor: 10_000_000_000_000_000, found_anchor: false, found_oldest: false, found_newest: true, history_limited: false,
    });
  });

  it('oldest, and around a message id in the results or between them', async () => {
    assert.deepEqual(window(await search([op('search', 'hote')], { anchor: 'oldest', num_before: 0, num_after: 2 })), {
      ids: hits().slice(0, 2), anchor: 0, found_anchor: false, found_oldest: true, found_newest: false, history_limited: false,
    });
    assert.deepEqual(window(await search([op('search', 'hote')], { anchor: m.accent, num_before: 2, num_after: 2 })), {
      ids: [m.hotels, m.hotelier, m.accent, m.topic, m.bravo], anchor: m.accent, found_anchor: true, found_oldest: false, found_newest: false, history_limited: false,
    });
    assert.deepEqual(window(await search([op('search', 'hote')], { anchor: m.hot, num_before: 1, num_after: 1 })), {
      ids: [m.accent, m.topic], anchor: m.hot, found_anchor: false, found_oldest: false, found_newest: false, history_limited: false,
    });
    assert.deepEqual(window(await search([op('search', 'hote')], { anchor: m.topic, num_before: 1, num_after: 0, include_anchor: false })), {
      ids: [m.accent], anchor: m.topic, found_anchor: false, found_oldest: false, found_newest: false, history_limited: false,
    });
    assert.deepEqual(window(await search([op('search', 'hote')], { anchor: m.hotelier, num_before: 0, num_after: 3, include_anchor: false })), {
      ids: [m.accent, m.topic, m.bravo], anchor: m.hotelier, found_anchor: false, found_oldest: false, found_newest: false, history_limited: false,
    });
  });

  it('first_unread: the oldest unread match (othello\'s messages are unread for hamlet)', async () => {
    assert.deepEqual(window(await search([op('search', 'hote')], { anchor: 'first_unread', num_before: 1, num_after: 1 })), {
      ids: [m.hotel, m.hotels, m.hotelier], anchor: m.hotels, found_anchor: true, found_oldest: false, found_newest: false, history_limited: false,
    });
    // For othello, hamlet's messages are unread, but only those othello received; his own are read.
    assert.deepEqual(window(await search([op('search', 'hote')], { anchor: 'first_unread', num_before: 0, num_after: 0 }, t.users.othello)), {
      ids: [m.hotel], anchor: m.hotel, found_anchor: true, found_oldest: false, found_newest: false, history_limited: false,
    });
    // No unread match: first_unread reads as newest.
    assert.equal((await t.api(t.users.hamlet, 'POST', '/messages/flags', { messages: [m.hotels, m.hotelier, m.topic, m.bravo], op: 'add', flag: 'read' })).status, 200);
    assert.deepEqual(window(await search([op('search', 'hote')], { anchor: 'first_unread', num_before: 2, num_after: 2 })), {
      ids: [m.bravo, m.bravo2], anchor: 10_000_000_000_000_000, found_anchor: false, found_oldest: false, found_newest: true, history_limited: false,
    });
  });

  it('a user who cannot read the channel finds nothing', async () => {
    const priv = await createChannel(t, t.users.hamlet, 'secret inn', [t.users.hamlet], { invite_only: true });
    const id = await sendToChannel(t, t.users.hamlet, priv, 'stay', 'hidden hotel');
    assert.deepEqual(ids(await search([op('search', 'hidden hote')])), [id]);
    assert.deepEqual(ids(await search([op('search', 'hidden hote')], {}, t.users.othello)), []);
  });
});
