// Full-text search as Zulip's PostgreSQL search: English stemming, stop words left out of the query,
// "quoted phrases" matched as written, no prefix matching; highlights on the stemmed matches only,
// never inside tags or character references (src/lib/narrow.ts, src/lib/fetch.ts highlight).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, ids, sendToChannel, SUCCESS } from '../helpers/chat';
import { stem } from '../../src/lib/search';
import { highlight } from '../../src/lib/fetch';

let t: TestServer;
let lobby: number;
const m: Record<string, number> = {};

before(async () => {
  t = await startTestServer();
  const u = t.users;
  lobby = await createChannel(t, u.hamlet, 'lobby', [u.hamlet, u.othello]);
  const own = new Map<TestUser, number[]>();
  const send = async (user: TestUser, topic: string, content: string) => {
    const id = await sendToChannel(t, user, lobby, topic, content);
    own.set(user, [...(own.get(user) ?? []), id]);
    return id;
  };
  m.hotel = await send(u.hamlet, 'stay', 'the hotel is full');
  m.hotels = await send(u.othello, 'stay', 'two hotels nearby');
  m.hotelier = await send(u.othello, 'stay', 'ask the HOTELIER');
  m.accent = await send(u.hamlet, 'stay', 'un Hôtel de ville');
  m.hot = await send(u.othello, 'weather', 'hot today');
  m.topic = await send(u.othello, 'hotel plans', 'see topic');
  m.bravo = await send(u.othello, 'stay', 'bravo hotel booked');
  m.bravo2 = await send(u.hamlet, 'stay', 'Bravo, the hotels are booked');
  m.running = await send(u.hamlet, 'sport', 'I am running late');
  m.runs = await send(u.othello, 'running club', 'she runs daily');
  m.kiwi = await send(u.othello, 'fruit', 'the kiwi is ripe');
  m.quick = await send(u.othello, 'fox', 'the quick brown fox');
  m.brown = await send(u.othello, 'fox', 'brown and quick fox');
  m.score = await send(u.othello, 'scores', 'score 10_20 today');
  m.score2 = await send(u.othello, 'scores', 'score 10 20 today');
  m.lt = await send(u.othello, 'a < b lt', 'lt means 5 < 6');
  // Everyone has read their own messages, whatever the sending client.
  for (const [user, sent] of own) assert.equal((await t.api(user, 'POST', '/messages/flags', { messages: sent, op: 'add', flag: 'read' })).status, 200);
});
after(() => t.close());

const op = (operator: string, operand: unknown, negated?: boolean) => (negated === undefined ? { operator, operand } : { operator, operand, negated });

async function search(narrow: unknown[], params: Record<string, unknown> = {}, user: TestUser = t.users.hamlet) {
  const res = await t.api(user, 'GET', '/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow, ...params });
  assert.equal(res.status, 200, `${JSON.stringify(narrow)}: ${res.text}`);
  return res.body;
}
const found = async (operand: string) => ids(await search([op('search', operand)]));
const highlights = (body: any) => body.messages.map((x: any) => [x.id, x.match_content, x.match_subject]);

describe('search: words as Zulip matches them', () => {
  it('stems English words: "runs" finds "running", in content and topic, and highlights the stemmed matches', async () => {
    assert.deepEqual(await found('runs'), [m.running, m.runs]);
    assert.deepEqual(await found('RUNNING'), [m.running, m.runs]);
    assert.deepEqual(highlights(await search([op('search', 'runs')])), [
      [m.running, '<p>I am <span class="highlight">running</span> late</p>', 'sport'],
      [m.runs, '<p>she <span class="highlight">runs</span> daily</p>', '<span class="highlight">running</span> club'],
    ]);
    assert.deepEqual(await found('hotels'), [m.hotel, m.hotels, m.accent, m.topic, m.bravo, m.bravo2]);
  });

  it('leaves stop words out of the query and never highlights them; stop words alone match nothing', async () => {
    assert.deepEqual(await found('the kiwi'), [m.kiwi]);
    assert.deepEqual(highlights(await search([op('search', 'the kiwi')])), [[m.kiwi, '<p>the <span class="highlight">kiwi</span> is ripe</p>', 'fruit']]);
    assert.deepEqual(await found('a'), []);
    assert.deepEqual(await found('the is'), []);
  });

  it('matches no prefixes: a word matches whole words only, accents and case folded', async () => {
    assert.deepEqual(await found('hot'), [m.hot]);
    assert.deepEqual(await found('hote'), []);
    assert.deepEqual(await found('kiw'), []);
    assert.deepEqual(await found('HOTEL bravo'), [m.bravo, m.bravo2]);
    assert.deepEqual(await found('hôtel'), [m.hotel, m.hotels, m.accent, m.topic, m.bravo, m.bravo2]);
    assert.deepEqual(await found('hotelier'), [m.hotelier]);
  });

  it('matches "quoted phrases" as written (case folded), on top of the words', async () => {
    assert.deepEqual(await found('quick brown'), [m.quick, m.brown]);
    assert.deepEqual(await found('"quick brown"'), [m.quick]);
    assert.deepEqual(await found('"Quick Brown" fox'), [m.quick]);
    assert.deepEqual(await found('"brown quick"'), []);
    // LIKE's wildcards in a phrase are plain characters.
    assert.deepEqual(await found('10_20'), [m.score, m.score2]);
    assert.deepEqual(await found('"10_20"'), [m.score]);
    assert.deepEqual(highlights(await search([op('search', '"quick brown"')])), [
      [m.quick, '<p>the <span class="highlight">quick</span> <span class="highlight">brown</span> fox</p>', 'fox'],
    ]);
  });

  it('negated: everything else in the channel (phrases included)', async () => {
    const all = ids(await search([op('channel', lobby)]));
    const without = (hits: number[]) => all.filter((id) => !hits.includes(id));
    assert.deepEqual(ids(await search([op('channel', lobby), op('search', 'runs', true)])), without([m.running, m.runs]));
    assert.deepEqual(ids(await search([op('channel', lobby), op('search', '"quick brown"', true)])), without([m.quick]));
    assert.deepEqual(ids(await search([op('channel', lobby), op('search', 'the', true)])), all);
  });

  it('highlights whole words of text only: never inside a tag or a character reference, in content or topic', async () => {
    const body = await search([op('search', 'lt')]);
    assert.deepEqual(highlights(body), [[m.lt, '<p><span class="highlight">lt</span> means 5 &lt; 6</p>', 'a &lt; b <span class="highlight">lt</span>']]);
    const res = await t.api(t.users.hamlet, 'GET', '/messages/matches_narrow', { msg_ids: [m.lt, m.kiwi], narrow: [op('search', 'lt')] });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {
      ...SUCCESS,
      messages: { [m.lt]: { match_content: '<p><span class="highlight">lt</span> means 5 &lt; 6</p>', match_subject: 'a &lt; b <span class="highlight">lt</span>' } },
    });
    assert.equal(highlight('<a href="/x/kiwi">kiwi&amp;kiwis</a> &#39;kiwi&#x27;', [stem('kiwi')]), '<a href="/x/kiwi"><span class="highlight">kiwi</span>&amp;<span class="highlight">kiwis</span></a> &#39;<span class="highlight">kiwi</span>&#x27;');
  });

  it('stems each word exactly as the full-text index does', () => {
    const words = [
      'caresses', 'ponies', 'ties', 'ies', 'sses', 'caress', 'cats', 'feed', 'agreed', 'eed', 'plastered', 'bled', 'motoring', 'sing',
      'conflated', 'troubled', 'sized', 'hopping', 'tanned', 'falling', 'hissing', 'fizzed', 'failing', 'filing', 'happy', 'sky', 'relational',
      'conditional', 'rational', 'valenci', 'hesitanci', 'digitizer', 'conformabli', 'radicalli', 'differentli', 'vileli', 'analogousli',
      'vietnamization', 'predication', 'operator', 'feudalism', 'decisiveness', 'hopefulness', 'callousness', 'formaliti', 'sensitiviti',
      'sensibiliti', 'triplicate', 'formative', 'formalize', 'electriciti', 'electrical', 'hopeful', 'goodness', 'revival', 'allowance',
      'inference', 'airliner', 'gyroscopic', 'adjustable', 'defensible', 'irritant', 'replacement', 'adjustment', 'dependent', 'adoption',
      'homologou', 'communism', 'activate', 'angulariti', 'homologous', 'effective', 'bowdlerize', 'probate', 'rate', 'cease', 'controll',
      'roll', 'running', 'runs', 'hotelier', 'generalizations', 'oscillators', 'xes', 'yyy', 'toy', 'syzygy', 'ab', 'a', '42', 'x1ing',
      'Hôtels', 'naïveté', 'Zürich', 'Москва', 'bibliothèques', 'straße', 'ÉCOLES', 'eating', 'hoped', 'hopes', 'agreement', 'sensational',
      'a'.repeat(70) + 'ing',
    ];
    const db = new Database(':memory:');
    db.exec("CREATE VIRTUAL TABLE probe USING fts5(w, tokenize='porter unicode61 remove_diacritics 2')");
    db.exec("CREATE VIRTUAL TABLE probe_terms USING fts5vocab(probe, 'instance')");
    const insert = db.prepare('INSERT INTO probe (rowid, w) VALUES (?, ?)');
    words.forEach((w, i) => insert.run(i + 1, w));
    const indexed = db.prepare('SELECT term FROM probe_terms WHERE doc = ?').pluck();
    const mismatches = words.map((w, i) => [w, indexed.get(i + 1), stem(w)]).filter(([, fts, ours]) => fts !== ours);
    db.close();
    assert.deepEqual(mismatches, []);
  });
});

describe('search: anchors and windows', () => {
  const hits = () => [m.hotel, m.hotels, m.accent, m.topic, m.bravo, m.bravo2];
  const window = (b: any) => ({ ids: ids(b), anchor: b.anchor, found_anchor: b.found_anchor, found_oldest: b.found_oldest, found_newest: b.found_newest, history_limited: b.history_limited });

  it('newest, with fewer matches than asked and with more', async () => {
    assert.deepEqual(window(await search([op('search', 'hotel')])), {
      ids: hits(), anchor: 10_000_000_000_000_000, found_anchor: false, found_oldest: true, found_newest: true, history_limited: false,
    });
    assert.deepEqual(window(await search([op('search', 'hotel')], { num_before: 3 })), {
      ids: hits().slice(-3), anchor: 10_000_000_000_000_000, found_anchor: false, found_oldest: false, found_newest: true, history_limited: false,
    });
  });

  it('oldest, and around a message id in the results or between them', async () => {
    assert.deepEqual(window(await search([op('search', 'hotel')], { anchor: 'oldest', num_before: 0, num_after: 2 })), {
      ids: hits().slice(0, 2), anchor: 0, found_anchor: false, found_oldest: true, found_newest: false, history_limited: false,
    });
    assert.deepEqual(window(await search([op('search', 'hotel')], { anchor: m.accent, num_before: 2, num_after: 2 })), {
      ids: [m.hotel, m.hotels, m.accent, m.topic, m.bravo], anchor: m.accent, found_anchor: true, found_oldest: false, found_newest: false, history_limited: false,
    });
    assert.deepEqual(window(await search([op('search', 'hotel')], { anchor: m.hot, num_before: 1, num_after: 1 })), {
      ids: [m.accent, m.topic], anchor: m.hot, found_anchor: false, found_oldest: false, found_newest: false, history_limited: false,
    });
    assert.deepEqual(window(await search([op('search', 'hotel')], { anchor: m.topic, num_before: 1, num_after: 0, include_anchor: false })), {
      ids: [m.accent], anchor: m.topic, found_anchor: false, found_oldest: false, found_newest: false, history_limited: false,
    });
    assert.deepEqual(window(await search([op('search', 'hotel')], { anchor: m.hotelier, num_before: 0, num_after: 3, include_anchor: false })), {
      ids: [m.accent, m.topic, m.bravo], anchor: m.hotelier, found_anchor: false, found_oldest: false, found_newest: false, history_limited: false,
    });
  });

  it("first_unread: the oldest unread match (othello's messages are unread for hamlet)", async () => {
    assert.deepEqual(window(await search([op('search', 'hotel')], { anchor: 'first_unread', num_before: 1, num_after: 1 })), {
      ids: [m.hotel, m.hotels, m.accent], anchor: m.hotels, found_anchor: true, found_oldest: false, found_newest: false, history_limited: false,
    });
    // For othello, hamlet's messages are unread.
    assert.deepEqual(window(await search([op('search', 'hotel')], { anchor: 'first_unread', num_before: 0, num_after: 0 }, t.users.othello)), {
      ids: [m.hotel], anchor: m.hotel, found_anchor: true, found_oldest: false, found_newest: false, history_limited: false,
    });
    // No unread match: first_unread reads as newest.
    assert.equal((await t.api(t.users.hamlet, 'POST', '/messages/flags', { messages: [m.hotels, m.topic, m.bravo], op: 'add', flag: 'read' })).status, 200);
    assert.deepEqual(window(await search([op('search', 'hotel')], { anchor: 'first_unread', num_before: 2, num_after: 2 })), {
      ids: [m.bravo, m.bravo2], anchor: 10_000_000_000_000_000, found_anchor: false, found_oldest: false, found_newest: true, history_limited: false,
    });
  });

  it('a user who cannot read the channel finds nothing', async () => {
    const priv = await createChannel(t, t.users.hamlet, 'secret inn', [t.users.hamlet], { invite_only: true });
    const id = await sendToChannel(t, t.users.hamlet, priv, 'stay', 'hidden hotel');
    assert.deepEqual(ids(await search([op('search', 'hidden hotels')])), [id]);
    assert.deepEqual(ids(await search([op('search', 'hidden hotels')], {}, t.users.othello)), []);
  });
});

describe('search: bounded work', () => {
  const post = (narrow: unknown[]) =>
    t.api(t.users.hamlet, 'POST', '/messages/flags/narrow', { anchor: 'newest', num_before: 100, num_after: 0, op: 'add', flag: 'starred', narrow });
  const tooLong = { result: 'error', msg: 'Invalid narrow operator: search is too long (limit: 100 words)', code: 'BAD_NARROW' };

  it('searches for a repeated word once: 30,000 copies cost what one does', async () => {
    // Every word is ANDed into one full-text query, whose cost in SQLite grows with the square of its
    // words: 30,000 took over a second (and 100 such terms some 300 s), every other request waiting.
    // (Its time is measured in bench/security-bounds.ts, section F.)
    const res = await post([op('search', 'hotel '.repeat(30_000)), op('search', 'HOTEL Hotel hotel')]);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(await found('hotel hotel "hotel is" "hotel is" HOTEL'), [m.hotel]);
  });

  it('takes 100 distinct words and phrases in a narrow; more is a 400 on every endpoint, never a 500', async () => {
    const words = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `w${from + i}`).join(' ');
    const phrases = (n: number) => Array.from({ length: n }, (_, i) => `"p${i}"`).join(' ');
    // 60 words, then 20 words and 10 phrases (whose words count too): 100.
    assert.deepEqual(ids(await search([op('search', words(60)), op('search', `${words(20, 60)} ${phrases(10)}`, true)])), []);
    // 1000 phrases answered 500 (each is a condition; SQLite refuses a statement past ~1000).
    for (const narrow of [[op('search', words(101))], [op('search', phrases(1000))], [op('search', words(60)), op('search', words(41, 60), true)]]) {
      assert.deepEqual((await t.api(t.users.hamlet, 'GET', '/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow })).body, tooLong);
      assert.deepEqual((await post(narrow)).body, tooLong);
      assert.deepEqual((await t.api(t.users.hamlet, 'GET', '/messages/matches_narrow', { msg_ids: [m.hotel], narrow })).body, tooLong);
    }
    // A long paste of words far over the bound is refused too (its time: bench/security-bounds.ts, F).
    assert.deepEqual((await post(Array.from({ length: 100 }, () => op('search', words(3000))))).body, tooLong);
  });
});
