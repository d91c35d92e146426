import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server';
import { createChannel, err, ids, sendToChannel, SUCCESS } from '../helpers/chat';
import { queuedEvents, registerQueue } from '../helpers/events';
import { doSendMessage } from '../../src/actions/messages';
import { doUpdateFlags } from '../../src/actions/flags';
import { doUpdateFlagsForNarrow } from '../../src/actions/flags-narrow';
import { findUserById, type UserRow } from '../../src/lib/users';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

const op = (operator: string, operand: unknown) => ({ operator, operand });

async function flagsNarrow(params: Record<string, unknown>, user = t.users.othello) {
  return t.api(user, 'POST', '/messages/flags/narrow', params);
}

async function unreadIn(channel: number, user = t.users.othello): Promise<number[]> {
  const res = await t.api(user, 'GET', '/messages', {
    anchor: 'oldest',
    num_before: 0,
    num_after: 5000,
    narrow: [op('channel', channel), op('is', 'unread')],
  });
  assert.equal(res.status, 200, res.text);
  return res.body.messages.map((m: { id: number }) => m.id);
}

describe('POST /messages/flags/narrow', () => {
  let chan: number;
  const m: number[] = [];
  before(async () => {
    chan = await createChannel(t, t.users.hamlet, 'flagging', [t.users.hamlet, t.users.othello]);
    for (let i = 0; i < 5; i++) m.push(await sendToChannel(t, t.users.hamlet, chan, 'f', `n${i}`));
  });

  it('marks a window read and answers every key', async () => {
    const res = await flagsNarrow({
      anchor: String(m[1]),
      num_before: 0,
      num_after: 2,
      narrow: [op('channel', chan)],
      op: 'add',
      flag: 'read',
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {
      ...SUCCESS,
      processed_count: 3,
      updated_count: 3,
      first_processed_id: m[1],
      last_processed_id: m[3],
      found_oldest: false,
      found_newest: false,
    });
    assert.deepEqual(await unreadIn(chan), [m[0], m[4]]);
    // Again: processed but nothing changes.
    const again = await flagsNarrow({ anchor: String(m[1]), num_before: 0, num_after: 2, narrow: [op('channel', chan)], op: 'add', flag: 'read' });
    assert.equal(again.body.updated_count, 0);
    assert.equal(again.body.processed_count, 3);
  });

  it('narrow is optional; read/remove adds ignored_because_not_subscribed_channels', async () => {
    let res = await flagsNarrow({ anchor: 'newest', num_before: 100, num_after: 0, op: 'remove', flag: 'read' });
    assert.deepEqual(res.body, {
      ...SUCCESS,
      processed_count: 5,
      updated_count: 3,
      first_processed_id: m[0],
      last_processed_id: m[4],
      found_oldest: true,
      found_newest: true,
      ignored_because_not_subscribed_channels: [],
    });
    res = await flagsNarrow({ anchor: 'oldest', num_before: 0, num_after: 100, op: 'add', flag: 'starred', narrow: [op('channel', chan)] });
    assert.equal('ignored_because_not_subscribed_channels' in res.body, false);
    assert.equal(res.body.updated_count, 5);
    res = await flagsNarrow({ anchor: 'oldest', num_before: 0, num_after: 100, op: 'remove', flag: 'starred', narrow: [] });
    assert.equal('ignored_because_not_subscribed_channels' in res.body, false);
  });

  it('skips channels the user left when marking unread, and says which', async () => {
    const u = t.users;
    const left = await createChannel(t, u.hamlet, 'left-behind', [u.hamlet, u.othello]);
    const a = await sendToChannel(t, u.hamlet, left, 'x', 'one');
    await t.api(u.othello, 'POST', '/messages/flags', { messages: [a], op: 'add', flag: 'read' });
    assert.deepEqual((await t.api(u.othello, 'DELETE', '/users/me/subscriptions', { subscriptions: ['left-behind'] })).body.removed, ['left-behind']);
    const res = await flagsNarrow({ anchor: 'oldest', num_before: 0, num_after: 100, narrow: [op('channel', left)], op: 'remove', flag: 'read' });
    assert.deepEqual(res.body, {
      ...SUCCESS,
      processed_count: 1,
      updated_count: 0,
      first_processed_id: a,
      last_processed_id: a,
      found_oldest: true,
      found_newest: true,
      ignored_because_not_subscribed_channels: [left],
    });
  });

  it('answers null ids for an empty window', async () => {
    const res = await flagsNarrow({ anchor: 'newest', num_before: 10, num_after: 0, narrow: [op('search', 'nothingmatchesthis')], op: 'add', flag: 'read' });
    assert.deepEqual(res.body, {
      ...SUCCESS,
      processed_count: 0,
      updated_count: 0,
      first_processed_id: null,
      last_processed_id: null,
      found_oldest: true,
      found_newest: true,
    });
  });

  it('validates anchor, op, flag and required parameters', async () => {
    const base = { anchor: 'newest', num_before: 1, num_after: 0, op: 'add', flag: 'read' };
    const cases: [Record<string, unknown>, unknown][] = [
      [{ ...base, flag: 'shiny' }, err("Invalid flag: 'shiny'")],
      // Names that exist on every JavaScript object are no flags either (once a 500).
      [{ ...base, flag: 'constructor' }, err("Invalid flag: 'constructor'")],
      [{ ...base, flag: '__proto__' }, err("Invalid flag: '__proto__'")],
      [{ ...base, flag: 'historical' }, err("Flag not editable: 'historical'")],
      [{ ...base, op: 'flip' }, err("Invalid message flag operation: 'flip'")],
      [{ ...base, anchor: 'middle' }, err('Invalid anchor')],
      [{ ...base, anchor: String(m[2]), num_before: 1, num_after: 1, include_anchor: false }, err('The anchor can only be excluded at an end of the range')],
      [{ num_before: 1, num_after: 0, op: 'add', flag: 'read' }, err("Missing 'anchor' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'anchor' })],
      [{ ...base, narrow: [op('nope', 'x')] }, err('Invalid narrow operator: unknown operator nope', 'BAD_NARROW')],
      [{ ...base, narrow: [op('nope', 1)] }, err('operand is not a string')],
      // As Zulip's update_message_flags_for_narrow: the anchor, the range and the narrow before the flag.
      [{ ...base, anchor: 'middle', flag: 'shiny' }, err('Invalid anchor')],
      [{ ...base, anchor: String(m[2]), num_before: 1, num_after: 1, include_anchor: false, flag: 'shiny' }, err('The anchor can only be excluded at an end of the range')],
      [{ ...base, narrow: [op('nope', 'x')], flag: 'shiny' }, err('Invalid narrow operator: unknown operator nope', 'BAD_NARROW')],
    ];
    for (const [params, body] of cases) {
      const res = await flagsNarrow(params);
      assert.equal(res.status, 400, JSON.stringify(params));
      assert.deepEqual(res.body, body, JSON.stringify(params));
    }
  });

  it('checks the flag before the operation (the action; the route checks the operation itself first)', () => {
    const othello = findUserById(t.app.db, t.app.realmId(), t.users.othello.id) as UserRow;
    const req = { anchor: 'newest' as const, includeAnchor: true, numBefore: 1, numAfter: 0, narrow: [], op: 'flip', flag: 'shiny' };
    assert.throws(() => doUpdateFlagsForNarrow(t.app, othello, req), { message: "Invalid flag: 'shiny'" });
    assert.throws(() => doUpdateFlagsForNarrow(t.app, othello, { ...req, flag: 'read' }), { message: "Invalid message flag operation: 'flip'" });
    assert.throws(() => doUpdateFlags(t.app, othello, [m[0]], 'shiny', 'flip'), { message: "Invalid flag: 'shiny'" });
    assert.throws(() => doUpdateFlags(t.app, othello, [m[0]], 'read', 'flip'), { message: "Invalid message flag operation: 'flip'" });
  });

  it('sends update_message_flags even when nothing changed', async () => {
    const params = { anchor: String(m[1]), num_before: 0, num_after: 0, narrow: [op('channel', chan)], op: 'add', flag: 'read' };
    assert.equal((await flagsNarrow(params)).status, 200);
    const queue = await registerQueue(t, t.users.othello, ['update_message_flags']);
    assert.equal((await flagsNarrow(params)).body.updated_count, 0);
    assert.equal((await flagsNarrow({ ...params, narrow: [op('search', 'nothingmatchesthis')] })).body.processed_count, 0);
    const event = { type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: [], all: false };
    assert.deepEqual(await queuedEvents(t, t.users.othello, queue), [event, event]);
  });

  it('clamps the range to 5000 messages', async () => {
    const u = t.users;
    const chan2 = await createChannel(t, u.hamlet, 'bulk', [u.hamlet, u.othello]);
    const hamlet = findUserById(t.app.db, t.app.realmId(), u.hamlet.id) as UserRow;
    const sent: number[] = [];
    for (let i = 0; i < 5200; i++) {
      sent.push(doSendMessage(t.app, hamlet, { to: { kind: 'channel', streamId: chan2, topic: 'bulk' }, content: `bulk ${i}` }).id);
    }
    t.app.batch.commit();
    const narrow = [op('channel', chan2)];
    let res = await flagsNarrow({ anchor: 'oldest', num_before: 0, num_after: 6000, narrow, op: 'add', flag: 'read' });
    assert.deepEqual(res.body, {
      ...SUCCESS,
      processed_count: 5000,
      updated_count: 5000,
      first_processed_id: sent[0],
      last_processed_id: sent[4999],
      found_oldest: true,
      found_newest: false,
    });
    assert.deepEqual(await unreadIn(chan2), sent.slice(5000));
    // Both sides large: 2500 before the anchor, the rest after.
    res = await flagsNarrow({ anchor: String(sent[3000]), num_before: 9000, num_after: 9000, narrow, op: 'add', flag: 'starred' });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {
      ...SUCCESS,
      // 2500 before, the anchor, and the 2199 that exist after it.
      processed_count: 4700,
      updated_count: 4700,
      first_processed_id: sent[500],
      last_processed_id: sent[5199],
      found_oldest: false,
      found_newest: true,
    });
  });
});

describe('POST /messages/flags', () => {
  // As Zulip's do_update_message_flags: a message without a row counts as read and historical.
  let vault: number;
  let plaza: number;
  const v: number[] = [];
  const p: number[] = [];
  before(async () => {
    const u = t.users;
    vault = await createChannel(t, u.hamlet, 'vault', [u.hamlet], { invite_only: true });
    plaza = await createChannel(t, u.hamlet, 'plaza', [u.hamlet]);
    v.push(await sendToChannel(t, u.hamlet, vault, 'gold', 'secret bullion'));
    p.push(await sendToChannel(t, u.hamlet, plaza, 'square', 'public fountain'), await sendToChannel(t, u.hamlet, plaza, 'square', 'public statue'));
  });
  const flags = (params: Record<string, unknown>) => t.api(t.users.othello, 'POST', '/messages/flags', params);
  const feed = async (narrow: unknown[] = []) => {
    const res = await t.api(t.users.othello, 'GET', '/messages', { anchor: 'newest', num_before: 1000, num_after: 0, narrow });
    assert.equal(res.status, 200, res.text);
    return ids(res.body);
  };

  it('marking read a message without a row changes nothing, readable or not, and writes no row', async () => {
    const queue = await registerQueue(t, t.users.othello, ['update_message_flags']);
    for (const id of [v[0], p[0], 999999]) {
      const res = await flags({ messages: [id], op: 'add', flag: 'read' });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, { ...SUCCESS, messages: [id] });
    }
    assert.deepEqual(
      (await queuedEvents(t, t.users.othello, queue)).map((e) => e.messages),
      [[], [], []],
    );
    // No row: the messages stay out of othello's own feed and searches; the channel's history shows the public one.
    const all = await feed();
    assert.equal(all.includes(v[0]) || all.includes(p[0]), false);
    assert.deepEqual(await feed([op('search', 'public')]), []);
    assert.deepEqual(await feed([op('search', 'bullion')]), []);
    assert.deepEqual(await feed([op('channel', plaza)]), p);
    assert.deepEqual((await t.api(t.users.othello, 'GET', `/messages/${v[0]}`)).body, err('Invalid message(s)'));
  });

  it('unstarring a message without a row succeeds; starring one checks access and writes a historical row', async () => {
    for (const id of [v[0], p[1]]) {
      const res = await flags({ messages: [id], op: 'remove', flag: 'starred' });
      assert.deepEqual(res.body, { ...SUCCESS, messages: [id] });
    }
    assert.deepEqual((await flags({ messages: [p[1], v[0]], op: 'add', flag: 'starred' })).body, err('Invalid message(s)'));
    assert.deepEqual(await feed([op('channel', plaza), op('is', 'starred')]), []);
    const queue = await registerQueue(t, t.users.othello, ['update_message_flags']);
    assert.deepEqual((await flags({ messages: [p[1], p[1]], op: 'add', flag: 'starred' })).body, { ...SUCCESS, messages: [p[1], p[1]] });
    assert.deepEqual(await queuedEvents(t, t.users.othello, queue), [{ type: 'update_message_flags', op: 'add', operation: 'add', flag: 'starred', messages: [p[1]], all: false }]);
    const starred = await t.api(t.users.othello, 'GET', '/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [op('channel', plaza), op('is', 'starred')] });
    assert.deepEqual(starred.body.messages.map((x: { id: number; flags: string[] }) => [x.id, x.flags]), [[p[1], ['read', 'starred', 'historical']]]);
  });

  it('takes at most 5000 message ids (as one GET /messages returns), refusing more before reading them', async () => {
    const ids5000 = Array.from({ length: 5000 }, (_, i) => i + 1_000_000);
    assert.deepEqual((await flags({ messages: ids5000, op: 'add', flag: 'read' })).body, { ...SUCCESS, messages: ids5000 });
    assert.deepEqual((await flags({ messages: [...ids5000, 1], op: 'add', flag: 'read' })).body, err('messages is too long (limit: 5000 items)'));
    // The length is checked before the items are read (half a million ids: within the body limit).
    assert.deepEqual(
      (await flags({ messages: Array.from({ length: 500_000 }, (_, i) => i), op: 'add', flag: 'read' })).body,
      err('messages is too long (limit: 10000 items)'),
    );
    assert.deepEqual((await flags({ messages: Array(5001).fill('x'), op: 'add', flag: 'read' })).body, err('messages is too long (limit: 5000 items)'));
  });
});

describe('POST /streams/{stream_id}/delete_topic', () => {
  it('is for organization administrators only', async () => {
    const chan = await createChannel(t, t.users.hamlet, 'not-yours', [t.users.hamlet]);
    await sendToChannel(t, t.users.hamlet, chan, 'keep', 'x');
    for (const user of [t.users.hamlet, t.users.moderator, t.users.guest]) {
      const res = await t.api(user, 'POST', `/streams/${chan}/delete_topic`, { topic_name: 'keep' });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'));
    }
  });

  it('deletes the topic, updates first_message_id, and the empty-topic display name means ""', async () => {
    const u = t.users;
    const chan = await createChannel(t, u.hamlet, 'cleanup', [u.hamlet]);
    const doomed = [await sendToChannel(t, u.hamlet, chan, 'doomed', 'a'), await sendToChannel(t, u.hamlet, chan, 'DOOMED', 'b')];
    const kept = await sendToChannel(t, u.hamlet, chan, 'kept', 'c');
    const empty = await sendToChannel(t, u.hamlet, chan, '', 'd');
    assert.equal((await t.api(u.admin, 'GET', `/streams/${chan}`)).body.stream.first_message_id, doomed[0]);
    let res = await t.api(u.admin, 'POST', `/streams/${chan}/delete_topic`, { topic_name: 'doomed' });
    assert.deepEqual(res.body, { ...SUCCESS, complete: true });
    for (const id of doomed) assert.deepEqual((await t.api(u.hamlet, 'GET', `/messages/${id}`)).body, err('Invalid message(s)'));
    assert.equal((await t.api(u.admin, 'GET', `/streams/${chan}`)).body.stream.first_message_id, kept);
    res = await t.api(u.admin, 'POST', `/streams/${chan}/delete_topic`, { topic_name: 'general chat' });
    assert.deepEqual(res.body, { ...SUCCESS, complete: true });
    assert.equal((await t.api(u.hamlet, 'GET', `/messages/${empty}`)).status, 400);
    const topics = await t.api(u.hamlet, 'GET', `/users/me/${chan}/topics`);
    assert.deepEqual(topics.body, { ...SUCCESS, topics: [{ max_id: kept, name: 'kept' }] });
    res = await t.api(u.admin, 'POST', '/streams/99999/delete_topic', { topic_name: 'x' });
    assert.deepEqual(res.body, err('Invalid channel ID'));
  });

  it('answers complete: false when the budget runs out, then true after repeats', async () => {
    const small = await startTestServer({
      configure: (c) => {
        c.deleteTopicBatchSize = 2;
        c.deleteTopicBudgetMs = 0;
      },
    });
    try {
      const u = small.users;
      const chan = await createChannel(small, u.hamlet, 'slow', [u.hamlet]);
      const first = await sendToChannel(small, u.hamlet, chan, 'other', 'stays');
      const doomed: number[] = [];
      for (let i = 0; i < 5; i++) doomed.push(await sendToChannel(small, u.hamlet, chan, 'big', `m${i}`));
      const results: boolean[] = [];
      for (let i = 0; i < 10; i++) {
        const res = await small.api(u.admin, 'POST', `/streams/${chan}/delete_topic`, { topic_name: 'big' });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(Object.keys(res.body).sort(), ['complete', 'msg', 'result']);
        results.push(res.body.complete);
        if (res.body.complete) break;
      }
      assert.equal(results[0], false);
      assert.equal(results[results.length - 1], true);
      // Newest first: after the first round, the oldest three remain.
      const left = await small.api(u.hamlet, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 10, narrow: [op('channel', chan)] });
      assert.deepEqual(left.body.messages.map((x: { id: number }) => x.id), [first]);
      assert.equal((await small.api(u.admin, 'GET', `/streams/${chan}`)).body.stream.first_message_id, first);
    } finally {
      await small.close();
    }
  });

  it('deletes newest first in batches', async () => {
    const small = await startTestServer({
      configure: (c) => {
        c.deleteTopicBatchSize = 2;
        c.deleteTopicBudgetMs = 0;
      },
    });
    try {
      const u = small.users;
      const chan = await createChannel(small, u.hamlet, 'order', [u.hamlet]);
      const doomed: number[] = [];
      for (let i = 0; i < 5; i++) doomed.push(await sendToChannel(small, u.hamlet, chan, 'big', `m${i}`));
      const res = await small.api(u.admin, 'POST', `/streams/${chan}/delete_topic`, { topic_name: 'big' });
      assert.deepEqual(res.body, { ...SUCCESS, complete: false });
      const left = await small.api(u.hamlet, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 10, narrow: [op('channel', chan)] });
      assert.deepEqual(left.body.messages.map((x: { id: number }) => x.id), doomed.slice(0, 3));
      assert.equal((await small.api(u.admin, 'GET', `/streams/${chan}`)).body.stream.first_message_id, doomed[0]);
    } finally {
      await small.close();
    }
  });
});

describe('update_message_flags remove read: message_details', () => {
  it('says unmuted_stream_msg: true in an unmuted channel and false once the channel is muted', async () => {
    const u = t.users;
    const chan = await createChannel(t, u.hamlet, 'details', [u.hamlet, u.othello]);
    const id = await sendToChannel(t, u.hamlet, chan, 'd', 'hello');
    const queue = await registerQueue(t, u.othello, ['update_message_flags']);
    const mark = (o: string) => t.api(u.othello, 'POST', '/messages/flags', { messages: [id], op: o, flag: 'read' });
    assert.equal((await mark('add')).status, 200);
    assert.equal((await mark('remove')).status, 200);
    let events = (await queuedEvents(t, u.othello, queue)).filter((e) => e.op === 'remove');
    assert.deepEqual(events.map((e) => e.message_details), [{ [id]: { type: 'stream', stream_id: chan, topic: 'd', unmuted_stream_msg: true } }]);
    const mute = await t.api(u.othello, 'POST', '/users/me/subscriptions/properties', {
      subscription_data: [{ stream_id: chan, property: 'is_muted', value: true }],
    });
    assert.equal(mute.status, 200, mute.text);
    await mark('add');
    await mark('remove');
    events = (await queuedEvents(t, u.othello, queue)).filter((e) => e.op === 'remove');
    assert.deepEqual(events.at(-1).message_details, { [id]: { type: 'stream', stream_id: chan, topic: 'd', unmuted_stream_msg: false } });
  });

  it('accounts for topic muting, as Zulip\'s is_row_muted', async () => {
    const u = t.users;
    const chan = await createChannel(t, u.hamlet, 'topic-details', [u.hamlet, u.othello]);
    const id = await sendToChannel(t, u.hamlet, chan, 'd', 'hello');
    const queue = await registerQueue(t, u.othello, ['update_message_flags']);
    const unmutedAfter = async (setup: () => Promise<unknown>) => {
      await setup();
      assert.equal((await t.api(u.othello, 'POST', '/messages/flags', { messages: [id], op: 'add', flag: 'read' })).status, 200);
      assert.equal((await t.api(u.othello, 'POST', '/messages/flags', { messages: [id], op: 'remove', flag: 'read' })).status, 200);
      const events = (await queuedEvents(t, u.othello, queue)).filter((e) => e.op === 'remove');
      return events.at(-1).message_details[id].unmuted_stream_msg;
    };
    const policy = (visibility_policy: number) => () => t.api(u.othello, 'POST', '/user_topics', { stream_id: chan, topic: 'd', visibility_policy });
    const muteChannel = (value: boolean) => () =>
      t.api(u.othello, 'POST', '/users/me/subscriptions/properties', { subscription_data: [{ stream_id: chan, property: 'is_muted', value }] });
    assert.equal(await unmutedAfter(policy(1)), false); // a muted topic in an unmuted channel
    assert.equal(await unmutedAfter(muteChannel(true)), false);
    assert.equal(await unmutedAfter(policy(2)), true); // unmuted in a muted channel
    assert.equal(await unmutedAfter(policy(3)), true); // followed in a muted channel
    assert.equal(await unmutedAfter(policy(0)), false);
    assert.equal(await unmutedAfter(muteChannel(false)), true);
  });
});
