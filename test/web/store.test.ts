// Unit tests of the web client's pure state modules (web/src/state): Zulip's narrow hashes, which
// messages belong in which narrow, unread counts, the sidebar's orders, and applyEvent for each event
// type with hand-written events. No server and no browser; the verify-actions tests check the same
// reducer against a real server.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  channelSlug,
  decodeHashComponent,
  dmSlug,
  encodeHashComponent,
  HOME,
  matchesNarrow,
  narrowHash,
  narrowKey,
  parseHash,
  type Narrow,
  type NarrowContext,
} from '../../web/src/state/narrow';
import { addFetched, applyEvent, expireTyping, isMuted, type MessageList, narrowContext, resolveToggled, stateFromRegister, type State } from '../../web/src/state/store';
import { channelSections, counts, dmItems, MAX_TOPICS, topicItems } from '../../web/src/state/sidebar';
import { dropStream, markRead, moveUnread, topicUnreadIds, unreadCounts, unreadFromRegister } from '../../web/src/state/unread';
import { snapshot } from '../../web/src/state/snapshot';
import type { Message, RegisterResponse, Subscription, User } from '../../web/src/state/wire';

// --- fixtures ------------------------------------------------------------------------------------------------

const ME = 4;
const ALICE = 5;
const BOB = 6;
const CAROL = 7;
const GENERAL = 12;
const DESIGN = 13; // subscribed, muted
const RANDOM = 14; // unsubscribed
const SECRET = 15; // never subscribed

const user = (user_id: number, full_name: string, extra: Partial<User> = {}): User => ({
  user_id,
  full_name,
  email: `${full_name.toLowerCase().replace(/ /g, '.')}@example.com`,
  avatar_url: `https://example.com/avatar/${user_id}`,
  is_bot: false,
  is_active: true,
  role: 400,
  is_guest: false,
  timezone: '',
  ...extra,
});

const sub = (stream_id: number, name: string, extra: Partial<Subscription> = {}): Subscription => ({
  stream_id,
  name,
  description: `About ${name}`,
  rendered_description: `<p>About ${name}</p>`,
  invite_only: false,
  is_archived: false,
  color: '#76ce90',
  is_muted: false,
  in_home_view: true,
  pin_to_top: false,
  ...extra,
});

/** A /register answer: me (Hamlet) in #general and a muted #design, some unreads, a starred message. */
function register(extra: Partial<RegisterResponse> = {}): RegisterResponse {
  return {
    queue_id: 'q1',
    last_event_id: -1,
    zulip_feature_level: 400,
    max_message_id: 100,
    user_id: ME,
    full_name: 'King Hamlet',
    email: 'king.hamlet@example.com',
    is_admin: false,
    is_guest: false,
    realm_name: 'Test Org',
    realm_url: 'https://chat.example.com',
    realm_empty_topic_display_name: 'general chat',
    max_message_length: 10000,
    max_topic_length: 60,
    realm_users: [user(ME, 'King Hamlet'), user(ALICE, 'Alice'), user(BOB, 'Bob'), user(CAROL, 'Carol')],
    realm_non_active_users: [],
    cross_realm_bots: [],
    subscriptions: [sub(GENERAL, 'general'), sub(DESIGN, 'design', { is_muted: true, in_home_view: false })],
    unsubscribed: [sub(RANDOM, 'random')],
    never_subscribed: [{ stream_id: SECRET, name: 'secret', description: '', rendered_description: '', invite_only: true, is_archived: false }],
    unread_msgs: {
      count: 5,
      pms: [{ other_user_id: ALICE, sender_id: ALICE, unread_message_ids: [90] }],
      streams: [
        { stream_id: GENERAL, topic: 'lunch', unread_message_ids: [91, 93] },
        { stream_id: DESIGN, topic: 'mockups', unread_message_ids: [92] },
      ],
      huddles: [{ user_ids_string: `${ME},${ALICE},${BOB}`, unread_message_ids: [94] }],
      mentions: [93],
      old_unreads_missing: false,
    },
    starred_messages: [80],
    recent_private_conversations: [
      { max_message_id: 94, user_ids: [ALICE, BOB] },
      { max_message_id: 90, user_ids: [ALICE] },
      { max_message_id: 70, user_ids: [] },
    ],
    user_topics: [{ stream_id: GENERAL, topic_name: 'Gossip', visibility_policy: 1, last_updated: 1 }],
    muted_users: [],
    user_settings: { enter_sends: false, color_scheme: 1, twenty_four_hour_time: false },
    ...extra,
  };
}

const state = (extra: Partial<RegisterResponse> = {}) => stateFromRegister(register(extra));

const recipient = (id: number) => {
  const names: Record<number, string> = { [ME]: 'King Hamlet', [ALICE]: 'Alice', [BOB]: 'Bob', [CAROL]: 'Carol' };
  return { id, email: `${names[id].toLowerCase().replace(/ /g, '.')}@example.com`, full_name: names[id] };
};

function streamMsg(id: number, streamId: number, subject: string, extra: Partial<Message> = {}): Message {
  const names: Record<number, string> = { [GENERAL]: 'general', [DESIGN]: 'design', [RANDOM]: 'random', [SECRET]: 'secret' };
  return {
    id,
    type: 'stream',
    sender_id: ALICE,
    sender_full_name: 'Alice',
    sender_email: 'alice@example.com',
    avatar_url: 'https://example.com/avatar/5',
    stream_id: streamId,
    display_recipient: names[streamId],
    subject,
    content: `<p>message ${id}</p>`,
    timestamp: 1_700_000_000 + id,
    flags: [],
    reactions: [],
    ...extra,
  };
}

function dmMsg(id: number, participants: number[], extra: Partial<Message> = {}): Message {
  return {
    id,
    type: 'private',
    sender_id: ALICE,
    sender_full_name: 'Alice',
    sender_email: 'alice@example.com',
    avatar_url: 'https://example.com/avatar/5',
    display_recipient: [...new Set([ME, ...participants])].sort((a, b) => a - b).map(recipient),
    subject: '',
    content: `<p>message ${id}</p>`,
    timestamp: 1_700_000_000 + id,
    flags: [],
    reactions: [],
    ...extra,
  };
}

/** Loads a list into the state as one page reaching both ends (unless told otherwise). */
function load(s: State, n: Narrow, messages: Message[], ends = { found_oldest: true, found_newest: true }): string {
  const key = narrowKey(n);
  addFetched(s, key, n, { messages, ...ends }, 'initial');
  return key;
}

let eventId = 0;
const apply = (s: State, e: Record<string, unknown>, now = 0) => applyEvent(s, { id: eventId++, ...e } as never, now);

const ids = (s: State, n: Narrow) => s.lists.get(narrowKey(n))?.ids;

// --- narrow.ts ------------------------------------------------------------------------------------------------

const ctx: NarrowContext = {
  myId: ME,
  streamName: (id) => ({ [GENERAL]: 'general', [DESIGN]: 'design team', 3: 'Ελληνικά' })[id],
  streamIdByName: (name) => ({ general: GENERAL, 'design team': DESIGN, 'design-team': undefined })[name.toLowerCase()],
  userName: (id) => ({ [ME]: 'King Hamlet', [ALICE]: 'Alice', [BOB]: 'Bob "the builder"' })[id],
  userIdByEmail: (email) => ({ 'alice@example.com': ALICE, 'bob@example.com': BOB, 'king.hamlet@example.com': ME })[email],
  emptyTopicName: 'general chat',
};

describe('narrow.ts: Zulip hash encoding', () => {
  it('encodeHashComponent: percent-encoding with "." for "%", and ".", "(" and ")" escaped', () => {
    const cases: [string, string][] = [
      ['lunch', 'lunch'],
      ['a b', 'a.20b'],
      ['v1.2', 'v1.2E2'],
      ['50%', '50.25'],
      ['(draft)', '.28draft.29'],
      ["it's ok!", "it's.20ok!"],
      ['a/b?c#d&e', 'a.2Fb.3Fc.23d.26e'],
      ['café', 'caf.C3.A9'],
      ['✔ done', '.E2.9C.94.20done'],
      ['', ''],
    ];
    for (const [raw, encoded] of cases) assert.equal(encodeHashComponent(raw), encoded, raw);
  });

  it('decodeHashComponent reverses it, also for what Zulip\'s server writes (.27 and .2A), and throws on malformed escapes', () => {
    for (const raw of ['lunch', 'a b', 'v1.2', '50%', '(draft)', "it's ok!", 'a/b?c#d&e', 'café', '✔ done', '...', '.2E', '%25']) {
      assert.equal(decodeHashComponent(encodeHashComponent(raw)), raw, raw);
    }
    assert.equal(decodeHashComponent('it.27s.20a.2Astar'), "it's a*star");
    for (const bad of ['a.ZZ', '.E2.9C', '.', 'x.2']) assert.throws(() => decodeHashComponent(bad), URIError, bad);
  });

  it('channelSlug: "id-name" with dashes for spaces, encoded; the id alone when encoding would make it much longer', () => {
    assert.equal(channelSlug(12, 'general'), '12-general');
    assert.equal(channelSlug(13, 'design team'), '13-design-team');
    assert.equal(channelSlug(14, 'R&D team (old)'), '14-R.26D-team-.28old.29');
    assert.equal(channelSlug(15, 'v2.0 launch'), '15-v2.2E0-launch');
    assert.equal(channelSlug(16, undefined), '16-unknown');
    // zulip-compat: non-Latin names encode to many times their length.
    assert.equal(channelSlug(3, 'Ελληνικά'), '3');
    assert.equal(channelSlug(4, '日本語のチャンネル'), '4');
  });

  it('dmSlug: "id-Name" for one person, "ids-group" for several, sorted', () => {
    assert.equal(dmSlug([ALICE], ctx.userName), '5-Alice');
    assert.equal(dmSlug([BOB, ALICE], ctx.userName), '5,6-group');
    assert.equal(dmSlug([ME], ctx.userName), '4-King-Hamlet');
    // Spaces, quotes and the like become dashes; unknown people are "unk".
    assert.equal(dmSlug([BOB], ctx.userName), '6-Bob-the-builder-');
    assert.equal(dmSlug([99], ctx.userName), '99-unk');
  });
});

describe('narrow.ts: parseHash', () => {
  const cases: [string, Narrow | null][] = [
    ['', HOME],
    ['#', HOME],
    ['#feed', HOME],
    ['#all_messages', HOME],
    ['#narrow', HOME],
    ['#narrow/in/home', HOME],
    ['#narrow/channel/12-general', { kind: 'channel', streamId: GENERAL }],
    ['#narrow/channel/12-general/topic/lunch', { kind: 'channel', streamId: GENERAL, topic: 'lunch' }],
    ['#narrow/channel/12/topic/lunch', { kind: 'channel', streamId: GENERAL, topic: 'lunch' }],
    // The id decides, whatever name follows it (a renamed channel's old links).
    ['#narrow/channel/12-old-name/topic/lunch', { kind: 'channel', streamId: GENERAL, topic: 'lunch' }],
    // Old-style links: "stream", "subject", names instead of ids, any case.
    ['#narrow/stream/general', { kind: 'channel', streamId: GENERAL }],
    ['#narrow/stream/12-general/subject/lunch', { kind: 'channel', streamId: GENERAL, topic: 'lunch' }],
    ['#narrow/Stream/design.20team/Topic/Mock.20ups', { kind: 'channel', streamId: DESIGN, topic: 'Mock ups' }],
    ['#narrow/channel/13-design-team/topic/v1.2E2.20.28draft.29', { kind: 'channel', streamId: DESIGN, topic: 'v1.2 (draft)' }],
    ['#narrow/channel/13-design-team/topic/it.27s.20ok', { kind: 'channel', streamId: DESIGN, topic: "it's ok" }],
    ['#narrow/channel/12-general/topic/a.2Fb', { kind: 'channel', streamId: GENERAL, topic: 'a/b' }],
    // A channel this user does not know keeps its id.
    ['#narrow/channel/99-gone/topic/x', { kind: 'channel', streamId: 99, topic: 'x' }],
    // The empty topic ("general chat").
    ['#narrow/channel/1-x/topic/', { kind: 'channel', streamId: 1, topic: '' }],
    ['#narrow/channel/12-general/topic/lunch/near/99', { kind: 'channel', streamId: GENERAL, topic: 'lunch', near: 99 }],
    ['#narrow/channel/12-general/topic/lunch/with/99', { kind: 'channel', streamId: GENERAL, topic: 'lunch', near: 99 }],
    ['#narrow/dm/5-Alice', { kind: 'dm', userIds: [ALICE] }],
    ['#narrow/dm/5-Someone-Else', { kind: 'dm', userIds: [ALICE] }],
    ['#narrow/dm/5,6-group', { kind: 'dm', userIds: [ALICE, BOB] }],
    ['#narrow/dm/6,5-group', { kind: 'dm', userIds: [ALICE, BOB] }],
    // My own id is dropped from a group; alone it is the conversation with myself.
    ['#narrow/dm/4,5-group', { kind: 'dm', userIds: [ALICE] }],
    ['#narrow/dm/4,5,6-group', { kind: 'dm', userIds: [ALICE, BOB] }],
    ['#narrow/dm/4-King-Hamlet', { kind: 'dm', userIds: [ME] }],
    ['#narrow/dm/5-Alice/near/42', { kind: 'dm', userIds: [ALICE], near: 42 }],
    ['#narrow/pm-with/5-Alice', { kind: 'dm', userIds: [ALICE] }],
    // Very old links name people by email (encoded: "." is an escape).
    ['#narrow/pm-with/alice.40example.2Ecom', { kind: 'dm', userIds: [ALICE] }],
    ['#narrow/pm-with/bob.40example.2Ecom.2CAlice.40example.2Ecom', { kind: 'dm', userIds: [ALICE, BOB] }],
    ['#narrow/is/starred', { kind: 'starred' }],
    ['#narrow/is/mentioned', { kind: 'mentioned' }],
    ['#narrow/is/Starred', { kind: 'starred' }],
    // Anything else is kept as terms (a search), canonicalized as Zulip does.
    ['#narrow/is/private', { kind: 'terms', terms: [{ operator: 'is', operand: 'dm' }] }],
    ['#narrow/is/starred/near/5', { kind: 'terms', terms: [{ operator: 'is', operand: 'starred' }, { operator: 'near', operand: 5 }] }],
    ['#narrow/-is/starred', { kind: 'terms', terms: [{ operator: 'is', operand: 'starred', negated: true }] }],
    ['#narrow/channel/12-general/-topic/lunch', { kind: 'terms', terms: [{ operator: 'channel', operand: GENERAL }, { operator: 'topic', operand: 'lunch', negated: true }] }],
    ['#narrow/search/Lunch.20plans', { kind: 'terms', terms: [{ operator: 'search', operand: 'Lunch plans' }] }],
    ['#narrow/sender/5-Alice', { kind: 'terms', terms: [{ operator: 'sender', operand: ALICE }] }],
    ['#narrow/channel/nosuch', { kind: 'terms', terms: [{ operator: 'channel', operand: 'nosuch' }] }],
    // Malformed: no operand, an empty one, a bad id or escape, unknown people, not a narrow at all.
    ['#narrow/channel', null],
    ['#narrow/channel/', null],
    ['#narrow/dm/', null],
    ['#narrow/dm/x-y', null],
    ['#narrow/pm-with/nobody.40example.2Ecom', null],
    ['#narrow/pm-with/alice@example.com', null],
    ['#narrow/channel/12-general/near/abc', null],
    ['#narrow/channel/12-general/topic/a.ZZ', null],
    ['#narrow/channel/12-general/topic', null],
    ['#settings', null],
    ['#narrowly', null],
  ];
  for (const [hash, narrow] of cases) {
    it(`${JSON.stringify(hash)} → ${narrow === null ? 'null' : narrow.kind}`, () => assert.deepEqual(parseHash(hash, ctx), narrow));
  }
});

describe('narrow.ts: narrowHash', () => {
  it('writes each kind of narrow as Zulip links it', () => {
    assert.equal(narrowHash(HOME, ctx), '#feed');
    assert.equal(narrowHash({ kind: 'channel', streamId: GENERAL }, ctx), '#narrow/channel/12-general');
    assert.equal(narrowHash({ kind: 'channel', streamId: DESIGN, topic: 'v1.2 (draft)' }, ctx), '#narrow/channel/13-design-team/topic/v1.2E2.20.28draft.29');
    assert.equal(narrowHash({ kind: 'channel', streamId: GENERAL, topic: 'lunch', near: 99 }, ctx), '#narrow/channel/12-general/topic/lunch/near/99');
    assert.equal(narrowHash({ kind: 'channel', streamId: 3, topic: '' }, ctx), '#narrow/channel/3/topic/');
    assert.equal(narrowHash({ kind: 'dm', userIds: [BOB, ALICE] }, ctx), '#narrow/dm/5,6-group');
    assert.equal(narrowHash({ kind: 'dm', userIds: [ALICE], near: 7 }, ctx), '#narrow/dm/5-Alice/near/7');
    assert.equal(narrowHash({ kind: 'starred' }, ctx), '#narrow/is/starred');
    assert.equal(narrowHash({ kind: 'mentioned' }, ctx), '#narrow/is/mentioned');
    assert.equal(
      narrowHash({ kind: 'terms', terms: [{ operator: 'search', operand: 'a.b c' }, { operator: 'is', operand: 'starred', negated: true }] }, ctx),
      '#narrow/search/a.2Eb.20c/-is/starred',
    );
  });

  it('parseHash reads back every narrow narrowHash writes', () => {
    const narrows: Narrow[] = [
      HOME,
      { kind: 'channel', streamId: GENERAL },
      { kind: 'channel', streamId: GENERAL, topic: 'lunch' },
      { kind: 'channel', streamId: DESIGN, topic: 'v1.2 (draft) 100% ✔' },
      { kind: 'channel', streamId: DESIGN, topic: "it's a/b?c#d" },
      { kind: 'channel', streamId: GENERAL, topic: '' },
      { kind: 'channel', streamId: 3, topic: 'ελληνικά' },
      { kind: 'channel', streamId: GENERAL, topic: 'lunch', near: 99 },
      { kind: 'channel', streamId: GENERAL, near: 5 },
      { kind: 'dm', userIds: [ALICE] },
      { kind: 'dm', userIds: [ALICE, BOB] },
      { kind: 'dm', userIds: [ME] },
      { kind: 'dm', userIds: [BOB], near: 1 },
      { kind: 'starred' },
      { kind: 'mentioned' },
      { kind: 'terms', terms: [{ operator: 'search', operand: 'lunch plans' }] },
      { kind: 'terms', terms: [{ operator: 'channel', operand: GENERAL }, { operator: 'is', operand: 'unread' }] },
    ];
    for (const n of narrows) assert.deepEqual(parseHash(narrowHash(n, ctx), ctx), n, JSON.stringify(n));
  });

  it('and writes back every well-formed hash in its own form', () => {
    for (const hash of ['#narrow/channel/12-general/topic/lunch', '#narrow/dm/5,6-group', '#narrow/dm/4-King-Hamlet', '#narrow/is/starred', '#narrow/channel/12-general/topic/lunch/near/9']) {
      assert.equal(narrowHash(parseHash(hash, ctx) as Narrow, ctx), hash);
    }
  });
});

describe('narrow.ts: matchesNarrow', () => {
  const muted = (streamId: number, topic: string) => streamId === DESIGN || topic.toLowerCase() === 'gossip';
  const lunch = streamMsg(1, GENERAL, 'Lunch');
  const gossip = streamMsg(2, GENERAL, 'gossip');
  const design = streamMsg(3, DESIGN, 'mockups');
  const toAlice = dmMsg(4, [ALICE]);
  const group = dmMsg(5, [ALICE, BOB]);
  const self = dmMsg(6, [ME], { sender_id: ME });
  const cases: [Narrow, Message, boolean | null][] = [
    [HOME, lunch, true],
    [HOME, gossip, false],
    [HOME, design, false],
    [HOME, toAlice, true],
    [{ kind: 'channel', streamId: GENERAL }, lunch, true],
    [{ kind: 'channel', streamId: GENERAL }, gossip, true],
    [{ kind: 'channel', streamId: GENERAL }, design, false],
    [{ kind: 'channel', streamId: GENERAL }, toAlice, false],
    [{ kind: 'channel', streamId: GENERAL, topic: 'lunch' }, lunch, true],
    [{ kind: 'channel', streamId: GENERAL, topic: 'LUNCH' }, lunch, true],
    [{ kind: 'channel', streamId: GENERAL, topic: 'lunch' }, gossip, false],
    [{ kind: 'channel', streamId: DESIGN, topic: 'lunch' }, lunch, false],
    [{ kind: 'dm', userIds: [ALICE] }, toAlice, true],
    [{ kind: 'dm', userIds: [ALICE] }, group, false],
    [{ kind: 'dm', userIds: [ALICE, BOB] }, group, true],
    [{ kind: 'dm', userIds: [BOB, ALICE] }, group, true],
    [{ kind: 'dm', userIds: [ME] }, self, true],
    [{ kind: 'dm', userIds: [ME] }, toAlice, false],
    [{ kind: 'dm', userIds: [ALICE] }, lunch, false],
    [{ kind: 'starred' }, { ...lunch, flags: ['read', 'starred'] }, true],
    [{ kind: 'starred' }, lunch, false],
    [{ kind: 'mentioned' }, { ...lunch, flags: ['mentioned'] }, true],
    [{ kind: 'mentioned' }, { ...lunch, flags: ['wildcard_mentioned'] }, true],
    [{ kind: 'mentioned' }, { ...lunch, flags: ['stream_wildcard_mentioned'] }, true],
    [{ kind: 'mentioned' }, { ...lunch, flags: ['topic_wildcard_mentioned'] }, true],
    [{ kind: 'mentioned' }, { ...lunch, flags: ['read', 'has_alert_word'] }, false],
    [{ kind: 'terms', terms: [{ operator: 'search', operand: 'lunch' }] }, lunch, null],
  ];
  for (const [narrow, m, expected] of cases) {
    it(`${JSON.stringify(narrow)} ${expected === null ? 'cannot tell for' : expected ? 'holds' : 'leaves out'} message ${m.id}${m.flags.length ? ` (${m.flags})` : ''}`, () => {
      assert.equal(matchesNarrow(m, narrow, ME, muted), expected);
    });
  }
});

// --- unread.ts -----------------------------------------------------------------------------------------------

describe('unread.ts', () => {
  it('unreadFromRegister: channel topics, DMs by the other person (old sender_id too), groups without me, mentions', () => {
    const u = unreadFromRegister(
      {
        count: 6,
        pms: [
          { other_user_id: ALICE, sender_id: ALICE, unread_message_ids: [1, 2] },
          { sender_id: BOB, unread_message_ids: [3] },
        ],
        streams: [{ stream_id: GENERAL, topic: 'Lunch', unread_message_ids: [4] }],
        huddles: [{ user_ids_string: `${ALICE},${ME},${BOB}`, unread_message_ids: [5, 6] }],
        mentions: [4, 6],
        old_unreads_missing: false,
      },
      ME,
    );
    assert.deepEqual(u, {
      stream: new Map([[4, { streamId: GENERAL, topic: 'Lunch' }]]),
      dm: new Map([
        [1, '5'],
        [2, '5'],
        [3, '6'],
        [5, '5,6'],
        [6, '5,6'],
      ]),
      mentions: new Set([4, 6]),
    });
  });

  it('counts by channel, by topic (case-insensitively), by conversation, and for the home view without muted ones', () => {
    const s = state();
    const c = unreadCounts(s.unread, (streamId, topic) => isMuted(s, streamId, topic));
    assert.deepEqual(c, {
      byStream: new Map([
        [GENERAL, 2],
        [DESIGN, 1],
      ]),
      byTopic: new Map([
        [GENERAL, new Map([['lunch', 2]])],
        [DESIGN, new Map([['mockups', 1]])],
      ]),
      byDm: new Map([
        ['5', 1],
        ['5,6', 1],
      ]),
      // general/lunch (2) and both DMs; #design is muted.
      home: 4,
      mentions: 1,
      dms: 2,
    });
    s.unread.stream.set(95, { streamId: GENERAL, topic: 'LUNCH' });
    s.unread.stream.set(96, { streamId: GENERAL, topic: 'gossip' }); // a muted topic
    const again = counts(s);
    assert.deepEqual(again.byTopic.get(GENERAL), new Map([['lunch', 3], ['gossip', 1]]));
    assert.equal(again.byStream.get(GENERAL), 4);
    assert.equal(again.home, 5);
  });

  it('markRead, moveUnread, dropStream and topicUnreadIds', () => {
    const s = state();
    assert.deepEqual(topicUnreadIds(s.unread, GENERAL, 'LUNCH'), [91, 93]);
    moveUnread(s.unread, [91, 90], DESIGN, 'moved');
    assert.deepEqual(s.unread.stream.get(91), { streamId: DESIGN, topic: 'moved' });
    assert.equal(s.unread.dm.get(90), '5', 'a DM is not moved');
    markRead(s.unread, [93, 90]);
    assert.deepEqual([...s.unread.stream.keys()].sort(), [91, 92]);
    assert.deepEqual([...s.unread.dm.keys()], [94]);
    assert.deepEqual([...s.unread.mentions], []);
    s.unread.mentions.add(92);
    dropStream(s.unread, DESIGN);
    assert.deepEqual([...s.unread.stream.keys()], []);
    assert.deepEqual([...s.unread.mentions], []);
  });
});

// --- sidebar.ts ----------------------------------------------------------------------------------------------

describe('sidebar.ts: channelSections', () => {
  const names = (s: State) => channelSections(s).map((section) => [section.id, section.title, section.channels.map((c) => c.name)]);

  it('one "Channels" section without pinned ones: unmuted channels by name (Intl.Collator), then muted ones', () => {
    const s = state({
      subscriptions: [
        sub(1, 'Zebra'),
        sub(2, 'apple'),
        sub(3, 'Äpfel'),
        sub(4, 'banana', { is_muted: true }),
        sub(5, 'Aardvark', { is_muted: true }),
        sub(6, 'old', { is_archived: true }),
        sub(7, '10 items'),
        sub(8, '9 items'),
      ],
    });
    // Collator order: accents and case after the letter, not by code point ("Zebra" < "apple" there).
    assert.deepEqual(names(s), [['channels', 'Channels', ['10 items', '9 items', 'Äpfel', 'apple', 'Zebra', 'Aardvark', 'banana']]]);
  });

  it('pinned channels first, in the same order; the rest under "Other channels"', () => {
    const s = state({
      subscriptions: [
        sub(1, 'zeta', { pin_to_top: true }),
        sub(2, 'alpha', { pin_to_top: true, is_muted: true }),
        sub(3, 'beta', { pin_to_top: true }),
        sub(4, 'gamma'),
        sub(5, 'delta', { is_muted: true }),
        sub(6, 'epsilon'),
      ],
    });
    assert.deepEqual(names(s), [
      ['pinned', 'Pinned channels', ['beta', 'zeta', 'alpha']],
      ['channels', 'Other channels', ['epsilon', 'gamma', 'delta']],
    ]);
  });
});

describe('sidebar.ts: topicItems', () => {
  /** #general with topics t1..tN, newest first by id (t1 newest), and the given unreads and policies. */
  function withTopics(n: number, unread: Record<string, number> = {}, policies: Record<string, number> = {}): State {
    const s = state({
      unread_msgs: { count: 0, pms: [], streams: [], huddles: [], mentions: [], old_unreads_missing: false },
      user_topics: Object.entries(policies).map(([topic_name, visibility_policy]) => ({ stream_id: GENERAL, topic_name, visibility_policy, last_updated: 1 })),
    });
    const topics = new Map<string, { name: string; maxId: number }>();
    for (let i = 1; i <= n; i++) topics.set(`t${i}`, { name: `T${i}`, maxId: 1000 - i });
    s.topics.set(GENERAL, topics);
    // Unread messages older than their topic's newest message (so the order stays by topic).
    for (const [topic, count] of Object.entries(unread)) for (let i = 0; i < count; i++) s.unread.stream.set(500 - Number(topic.slice(1)) * 10 - i, { streamId: GENERAL, topic });
    return s;
  }
  const view = (s: State, open?: string, all = false) => {
    const r = topicItems(s, GENERAL, counts(s), open, all);
    return { topics: r.topics.map((t) => [t.name, t.unread, t.muted, t.followed]), more: r.more, hidden: r.hidden };
  };

  it('newest first, at most six; followed topics marked', () => {
    assert.equal(MAX_TOPICS, 6);
    const s = withTopics(8, {}, { T2: 3 });
    assert.deepEqual(view(s), {
      topics: [
        ['T1', 0, false, false],
        ['T2', 0, false, true],
        ['T3', 0, false, false],
        ['T4', 0, false, false],
        ['T5', 0, false, false],
        ['T6', 0, false, false],
      ],
      more: 0,
      hidden: 2,
    });
    assert.equal(view(s, undefined, true).topics.length, 8);
  });

  it('older topics with unread messages stay (up to ten); the rest count in "more"', () => {
    const s = withTopics(14, { t8: 2, t9: 1, t10: 1, t11: 1, t12: 1, t13: 3 });
    const v = view(s);
    assert.deepEqual(
      v.topics.map((t) => t[0]),
      ['T1', 'T2', 'T3', 'T4', 'T5', 'T6', 'T8', 'T9', 'T10', 'T11'],
    );
    assert.deepEqual(v.topics[6], ['T8', 2, false, false]);
    // T7 and T14 (nothing unread), T12 (1) and T13 (3) left out.
    assert.deepEqual({ more: v.more, hidden: v.hidden }, { more: 4, hidden: 4 });
  });

  it('muted topics are hidden (their unreads counted in "more") unless open; the open topic is always shown', () => {
    const s = withTopics(3, { t2: 2 }, { T2: 1 });
    assert.deepEqual(view(s), { topics: [['T1', 0, false, false], ['T3', 0, false, false]], more: 2, hidden: 1 });
    assert.deepEqual(view(s, 't2').topics, [['T1', 0, false, false], ['T2', 2, true, false], ['T3', 0, false, false]]);
    // A topic the list does not know yet (a new one being written) is shown first.
    assert.deepEqual(view(s, 'Brand new').topics[0], ['Brand new', 0, false, false]);
  });

  it('topics known only from unread messages are listed by their newest unread id', () => {
    const s = withTopics(2);
    s.unread.stream.set(5000, { streamId: GENERAL, topic: 'Fresh' });
    s.unread.stream.set(5001, { streamId: GENERAL, topic: 'fresh' });
    s.unread.stream.set(5002, { streamId: DESIGN, topic: 'elsewhere' });
    const r = topicItems(s, GENERAL, counts(s), undefined);
    assert.deepEqual(r.topics[0], { name: 'Fresh', maxId: 5001, unread: 2, muted: false, followed: false });
    assert.equal(r.topics.length, 3);
  });
});

describe('sidebar.ts: dmItems', () => {
  it('newest first, with unread counts, groups marked, myself by name', () => {
    const s = state();
    assert.deepEqual(dmItems(s, counts(s)), [
      { key: '5,6', userIds: [ALICE, BOB], label: 'Alice and Bob', maxId: 94, unread: 1, group: true },
      { key: '5', userIds: [ALICE], label: 'Alice', maxId: 90, unread: 1, group: false },
      { key: '4', userIds: [ME], label: 'King Hamlet', maxId: 70, unread: 0, group: false },
    ]);
  });

  it('lists conversations known only from unread messages, and hides those with muted users only', () => {
    const s = state({ muted_users: [{ id: BOB, timestamp: 1 }] });
    s.unread.dm.set(120, '6'); // Bob, muted
    s.unread.dm.set(121, '7'); // Carol, not in the recent list
    s.unread.dm.set(122, '6,7');
    assert.deepEqual(
      dmItems(s, counts(s)).map((d) => [d.key, d.maxId, d.unread]),
      [
        ['6,7', 122, 1],
        ['7', 121, 1],
        ['5,6', 94, 1],
        ['5', 90, 1],
        ['4', 70, 0],
      ],
    );
  });
});

// --- store.ts: stateFromRegister, addFetched, snapshot ------------------------------------------------------------

describe('store.ts: stateFromRegister and snapshot', () => {
  it('builds the state /register describes', () => {
    const s = state();
    assert.equal(s.myId, ME);
    assert.deepEqual(s.realm, {
      name: 'Test Org',
      url: 'https://chat.example.com',
      emptyTopicName: 'general chat',
      maxMessageLength: 10000,
      maxTopicLength: 60,
      typingStartedWaitMs: 10_000,
      typingStoppedWaitMs: 5_000,
      typingExpiryMs: 15_000,
      longpollTimeoutSeconds: 90,
    });
    assert.deepEqual([...s.streams.keys()].sort(), [GENERAL, DESIGN, RANDOM, SECRET]);
    assert.deepEqual(s.streams.get(GENERAL), {
      stream_id: GENERAL,
      name: 'general',
      description: 'About general',
      rendered_description: '<p>About general</p>',
      invite_only: false,
      is_archived: false,
    });
    assert.deepEqual([...s.subs.keys()], [GENERAL, DESIGN]);
    assert.deepEqual(s.userTopics, new Map([[`${GENERAL}\u0000gossip`, 1]]));
    assert.deepEqual(s.starred, new Set([80]));
    assert.deepEqual(s.recentDms, new Map([['5,6', 94], ['5', 90], ['4', 70]]));
    assert.equal(isMuted(s, GENERAL, 'GOSSIP'), true);
    assert.equal(isMuted(s, DESIGN, 'anything'), true);
    assert.equal(isMuted(s, GENERAL, 'lunch'), false);
  });

  it('snapshot does not depend on the order /register lists things in', () => {
    const r = register();
    const shuffled: RegisterResponse = {
      ...r,
      realm_users: [...r.realm_users].reverse(),
      subscriptions: [...r.subscriptions].reverse(),
      unread_msgs: { ...r.unread_msgs, streams: [...r.unread_msgs.streams].reverse(), mentions: [...r.unread_msgs.mentions].reverse() },
      recent_private_conversations: [...r.recent_private_conversations].reverse(),
      starred_messages: [80],
    };
    assert.deepEqual(snapshot(stateFromRegister(shuffled)), snapshot(stateFromRegister(r)));
    // …and sees a difference in anything the store keeps.
    assert.notDeepEqual(snapshot(stateFromRegister({ ...r, user_settings: { ...r.user_settings, enter_sends: true } })), snapshot(stateFromRegister(r)));
  });

  it('addFetched: pages extend a list at either end; a stale list starts over', () => {
    const s = state();
    const n: Narrow = { kind: 'channel', streamId: GENERAL };
    const key = narrowKey(n);
    addFetched(s, key, n, { messages: [streamMsg(50, GENERAL, 'a'), streamMsg(51, GENERAL, 'a')], found_oldest: false, found_newest: false }, 'initial');
    addFetched(s, key, n, { messages: [streamMsg(40, GENERAL, 'a')], found_oldest: true, found_newest: false }, 'older');
    addFetched(s, key, n, { messages: [streamMsg(60, GENERAL, 'a')], found_oldest: false, found_newest: true }, 'newer');
    assert.deepEqual(s.lists.get(key), { narrow: n, ids: [40, 50, 51, 60], foundOldest: true, foundNewest: true, stale: false });
    s.lists.set(key, { ...(s.lists.get(key) as MessageList), stale: true });
    addFetched(s, key, n, { messages: [streamMsg(60, GENERAL, 'a')], found_oldest: false, found_newest: true }, 'initial');
    assert.deepEqual(s.lists.get(key), { narrow: n, ids: [60], foundOldest: false, foundNewest: true, stale: false });
  });

  it('addFetched remembers messages: unread ones in subscribed channels, mentions among them, stars, conversations', () => {
    const s = state({ unread_msgs: { count: 0, pms: [], streams: [], huddles: [], mentions: [], old_unreads_missing: false } });
    load(s, HOME, [
      streamMsg(101, GENERAL, 'new', { flags: ['mentioned'] }),
      streamMsg(102, RANDOM, 'elsewhere', { flags: ['mentioned'] }), // not subscribed: no unread
      streamMsg(103, GENERAL, 'old', { flags: ['read', 'starred'] }),
      dmMsg(104, [ALICE]),
    ]);
    assert.deepEqual(s.unread.stream, new Map([[101, { streamId: GENERAL, topic: 'new' }]]));
    assert.deepEqual(s.unread.dm, new Map([[104, '5']]));
    assert.deepEqual(s.unread.mentions, new Set([101]));
    assert.deepEqual(s.starred, new Set([80, 103]));
    assert.equal(s.recentDms.get('5'), 104);
    assert.equal(s.maxMessageId, 104);
  });
});

// --- store.ts: applyEvent ---------------------------------------------------------------------------------------

describe('applyEvent: message', () => {
  it('records a channel message, its unread state and mention, its topic, and appends it to lists that reach the newest', () => {
    const s = state();
    s.topics.set(GENERAL, new Map([['lunch', { name: 'lunch', maxId: 91 }]]));
    load(s, HOME, [streamMsg(91, GENERAL, 'lunch')]);
    load(s, { kind: 'channel', streamId: GENERAL, topic: 'Lunch' }, [streamMsg(91, GENERAL, 'lunch')]);
    load(s, { kind: 'mentioned' }, []);
    load(s, { kind: 'channel', streamId: GENERAL }, [streamMsg(91, GENERAL, 'lunch')], { found_oldest: true, found_newest: false });
    const m = streamMsg(200, GENERAL, 'LUNCH', { content: '<p>@Hamlet</p>' });
    apply(s, { type: 'message', message: { ...m, flags: undefined }, flags: ['mentioned'] });
    assert.deepEqual(s.messages.get(200), { ...m, flags: ['mentioned'] });
    assert.deepEqual(s.unread.stream.get(200), { streamId: GENERAL, topic: 'LUNCH' });
    assert.equal(s.unread.mentions.has(200), true);
    assert.equal(s.maxMessageId, 200);
    // The topic takes the newest message's spelling and id.
    assert.deepEqual(s.topics.get(GENERAL), new Map([['lunch', { name: 'LUNCH', maxId: 200 }]]));
    assert.deepEqual(ids(s, HOME), [91, 200]);
    assert.deepEqual(ids(s, { kind: 'channel', streamId: GENERAL, topic: 'Lunch' }), [91, 200]);
    assert.deepEqual(ids(s, { kind: 'mentioned' }), [200]);
    // This list's run stops before the newest message: the new one is not placed in it.
    assert.deepEqual(ids(s, { kind: 'channel', streamId: GENERAL }), [91]);
  });

  it('a search list cannot tell: it goes stale', () => {
    const s = state();
    const n: Narrow = { kind: 'terms', terms: [{ operator: 'search', operand: 'lunch' }] };
    load(s, n, []);
    apply(s, { type: 'message', message: streamMsg(200, GENERAL, 'lunch'), flags: [] });
    assert.equal(s.lists.get(narrowKey(n))?.stale, true);
  });

  it('a message in a muted topic is not in the home view, and one in an unsubscribed channel is not unread', () => {
    const s = state();
    load(s, HOME, []);
    apply(s, { type: 'message', message: streamMsg(200, GENERAL, 'gossip'), flags: [] });
    apply(s, { type: 'message', message: streamMsg(201, RANDOM, 'news'), flags: ['mentioned'] });
    assert.deepEqual(ids(s, HOME), [201]);
    assert.equal(s.unread.stream.has(200), true);
    assert.equal(s.unread.stream.has(201), false);
    assert.equal(s.unread.mentions.has(201), false);
  });

  it('a direct message: its conversation moves up, it is unread, and it ends the sender\'s typing', () => {
    const s = state();
    apply(s, { type: 'typing', op: 'start', message_type: 'direct', sender: { user_id: ALICE }, recipients: [{ user_id: ALICE }, { user_id: ME }] }, 1000);
    assert.deepEqual(s.typing, new Map([['dm:5', new Map([[ALICE, 16_000]])]]));
    apply(s, { type: 'message', message: dmMsg(200, [ALICE]), flags: [] });
    assert.deepEqual(s.recentDms, new Map([['5,6', 94], ['5', 200], ['4', 70]]));
    assert.equal(s.unread.dm.get(200), '5');
    assert.deepEqual(s.typing, new Map());
    apply(s, { type: 'message', message: dmMsg(201, [ALICE, BOB, CAROL], { sender_id: ME, flags: ['read'] }), flags: ['read'] });
    assert.equal(s.recentDms.get('5,6,7'), 201);
    assert.equal(s.unread.dm.has(201), false);
  });

  it('the event of my own send takes its local echo out of the outbox', () => {
    const s = state();
    s.outbox = [
      { localId: '1.01', to: { type: 'stream', streamId: GENERAL, topic: 'lunch' }, content: 'hi', timestamp: 1, status: 'sending' },
      { localId: '1.02', to: { type: 'private', userIds: [ALICE] }, content: 'yo', timestamp: 2, status: 'failed', error: 'Network' },
    ];
    apply(s, { type: 'message', message: streamMsg(200, GENERAL, 'lunch', { sender_id: ME }), flags: ['read'], local_message_id: '1.01' });
    assert.deepEqual(s.outbox.map((x) => x.localId), ['1.02']);
  });
});

describe('applyEvent: update_message', () => {
  const base = { type: 'update_message', user_id: ALICE, edit_timestamp: 1_800_000_000, rendering_only: false };

  it('new content: the rendering, the edit time, is_me_message; the record is replaced, not changed', () => {
    const s = state();
    const m = streamMsg(91, GENERAL, 'lunch');
    load(s, HOME, [structuredClone(m)]);
    const before = s.messages.get(91) as Message;
    apply(s, { ...base, message_id: 91, message_ids: [91], rendered_content: '<p>/me eats</p>', content: '/me eats', is_me_message: true, stream_id: GENERAL, flags: [] });
    assert.deepEqual(s.messages.get(91), { ...m, content: '<p>/me eats</p>', is_me_message: true, last_edit_timestamp: 1_800_000_000 });
    assert.notEqual(s.messages.get(91), before);
    assert.deepEqual(before, m);
    // A re-rendering by the server is not an edit.
    apply(s, { ...base, edit_timestamp: 1_900_000_000, rendering_only: true, message_id: 91, message_ids: [91], rendered_content: '<p>/me eats!</p>', stream_id: GENERAL });
    assert.equal(s.messages.get(91)?.last_edit_timestamp, 1_800_000_000);
    assert.equal(s.messages.get(91)?.content, '<p>/me eats!</p>');
  });

  it('an edit that mentions me: flags, an unread mention, the mentions list; and back', () => {
    const s = state();
    load(s, { kind: 'mentioned' }, []);
    load(s, HOME, [streamMsg(91, GENERAL, 'lunch')]);
    apply(s, { ...base, message_id: 91, message_ids: [91], rendered_content: '<p>@Hamlet</p>', stream_id: GENERAL, flags: ['mentioned'] });
    assert.deepEqual(s.messages.get(91)?.flags, ['mentioned']);
    assert.equal(s.unread.mentions.has(91), true);
    assert.deepEqual(ids(s, { kind: 'mentioned' }), [91]);
    apply(s, { ...base, message_id: 91, message_ids: [91], rendered_content: '<p>nobody</p>', stream_id: GENERAL, flags: [] });
    assert.equal(s.unread.mentions.has(91), false);
    assert.deepEqual(ids(s, { kind: 'mentioned' }), []);
  });

  it('an edit mentioning me in a message I have not loaded makes the mentions list stale', () => {
    const s = state();
    load(s, { kind: 'mentioned' }, []);
    apply(s, { ...base, message_id: 93, message_ids: [93], rendered_content: '<p>@Hamlet</p>', stream_id: GENERAL, flags: ['mentioned'] });
    assert.equal(s.lists.get(narrowKey({ kind: 'mentioned' }))?.stale, true);
    assert.equal(s.unread.mentions.has(93), true);
  });

  it('a topic move: subjects, unreads, lists, last_moved_timestamp; the topic lists are fetched again', () => {
    const s = state();
    const a = streamMsg(91, GENERAL, 'lunch');
    const b = streamMsg(93, GENERAL, 'lunch', { flags: ['mentioned'] });
    load(s, { kind: 'channel', streamId: GENERAL, topic: 'lunch' }, [a, b]);
    load(s, { kind: 'channel', streamId: GENERAL, topic: 'food' }, []);
    s.topics.set(GENERAL, new Map());
    apply(s, { ...base, message_id: 91, message_ids: [91, 93, 99], stream_id: GENERAL, orig_subject: 'lunch', subject: 'food', propagate_mode: 'change_all', flags: [] });
    assert.deepEqual(s.messages.get(91), { ...a, subject: 'food', last_moved_timestamp: 1_800_000_000 });
    assert.deepEqual(s.messages.get(93), { ...b, subject: 'food', last_moved_timestamp: 1_800_000_000 });
    assert.deepEqual(s.unread.stream.get(91), { streamId: GENERAL, topic: 'food' });
    assert.deepEqual(s.unread.stream.get(93), { streamId: GENERAL, topic: 'food' });
    // 99 moved too but is not loaded: lists that may show it are fetched again.
    assert.deepEqual(s.lists.get(narrowKey({ kind: 'channel', streamId: GENERAL, topic: 'lunch' })), {
      narrow: { kind: 'channel', streamId: GENERAL, topic: 'lunch' },
      ids: [91, 93],
      foundOldest: true,
      foundNewest: true,
      stale: true,
    });
    assert.equal(s.topics.has(GENERAL), false);
  });

  it('a topic move with every message loaded relists without going stale', () => {
    const s = state();
    load(s, { kind: 'channel', streamId: GENERAL, topic: 'lunch' }, [streamMsg(91, GENERAL, 'lunch'), streamMsg(93, GENERAL, 'lunch')]);
    load(s, { kind: 'channel', streamId: GENERAL, topic: 'food' }, [streamMsg(95, GENERAL, 'food')]);
    apply(s, { ...base, message_id: 93, message_ids: [93], stream_id: GENERAL, orig_subject: 'lunch', subject: 'food', propagate_mode: 'change_one' });
    assert.deepEqual(ids(s, { kind: 'channel', streamId: GENERAL, topic: 'lunch' }), [91]);
    assert.deepEqual(ids(s, { kind: 'channel', streamId: GENERAL, topic: 'food' }), [93, 95]);
    assert.equal(s.lists.get(narrowKey({ kind: 'channel', streamId: GENERAL, topic: 'food' }))?.stale, false);
  });

  it('resolving a topic is not a move (no last_moved_timestamp)', () => {
    const s = state();
    load(s, HOME, [streamMsg(91, GENERAL, 'lunch')]);
    apply(s, { ...base, message_id: 91, message_ids: [91], stream_id: GENERAL, orig_subject: 'lunch', subject: '✔ lunch', propagate_mode: 'change_all' });
    assert.equal(s.messages.get(91)?.subject, '✔ lunch');
    assert.equal('last_moved_timestamp' in (s.messages.get(91) as Message), false);
    assert.equal(resolveToggled('✔ lunch', 'lunch'), true);
    assert.equal(resolveToggled('lunch', '✔ lunch'), true);
    assert.equal(resolveToggled('✔ a very long topic...', 'a very long topic that got truncated'), true);
    assert.equal(resolveToggled('✔ dinner', 'lunch'), false);
    assert.equal(resolveToggled('✔ lunch', '✔ lunch'), false);
  });

  it('a move to another channel: display_recipient; to one I am not subscribed to, my flags and unreads go', () => {
    const s = state();
    load(s, HOME, [streamMsg(91, GENERAL, 'lunch'), streamMsg(93, GENERAL, 'lunch', { flags: ['mentioned', 'starred'] })]);
    s.starred.add(93);
    apply(s, { ...base, message_id: 91, message_ids: [91], stream_id: GENERAL, new_stream_id: DESIGN, orig_subject: 'lunch', propagate_mode: 'change_one' });
    assert.deepEqual(s.messages.get(91), { ...streamMsg(91, DESIGN, 'lunch'), last_moved_timestamp: 1_800_000_000 });
    assert.deepEqual(s.unread.stream.get(91), { streamId: DESIGN, topic: 'lunch' });
    apply(s, { ...base, message_id: 93, message_ids: [93], stream_id: GENERAL, new_stream_id: RANDOM, orig_subject: 'lunch', subject: 'news', propagate_mode: 'change_one' });
    assert.deepEqual(s.messages.get(93), { ...streamMsg(93, RANDOM, 'news'), flags: ['read', 'historical'], last_moved_timestamp: 1_800_000_000 });
    assert.equal(s.unread.stream.has(93), false);
    assert.equal(s.unread.mentions.has(93), false);
    assert.equal(s.starred.has(93), false);
  });
});

describe('applyEvent: delete_message', () => {
  it('forgets the messages everywhere; the channel\'s topics are fetched again', () => {
    const s = state();
    load(s, HOME, [streamMsg(91, GENERAL, 'lunch'), streamMsg(93, GENERAL, 'lunch', { flags: ['mentioned', 'starred'] })]);
    load(s, { kind: 'starred' }, [streamMsg(93, GENERAL, 'lunch', { flags: ['mentioned', 'starred'] })]);
    s.topics.set(GENERAL, new Map([['lunch', { name: 'lunch', maxId: 93 }]]));
    apply(s, { type: 'delete_message', message_ids: [93], message_type: 'stream', stream_id: GENERAL, topic: 'lunch' });
    assert.equal(s.messages.has(93), false);
    assert.equal(s.unread.stream.has(93), false);
    assert.equal(s.unread.mentions.has(93), false);
    assert.equal(s.starred.has(93), false);
    assert.deepEqual(ids(s, HOME), [91]);
    assert.deepEqual(ids(s, { kind: 'starred' }), []);
    assert.equal(s.topics.has(GENERAL), false);
  });

  it("a conversation's newest message deleted: the list that reaches it names the new newest, an emptied one leaves", () => {
    const s = state();
    load(s, { kind: 'dm', userIds: [ALICE, BOB] }, [dmMsg(60, [ALICE, BOB]), dmMsg(94, [ALICE, BOB])]);
    load(s, { kind: 'dm', userIds: [ALICE] }, [dmMsg(90, [ALICE])]);
    apply(s, { type: 'delete_message', message_ids: [94], message_type: 'private' });
    assert.equal(s.recentDms.get('5,6'), 60);
    apply(s, { type: 'delete_message', message_ids: [90], message_type: 'private' });
    assert.equal(s.recentDms.has('5'), false);
    // Not loaded at all: the old id keeps its place until the next /register.
    apply(s, { type: 'delete_message', message_ids: [70], message_type: 'private' });
    assert.equal(s.recentDms.get('4'), 70);
  });
});

describe('applyEvent: reaction', () => {
  it('adds and removes a reaction by user and emoji, replacing the message record', () => {
    const s = state();
    const m = streamMsg(91, GENERAL, 'lunch', { reactions: [{ emoji_name: 'smile', emoji_code: '1f604', reaction_type: 'unicode_emoji', user_id: BOB }] });
    load(s, HOME, [m]);
    const tada = { emoji_name: 'tada', emoji_code: '1f389', reaction_type: 'unicode_emoji' };
    apply(s, { type: 'reaction', op: 'add', message_id: 91, user_id: ALICE, user: { user_id: ALICE }, ...tada });
    const added = s.messages.get(91) as Message;
    assert.deepEqual(added.reactions, [...m.reactions, { ...tada, user_id: ALICE }]);
    // The same reaction twice is one reaction.
    apply(s, { type: 'reaction', op: 'add', message_id: 91, user_id: ALICE, ...tada });
    assert.equal(s.messages.get(91)?.reactions.length, 2);
    apply(s, { type: 'reaction', op: 'remove', message_id: 91, user_id: BOB, emoji_name: 'smile', emoji_code: '1f604', reaction_type: 'unicode_emoji' });
    assert.deepEqual(s.messages.get(91)?.reactions, [{ ...tada, user_id: ALICE }]);
    assert.deepEqual(added.reactions.length, 2, 'the earlier record is unchanged');
    // A message the store does not hold: nothing to do.
    apply(s, { type: 'reaction', op: 'add', message_id: 999, user_id: ALICE, ...tada });
    assert.equal(s.messages.has(999), false);
  });
});

describe('applyEvent: update_message_flags', () => {
  it('read: marks read; all: every unread', () => {
    const s = state();
    load(s, HOME, [streamMsg(91, GENERAL, 'lunch'), dmMsg(90, [ALICE])]);
    apply(s, { type: 'update_message_flags', op: 'add', flag: 'read', messages: [91, 90, 93], all: false });
    assert.deepEqual([...s.unread.stream.keys()].sort(), [92]);
    assert.deepEqual([...s.unread.dm.keys()], [94]);
    assert.deepEqual([...s.unread.mentions], []);
    assert.deepEqual(s.messages.get(91)?.flags, ['read']);
    assert.deepEqual(s.messages.get(90)?.flags, ['read']);
    apply(s, { type: 'update_message_flags', op: 'add', flag: 'read', messages: [], all: true });
    assert.deepEqual(counts(s).home + counts(s).byStream.size, 0);
  });

  it('read remove: back to unread from message_details (channel topic, DM, group, mention); unsubscribed channels stay read', () => {
    const s = state({ unread_msgs: { count: 0, pms: [], streams: [], huddles: [], mentions: [], old_unreads_missing: false } });
    load(s, HOME, [streamMsg(91, GENERAL, 'lunch', { flags: ['read', 'mentioned'] })]);
    apply(s, {
      type: 'update_message_flags',
      op: 'remove',
      flag: 'read',
      messages: [91, 95, 96, 97, 98],
      all: false,
      message_details: {
        91: { type: 'stream', stream_id: GENERAL, topic: 'lunch', mentioned: true },
        95: { type: 'private', user_ids: [ALICE] },
        96: { type: 'private', user_ids: [BOB, ALICE] },
        97: { type: 'private', user_ids: [] },
        98: { type: 'stream', stream_id: RANDOM, topic: 'x', unmuted_stream_msg: false },
      },
    });
    assert.deepEqual(s.unread, {
      stream: new Map([[91, { streamId: GENERAL, topic: 'lunch' }]]),
      dm: new Map([
        [95, '5'],
        [96, '5,6'],
        [97, '4'],
      ]),
      mentions: new Set([91]),
    });
    assert.deepEqual(s.messages.get(91)?.flags, ['mentioned']);
  });

  it('starred: the set, the flags, the starred list; one not loaded makes the list stale', () => {
    const s = state();
    load(s, HOME, [streamMsg(91, GENERAL, 'lunch')]);
    load(s, { kind: 'starred' }, []);
    apply(s, { type: 'update_message_flags', op: 'add', flag: 'starred', messages: [91], all: false });
    assert.deepEqual(s.starred, new Set([80, 91]));
    assert.deepEqual(s.messages.get(91)?.flags, ['starred']);
    assert.deepEqual(ids(s, { kind: 'starred' }), [91]);
    apply(s, { type: 'update_message_flags', op: 'remove', flag: 'starred', messages: [91, 80], all: false });
    assert.deepEqual(s.starred, new Set());
    assert.deepEqual(ids(s, { kind: 'starred' }), []);
    apply(s, { type: 'update_message_flags', op: 'add', flag: 'starred', messages: [555], all: false });
    assert.equal(s.lists.get(narrowKey({ kind: 'starred' }))?.stale, true);
  });

  it('searches on a flag cannot be decided: they go stale', () => {
    const s = state();
    const unread: Narrow = { kind: 'terms', terms: [{ operator: 'channel', operand: GENERAL }, { operator: 'is', operand: 'unread' }] };
    const search: Narrow = { kind: 'terms', terms: [{ operator: 'search', operand: 'x' }] };
    load(s, unread, []);
    load(s, search, []);
    apply(s, { type: 'update_message_flags', op: 'add', flag: 'read', messages: [91], all: false });
    assert.equal(s.lists.get(narrowKey(unread))?.stale, true);
    assert.equal(s.lists.get(narrowKey(search))?.stale, false);
  });
});

describe('applyEvent: subscription', () => {
  it('add: the subscription and its channel; remove: gone with its unreads; the home view is fetched again', () => {
    const s = state();
    load(s, HOME, []);
    const random = sub(RANDOM, 'random', { color: '#000000' });
    apply(s, { type: 'subscription', op: 'add', subscriptions: [{ ...random, subscribers: [ME] }] });
    assert.deepEqual(s.subs.get(RANDOM), { ...random, subscribers: [ME] });
    assert.deepEqual(s.streams.get(RANDOM), { stream_id: RANDOM, name: 'random', description: 'About random', rendered_description: '<p>About random</p>', invite_only: false, is_archived: false });
    assert.equal(s.lists.get(narrowKey(HOME))?.stale, true);
    apply(s, { type: 'subscription', op: 'remove', subscriptions: [{ stream_id: GENERAL, name: 'general' }] });
    assert.equal(s.subs.has(GENERAL), false);
    assert.equal(s.streams.has(GENERAL), true);
    assert.deepEqual([...s.unread.stream.keys()], [92]);
    assert.deepEqual([...s.unread.mentions], []);
  });

  it('update: one property, muting in both spellings; the record is replaced', () => {
    const s = state();
    const before = s.subs.get(GENERAL) as Subscription;
    apply(s, { type: 'subscription', op: 'update', stream_id: GENERAL, property: 'in_home_view', value: false });
    apply(s, { type: 'subscription', op: 'update', stream_id: GENERAL, property: 'pin_to_top', value: true });
    assert.deepEqual(s.subs.get(GENERAL), { ...sub(GENERAL, 'general'), is_muted: true, in_home_view: false, pin_to_top: true });
    apply(s, { type: 'subscription', op: 'update', stream_id: GENERAL, property: 'is_muted', value: false });
    assert.deepEqual(s.subs.get(GENERAL), { ...sub(GENERAL, 'general'), pin_to_top: true });
    assert.deepEqual(before, sub(GENERAL, 'general'));
    // peer changes are not kept; unknown channels are ignored.
    apply(s, { type: 'subscription', op: 'peer_add', stream_ids: [GENERAL], user_ids: [BOB] });
    apply(s, { type: 'subscription', op: 'update', stream_id: 999, property: 'color', value: '#fff' });
    assert.equal(s.subs.has(999), false);
  });
});

describe('applyEvent: stream', () => {
  it('create, update (name, description with its rendering, privacy), delete', () => {
    const s = state();
    load(s, HOME, [streamMsg(91, GENERAL, 'lunch'), streamMsg(92, DESIGN, 'mockups')]);
    apply(s, { type: 'stream', op: 'create', streams: [{ stream_id: 30, name: 'new', description: 'd', rendered_description: '<p>d</p>', invite_only: true, is_archived: false, date_created: 1 }] });
    assert.deepEqual(s.streams.get(30), { stream_id: 30, name: 'new', description: 'd', rendered_description: '<p>d</p>', invite_only: true, is_archived: false });
    apply(s, { type: 'stream', op: 'update', stream_id: GENERAL, name: 'general', property: 'name', value: 'lobby' });
    apply(s, { type: 'stream', op: 'update', stream_id: GENERAL, name: 'lobby', property: 'description', value: '**Hi**', rendered_description: '<p><strong>Hi</strong></p>' });
    apply(s, { type: 'stream', op: 'update', stream_id: GENERAL, name: 'lobby', property: 'invite_only', value: true, history_public_to_subscribers: false });
    const changes = { name: 'lobby', description: '**Hi**', rendered_description: '<p><strong>Hi</strong></p>', invite_only: true };
    assert.deepEqual(s.streams.get(GENERAL), { stream_id: GENERAL, is_archived: false, ...changes, history_public_to_subscribers: false });
    assert.deepEqual(s.subs.get(GENERAL), { ...sub(GENERAL, 'general'), ...changes, history_public_to_subscribers: false });
    // Cached messages of the channel carry its new name.
    assert.equal(s.messages.get(91)?.display_recipient, 'lobby');
    assert.equal(s.messages.get(92)?.display_recipient, 'design');
    apply(s, { type: 'stream', op: 'delete', streams: [{ stream_id: DESIGN }], stream_ids: [DESIGN] });
    assert.equal(s.streams.has(DESIGN), false);
    assert.equal(s.subs.has(DESIGN), false);
    assert.equal(s.unread.stream.has(92), false);
  });
});

describe('applyEvent: realm_user, realm, user_settings', () => {
  it('realm_user add, update (a name in cached messages; an email as new_email), remove', () => {
    const s = state();
    load(s, HOME, [streamMsg(91, GENERAL, 'lunch'), dmMsg(94, [ALICE, BOB], { sender_id: BOB, sender_full_name: 'Bob', sender_email: 'bob@example.com' })]);
    apply(s, { type: 'realm_user', op: 'add', person: user(40, 'Dora') });
    assert.deepEqual(s.users.get(40), user(40, 'Dora'));
    apply(s, { type: 'realm_user', op: 'update', person: { user_id: ALICE, full_name: 'Alice Liddell' } });
    apply(s, { type: 'realm_user', op: 'update', person: { user_id: BOB, new_email: 'robert@example.com' } });
    assert.deepEqual(s.users.get(ALICE), user(ALICE, 'Alice', { full_name: 'Alice Liddell' }));
    assert.deepEqual(s.users.get(BOB), user(BOB, 'Bob', { email: 'robert@example.com' }));
    assert.equal(s.messages.get(91)?.sender_full_name, 'Alice Liddell');
    assert.deepEqual(s.messages.get(94), {
      ...dmMsg(94, [ALICE, BOB], { sender_id: BOB, sender_full_name: 'Bob', sender_email: 'robert@example.com' }),
      display_recipient: [recipient(ME), { ...recipient(ALICE), full_name: 'Alice Liddell' }, { ...recipient(BOB), email: 'robert@example.com' }],
    });
    apply(s, { type: 'realm_user', op: 'remove', person: { user_id: 40, full_name: 'Unknown user' } });
    assert.equal(s.users.has(40), false);
  });

  it('realm name, both event forms; user_settings update', () => {
    const s = state();
    apply(s, { type: 'realm', op: 'update', property: 'name', value: 'New Org' });
    assert.equal(s.realm.name, 'New Org');
    apply(s, { type: 'realm', op: 'update_dict', property: 'default', data: { name: 'Newer Org', description: 'x' } });
    assert.equal(s.realm.name, 'Newer Org');
    const before = s.settings;
    apply(s, { type: 'user_settings', op: 'update', property: 'enter_sends', value: true });
    assert.deepEqual(s.settings, { enter_sends: true, color_scheme: 1, twenty_four_hour_time: false });
    assert.equal(before.enter_sends, false);
  });
});

describe('applyEvent: user_topic, muted_users', () => {
  it('sets and clears a topic policy (case-insensitively); the home view is fetched again', () => {
    const s = state();
    load(s, HOME, []);
    apply(s, { type: 'user_topic', stream_id: GENERAL, topic_name: 'Lunch', last_updated: 2, visibility_policy: 3 });
    assert.deepEqual(s.userTopics, new Map([[`${GENERAL}\u0000gossip`, 1], [`${GENERAL}\u0000lunch`, 3]]));
    apply(s, { type: 'user_topic', stream_id: GENERAL, topic_name: 'GOSSIP', last_updated: 3, visibility_policy: 0 });
    assert.deepEqual(s.userTopics, new Map([[`${GENERAL}\u0000lunch`, 3]]));
    assert.equal(s.lists.get(narrowKey(HOME))?.stale, true);
    // Following a topic of a muted channel shows it; unmuting it too.
    apply(s, { type: 'user_topic', stream_id: DESIGN, topic_name: 'mockups', last_updated: 4, visibility_policy: 2 });
    assert.equal(isMuted(s, DESIGN, 'mockups'), false);
    assert.equal(isMuted(s, DESIGN, 'other'), true);
  });

  it('muted_users replaces the set', () => {
    const s = state();
    apply(s, { type: 'muted_users', muted_users: [{ id: BOB, timestamp: 1 }, { id: CAROL, timestamp: 2 }] });
    assert.deepEqual(s.mutedUsers, new Set([BOB, CAROL]));
    apply(s, { type: 'muted_users', muted_users: [] });
    assert.deepEqual(s.mutedUsers, new Set());
  });
});

describe('applyEvent: typing, heartbeat', () => {
  it('start and stop by conversation; my own typing is not shown; notices expire', () => {
    const s = state();
    apply(s, { type: 'typing', op: 'start', message_type: 'stream', stream_id: GENERAL, topic: 'Lunch', sender: { user_id: ALICE } }, 1000);
    apply(s, { type: 'typing', op: 'start', message_type: 'stream', stream_id: GENERAL, topic: 'lunch', sender: { user_id: BOB } }, 2000);
    apply(s, { type: 'typing', op: 'start', message_type: 'direct', sender: { user_id: ME }, recipients: [{ user_id: ME }, { user_id: ALICE }] }, 2000);
    apply(s, { type: 'typing', op: 'start', message_type: 'direct', sender: { user_id: BOB }, recipients: [{ user_id: ME }, { user_id: ALICE }, { user_id: BOB }] }, 3000);
    assert.deepEqual(
      s.typing,
      new Map([
        [`stream:${GENERAL}:lunch`, new Map([[ALICE, 16_000], [BOB, 17_000]])],
        ['dm:5,6', new Map([[BOB, 18_000]])],
      ]),
    );
    apply(s, { type: 'typing', op: 'stop', message_type: 'stream', stream_id: GENERAL, topic: 'LUNCH', sender: { user_id: ALICE } }, 4000);
    assert.deepEqual(s.typing.get(`stream:${GENERAL}:lunch`), new Map([[BOB, 17_000]]));
    assert.equal(expireTyping(s, 16_999), false);
    assert.equal(expireTyping(s, 17_000), true);
    assert.deepEqual(s.typing, new Map([['dm:5,6', new Map([[BOB, 18_000]])]]));
    assert.equal(expireTyping(s, 20_000), true);
    assert.deepEqual(s.typing, new Map());
  });

  it('a heartbeat only moves lastEventId; so does any event', () => {
    const s = state();
    const before = snapshot(s);
    applyEvent(s, { id: 41, type: 'heartbeat' }, 0);
    assert.equal(s.lastEventId, 41);
    applyEvent(s, { id: 42, type: 'presence', user_id: ALICE }, 0);
    assert.equal(s.lastEventId, 42);
    applyEvent(s, { id: 40, type: 'heartbeat' }, 0);
    assert.equal(s.lastEventId, 42);
    assert.deepEqual(snapshot(s), before);
  });
});

describe('narrowContext', () => {
  it('names channels and people from the state, and finds them by name or email case-insensitively', () => {
    const c = narrowContext(state());
    assert.equal(c.streamName(GENERAL), 'general');
    assert.equal(c.streamIdByName('GENERAL'), GENERAL);
    assert.equal(c.streamIdByName('nope'), undefined);
    assert.equal(c.userName(ALICE), 'Alice');
    assert.equal(c.userIdByEmail('alice@example.com'), ALICE);
    assert.deepEqual(parseHash('#narrow/stream/Random/topic/x', c), { kind: 'channel', streamId: RANDOM, topic: 'x' });
  });
});
