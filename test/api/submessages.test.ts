import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, err, sendDirect, sendToChannel, SUCCESS } from '../helpers/chat';
import { queuedEvents, registerQueue } from '../helpers/events';
import { MAX_SUBMESSAGES_PER_MESSAGE, MAX_SUBMESSAGES_TOTAL_LENGTH } from '../../src/actions/submessages';
import { runRetentionOnce } from '../../src/actions/retention';

let t: TestServer;
let channel: number;
let privateChannel: number;
before(async () => {
  t = await startTestServer();
  channel = await createChannel(t, t.users.owner, 'widgets', [t.users.owner, t.users.hamlet, t.users.othello, t.users.guest]);
  privateChannel = await createChannel(t, t.users.owner, 'widget secrets', [t.users.owner, t.users.othello], { invite_only: true });
});
after(() => t.close());

const submit = (user: TestUser, message_id: unknown, content: unknown, msg_type: unknown = 'widget') =>
  t.api(user, 'POST', '/submessage', { message_id, msg_type, content: typeof content === 'string' ? content : JSON.stringify(content) });

async function ok(user: TestUser, messageId: number, content: unknown): Promise<void> {
  const res = await submit(user, messageId, content);
  assert.deepEqual({ status: res.status, body: res.body }, { status: 200, body: SUCCESS });
}

async function refused(user: TestUser, messageId: unknown, content: unknown, msg: string, msgType: unknown = 'widget'): Promise<void> {
  const res = await submit(user, messageId, content, msgType);
  assert.deepEqual({ status: res.status, body: res.body }, { status: 400, body: err(msg) });
}

async function getMessage(user: TestUser, id: number, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const res = await t.api(user, 'GET', `/messages/${id}`, params);
  assert.equal(res.status, 200, res.text);
  return res.body.message;
}

function submessageRows(messageId: number): { id: number; sender_id: number; msg_type: string; content: string }[] {
  return t.app.db.prepare('SELECT id, sender_id, msg_type, content FROM submessage WHERE message_id = ? ORDER BY id').all(messageId) as never;
}

/** The message's submessages as message objects list them. */
function listed(messageId: number) {
  return submessageRows(messageId).map((r) => ({ id: r.id, message_id: messageId, sender_id: r.sender_id, msg_type: r.msg_type, content: r.content }));
}

describe('/poll and /todo messages', () => {
  it('a /poll message gets its widget submessage, in the message event and in fetched messages', async () => {
    const { owner, hamlet, admin } = t.users;
    const queues = [await registerQueue(t, owner, ['message']), await registerQueue(t, hamlet, ['message']), await registerQueue(t, admin, ['message'])];
    const content = '/poll Where shall we eat?\nPizza\nSalad  ';
    const id = await sendToChannel(t, owner, channel, 'lunch', content);
    const [row] = submessageRows(id);
    const widget = {
      id: row.id,
      message_id: id,
      sender_id: owner.id,
      msg_type: 'widget',
      // Python's json.dumps, as Zulip stores it.
      content: '{"widget_type": "poll", "extra_data": {"question": "Where shall we eat?", "options": ["Pizza", "Salad"]}}',
    };
    for (const q of queues.slice(0, 2)) {
      const events = await queuedEvents(t, q === queues[0] ? owner : hamlet, q);
      assert.equal(events.length, 1);
      assert.deepEqual(events[0].message.submessages, [widget]);
      assert.equal(events[0].message.content, content.trimEnd());
    }
    assert.deepEqual(await queuedEvents(t, admin, queues[2]), []);
    const fetched = await getMessage(hamlet, id);
    assert.deepEqual(fetched.submessages, [widget]);
    // Rendered as any other message (the clients draw the widget from the submessages).
    assert.equal(fetched.content, '<p>/poll Where shall we eat?<br>\nPizza<br>\nSalad</p>');
  });

  it('a /todo message gets its task list: the title, then "task: description" lines', async () => {
    const { othello } = t.users;
    const id = await sendToChannel(t, othello, channel, 'chores', '/todo Before the release\nWrite notes: for 10.2\n- Tag it\n* Café: ☕ first');
    assert.deepEqual((await getMessage(othello, id)).submessages, [
      {
        id: submessageRows(id)[0].id,
        message_id: id,
        sender_id: othello.id,
        msg_type: 'widget',
        content:
          '{"widget_type": "todo", "extra_data": {"task_list_title": "Before the release", "tasks": [{"task": "Write notes", "desc": "for 10.2"}, {"task": "Tag it", "desc": ""}, {"task": "Caf\\u00e9", "desc": "\\u2615 first"}]}}',
      },
    ]);
  });

  it('bare /poll and /todo start empty widgets; other messages get none', async () => {
    const { hamlet } = t.users;
    const poll = await sendToChannel(t, hamlet, channel, 'bare', '/poll');
    const todo = await sendDirect(t, hamlet, [t.users.othello], '/todo');
    assert.deepEqual(submessageRows(poll).map((r) => r.content), ['{"widget_type": "poll", "extra_data": {"question": "", "options": []}}']);
    assert.deepEqual(submessageRows(todo).map((r) => r.content), ['{"widget_type": "todo", "extra_data": {"task_list_title": "", "tasks": []}}']);
    // List markers and blank lines are dropped from the options.
    const marked = await sendToChannel(t, hamlet, channel, 'bare', '/poll Colours\n\n- Red\n  * Green  \n-Blue\n*\n \t');
    assert.deepEqual(submessageRows(marked).map((r) => r.content), ['{"widget_type": "poll", "extra_data": {"question": "Colours", "options": ["Red", "Green", "Blue"]}}']);
    for (const content of ['use /poll here', '/pollster', '/me waves', '/bogus command', 'plain']) {
      const id = await sendToChannel(t, hamlet, channel, 'bare', content);
      assert.deepEqual(submessageRows(id), [], content);
      assert.deepEqual((await getMessage(hamlet, id)).submessages, []);
    }
  });
});

describe('POST /submessage', () => {
  it('poll: votes, new options and the question reach everyone who has the message, in order', async () => {
    const { owner, hamlet, othello, admin } = t.users;
    const id = await sendToChannel(t, owner, channel, 'poll flow', '/poll Best colour?\nRed\nBlue');
    const queues = new Map([owner, hamlet, othello, admin].map((u) => [u, '']));
    for (const u of queues.keys()) queues.set(u, await registerQueue(t, u, ['submessage']));

    const vote = { type: 'vote', key: 'canned,0', vote: 1 };
    const option = { type: 'new_option', idx: 1, option: 'Green' };
    const unvote = { type: 'vote', key: 'canned,0', vote: -1 };
    const question = { type: 'question', question: 'Best color?' };
    await ok(hamlet, id, vote);
    await ok(othello, id, option);
    await ok(hamlet, id, unvote);
    await ok(owner, id, question);

    const rows = listed(id);
    assert.equal(rows.length, 5);
    const expected = [
      [hamlet, vote],
      [othello, option],
      [hamlet, unvote],
      [owner, question],
    ].map(([u, c], i) => ({
      type: 'submessage',
      msg_type: 'widget',
      message_id: id,
      submessage_id: rows[i + 1].id,
      sender_id: (u as TestUser).id,
      content: JSON.stringify(c),
    }));
    for (const u of [owner, hamlet, othello]) assert.deepEqual(await queuedEvents(t, u, queues.get(u) as string), expected, u.fullName);
    // Not subscribed: the admin may read the channel but does not have the message.
    assert.deepEqual(await queuedEvents(t, admin, queues.get(admin) as string), []);

    assert.deepEqual(rows.slice(1).map((r) => [r.sender_id, r.content]), expected.map((e) => [e.sender_id, e.content]));
    assert.deepEqual((await getMessage(othello, id)).submessages, rows);
  });

  it('poll: only the author may change the question', async () => {
    const { owner, hamlet } = t.users;
    const id = await sendToChannel(t, owner, channel, 'poll flow', '/poll Q');
    await refused(hamlet, id, { type: 'question', question: 'Mine now' }, "You can't edit a question unless you are the author.");
    assert.equal(submessageRows(id).length, 1);
  });

  it('todo: tasks, strikes and the title, from two users, with events to both', async () => {
    const { hamlet, othello } = t.users;
    const id = await sendDirect(t, hamlet, [othello], '/todo Trip\nTickets');
    const qh = await registerQueue(t, hamlet, ['submessage']);
    const qo = await registerQueue(t, othello, ['submessage']);
    const qOwner = await registerQueue(t, t.users.owner, ['submessage']);
    const task = { type: 'new_task', key: 1, task: 'Hotel', desc: 'near the station', completed: false };
    const strike = { type: 'strike', key: '0,canned' };
    const title = { type: 'new_task_list_title', title: 'Trip to Elsinore' };
    await ok(othello, id, task);
    await ok(hamlet, id, strike);
    await ok(hamlet, id, title);
    await refused(othello, id, { type: 'new_task_list_title', title: 'Mine' }, "You can't edit the task list title unless you are the author.");
    const rows = listed(id);
    const expected = [
      [othello, task],
      [hamlet, strike],
      [hamlet, title],
    ].map(([u, c], i) => ({ type: 'submessage', msg_type: 'widget', message_id: id, submessage_id: rows[i + 1].id, sender_id: (u as TestUser).id, content: JSON.stringify(c) }));
    assert.deepEqual(await queuedEvents(t, hamlet, qh), expected);
    assert.deepEqual(await queuedEvents(t, othello, qo), expected);
    assert.deepEqual(await queuedEvents(t, t.users.owner, qOwner), []);
    assert.deepEqual((await getMessage(othello, id)).submessages, rows);
  });

  it('GET /messages lists each message its own submessages in id order', async () => {
    const { owner, hamlet } = t.users;
    const a = await sendToChannel(t, owner, channel, 'batch', '/poll A?\nx');
    const plain = await sendToChannel(t, owner, channel, 'batch', 'no widget');
    const b = await sendToChannel(t, hamlet, channel, 'batch', '/todo B');
    await ok(hamlet, a, { type: 'vote', key: 'canned,0', vote: 1 });
    await ok(owner, b, { type: 'new_task', key: 0, task: 't', desc: '', completed: false });
    await ok(owner, a, { type: 'vote', key: 'canned,0', vote: 1 });
    const res = await t.api(hamlet, 'GET', '/messages', {
      anchor: 'oldest',
      num_before: 0,
      num_after: 100,
      narrow: [
        { operator: 'channel', operand: channel },
        { operator: 'topic', operand: 'batch' },
      ],
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.messages.map((m: { id: number; submessages: unknown }) => [m.id, m.submessages]),
      [
        [a, listed(a)],
        [plain, []],
        [b, listed(b)],
      ],
    );
    assert.equal(listed(a).length, 3);
  });

  it("the sender may attach a submessage to their own plain message; then others may, and its content can't be edited", async () => {
    const { hamlet, othello } = t.users;
    const id = await sendToChannel(t, hamlet, channel, 'custom', 'a plain message');
    await refused(othello, id, { anything: 1 }, 'You cannot attach a submessage to this message.');
    // Without a widget type, any JSON is taken, with any msg_type.
    await ok(hamlet, id, { custom: true });
    const res = await submit(othello, id, '[1, 2]', 'custom_type');
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(
      submessageRows(id).map((r) => [r.sender_id, r.msg_type, r.content]),
      [
        [hamlet.id, 'widget', '{"custom":true}'],
        [othello.id, 'custom_type', '[1, 2]'],
      ],
    );
    const edit = await t.api(hamlet, 'PATCH', `/messages/${id}`, { content: 'changed' });
    assert.deepEqual({ status: edit.status, body: edit.body }, { status: 400, body: err('Widgets cannot be edited.') });
  });

  it('refuses content edits of widget messages; moves keep the submessages', async () => {
    const { owner, hamlet } = t.users;
    const id = await sendToChannel(t, owner, channel, 'to move', '/poll Move me?\nyes');
    await ok(hamlet, id, { type: 'vote', key: 'canned,0', vote: 1 });
    const before = listed(id);
    const edit = await t.api(owner, 'PATCH', `/messages/${id}`, { content: '/poll Changed?' });
    assert.deepEqual({ status: edit.status, body: edit.body }, { status: 400, body: err('Widgets cannot be edited.') });
    const other = await createChannel(t, owner, 'widgets moved', [owner, hamlet]);
    const move = await t.api(owner, 'PATCH', `/messages/${id}`, { topic: 'moved', stream_id: other });
    assert.equal(move.status, 200, move.text);
    const m = await getMessage(hamlet, id);
    assert.deepEqual([m.stream_id, m.subject, m.submessages], [other, 'moved', before]);
    await ok(hamlet, id, { type: 'vote', key: 'canned,0', vote: -1 });
    assert.equal(listed(id).length, 3);
  });

  it('deleting a message removes its submessages', async () => {
    const { owner, hamlet } = t.users;
    const id = await sendToChannel(t, owner, channel, 'deleted', '/poll Gone?\nyes');
    await ok(hamlet, id, { type: 'vote', key: 'canned,0', vote: 1 });
    const res = await t.api(owner, 'DELETE', `/messages/${id}`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(submessageRows(id), []);
    await refused(hamlet, id, { type: 'vote', key: 'canned,0', vote: 1 }, 'Invalid message(s)');
  });

  it('retention removes expired messages with their submessages', async () => {
    const { owner, hamlet } = t.users;
    const shortLived = await createChannel(t, owner, 'widgets short-lived', [owner, hamlet], { message_retention_days: 1 });
    const id = await sendToChannel(t, owner, shortLived, 'old', '/poll Expired?\nyes');
    await ok(hamlet, id, { type: 'vote', key: 'canned,0', vote: 1 });
    assert.equal(submessageRows(id).length, 2);
    t.app.db.prepare('UPDATE message SET date_sent = date_sent - 2 * 86400 WHERE id = ?').run(id);
    assert.equal(runRetentionOnce(t.app), 1);
    t.app.batch.commit();
    assert.deepEqual(submessageRows(id), []);
  });

  it('follows the topic for someone who follows topics they take part in', async () => {
    const { othello } = t.users;
    const id = await sendToChannel(t, t.users.owner, channel, 'participation', '/poll Follow?\nyes');
    let res = await t.api(othello, 'PATCH', '/settings', { automatically_follow_topics_policy: 1 });
    assert.equal(res.status, 200, res.text);
    const q = await registerQueue(t, othello, ['user_topic', 'submessage']);
    await ok(othello, id, { type: 'vote', key: 'canned,0', vote: 1 });
    const events = await queuedEvents(t, othello, q);
    assert.deepEqual(
      events.map((e) => e.type),
      ['user_topic', 'submessage'],
    );
    assert.deepEqual({ ...events[0], last_updated: 0 }, { type: 'user_topic', stream_id: channel, topic_name: 'participation', last_updated: 0, visibility_policy: 3 });
    res = await t.api(othello, 'PATCH', '/settings', { automatically_follow_topics_policy: 4 });
    assert.equal(res.status, 200, res.text);
  });
});

describe('POST /submessage: who may not', () => {
  it('refuses messages the caller cannot access, as if they did not exist', async () => {
    const { owner, othello, hamlet, guest } = t.users;
    const secret = await sendToChannel(t, owner, privateChannel, 'secret', '/poll Secret?\nyes');
    const dm = await sendDirect(t, owner, [othello], '/poll Between us?\nyes');
    const vote = { type: 'vote', key: 'canned,0', vote: 1 };
    await refused(hamlet, secret, vote, 'Invalid message(s)');
    await refused(hamlet, dm, vote, 'Invalid message(s)');
    await refused(hamlet, 999_999, vote, 'Invalid message(s)');
    await refused(guest, secret, vote, 'Invalid message(s)');
    await ok(othello, secret, vote);
    await ok(othello, dm, vote);
    assert.equal(submessageRows(secret).length, 2);
  });

  it('a guest may act on widgets in channels they are in, not in public channels they are not', async () => {
    const { owner, guest } = t.users;
    const inChannel = await sendToChannel(t, owner, channel, 'guests', '/poll Guests?\nyes');
    const elsewhere = await createChannel(t, owner, 'widgets no guests', [owner]);
    const outside = await sendToChannel(t, owner, elsewhere, 'guests', '/poll Guests?\nyes');
    await ok(guest, inChannel, { type: 'vote', key: 'canned,0', vote: 1 });
    await refused(guest, outside, { type: 'vote', key: 'canned,0', vote: 1 }, 'Invalid message(s)');
  });

  it('a bot may vote on a message it can read', async () => {
    const { owner, bot } = t.users;
    const id = await sendToChannel(t, owner, channel, 'bots', '/poll Bots?\nyes');
    await ok(bot, id, { type: 'vote', key: 'canned,0', vote: 1 });
    assert.deepEqual(submessageRows(id).map((r) => r.sender_id), [owner.id, bot.id]);
  });

  it('refuses widgets in archived channels', async () => {
    const { owner, hamlet } = t.users;
    const archived = await createChannel(t, owner, 'widgets archived', [owner, hamlet]);
    const id = await sendToChannel(t, owner, archived, 'old', '/poll Archived?\nyes');
    const res = await t.api(owner, 'DELETE', `/streams/${archived}`);
    assert.equal(res.status, 200, res.text);
    await refused(hamlet, id, { type: 'vote', key: 'canned,0', vote: 1 }, 'Invalid message(s)');
  });
});

describe('POST /submessage: bad input', () => {
  let poll: number;
  let todo: number;
  before(async () => {
    poll = await sendToChannel(t, t.users.owner, channel, 'bad input', '/poll Q\nA');
    todo = await sendToChannel(t, t.users.owner, channel, 'bad input', '/todo T\nA');
  });

  it('refuses malformed poll data with Zulip messages', async () => {
    const u = t.users.hamlet;
    const cases: [unknown, string][] = [
      ['{not json', 'Invalid json for submessage'],
      ['', 'Invalid json for submessage'],
      [[1], 'poll data is not a dict'],
      ['"vote"', 'poll data is not a dict'],
      ['null', 'poll data is not a dict'],
      [{}, 'type key is missing from poll data'],
      [{ type: 5 }, 'poll data["type"] is not a string'],
      [{ type: 'bogus' }, 'Unknown type for poll data: bogus'],
      [{ type: 'vote', vote: 1 }, 'key key is missing from poll data'],
      [{ type: 'vote', key: 7, vote: 1 }, 'poll data["key"] is not a string'],
      [{ type: 'vote', key: 'canned,0' }, 'vote key is missing from poll data'],
      [{ type: 'vote', key: 'canned,0', vote: 2 }, 'Invalid poll data["vote"]'],
      [{ type: 'vote', key: 'canned,0', vote: '1' }, 'poll data["vote"] is not an integer'],
      ['{"type": "vote", "key": "canned,0", "vote": 1.0}', 'poll data["vote"] is not an integer'],
      [{ type: 'vote', key: 'canned,0', vote: true }, 'poll data["vote"] is not an integer'],
      [{ type: 'vote', key: 'canned,0', vote: 1, zz: 1, extra: [] }, 'Unexpected arguments: extra, zz'],
      [{ type: 'new_option', option: 'x', idx: 1001 }, 'poll data["idx"] is too large'],
      [{ type: 'new_option', option: 'x', idx: -1 }, 'poll data["idx"] is too small'],
      [{ type: 'new_option', option: null, idx: 1 }, 'poll data["option"] is not a string'],
      [{ type: 'question', question: 'mine' }, "You can't edit a question unless you are the author."],
    ];
    for (const [content, msg] of cases) await refused(u, poll, content, msg);
    const owner = t.users.owner;
    await refused(owner, poll, { type: 'question', question: ['x'] }, 'poll data["question"] is not a string');
    assert.equal(submessageRows(poll).length, 1);
  });

  it('refuses malformed todo data with Zulip messages', async () => {
    const u = t.users.hamlet;
    const task = { type: 'new_task', key: 1, task: 'x', desc: '', completed: false };
    const cases: [unknown, string][] = [
      [{ type: 'vote', key: 'canned,0', vote: 1 }, 'Unknown type for todo data: vote'],
      [{ ...task, completed: 'no' }, 'todo data["completed"] is not a boolean'],
      [{ ...task, key: '1' }, 'todo data["key"] is not an integer'],
      [{ ...task, key: 1001 }, 'todo data["key"] is too large'],
      [{ ...task, desc: undefined }, 'desc key is missing from todo data'],
      [{ ...task, extra: 1 }, 'Unexpected arguments: extra'],
      [{ type: 'strike', key: 0 }, 'todo data["key"] is not a string'],
      [{ type: 'new_task_list_title', title: 'x' }, "You can't edit the task list title unless you are the author."],
    ];
    for (const [content, msg] of cases) await refused(u, todo, content, msg);
    assert.equal(submessageRows(todo).length, 1);
  });

  it('refuses missing, mistyped and oversized parameters', async () => {
    const u = t.users.hamlet;
    const vote = JSON.stringify({ type: 'vote', key: 'canned,0', vote: 1 });
    const cases: [Record<string, unknown>, number, Record<string, unknown>][] = [
      [{ msg_type: 'widget', content: vote }, 400, err("Missing 'message_id' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'message_id' })],
      [{ message_id: poll, content: vote }, 400, err("Missing 'msg_type' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'msg_type' })],
      [{ message_id: poll, msg_type: 'widget' }, 400, err("Missing 'content' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'content' })],
      [{ message_id: 'abc', msg_type: 'widget', content: vote }, 400, err('message_id is not valid JSON')],
      [{ message_id: [poll], msg_type: 'widget', content: vote }, 400, err('message_id is not an integer')],
      [{ message_id: 1.5, msg_type: 'widget', content: vote }, 400, err('message_id is not an integer')],
      [{ message_id: poll, msg_type: 'widget', content: 'x'.repeat(10_001) }, 400, err('content is too long (limit: 10000 characters)')],
      [{ message_id: poll, msg_type: 'w'.repeat(101), content: vote }, 400, err('msg_type is too long (limit: 100 characters)')],
    ];
    for (const [params, status, body] of cases) {
      const res = await t.api(u, 'POST', '/submessage', params);
      assert.deepEqual({ status: res.status, body: res.body }, { status, body }, JSON.stringify(params).slice(0, 80));
    }
    // Within the bounds: the longest content is taken.
    const long = JSON.stringify({ type: 'new_option', idx: 5, option: 'o'.repeat(10_000 - 41) });
    assert.equal(long.length, 10_000);
    await ok(u, poll, JSON.parse(long));
  });

  it(`refuses more than ${MAX_SUBMESSAGES_PER_MESSAGE} submessages on one message`, async () => {
    const { owner, hamlet } = t.users;
    const id = await sendToChannel(t, owner, channel, 'full', '/poll Busy?\nyes');
    const insert = t.app.db.prepare("INSERT INTO submessage (message_id, sender_id, msg_type, content) VALUES (?, ?, 'widget', '{}')");
    t.app.db.transaction(() => {
      for (let i = 1; i < MAX_SUBMESSAGES_PER_MESSAGE; i++) insert.run(id, hamlet.id);
    })();
    await refused(hamlet, id, { type: 'vote', key: 'canned,0', vote: 1 }, `This message has too many submessages (limit: ${MAX_SUBMESSAGES_PER_MESSAGE})`);
    assert.equal(submessageRows(id).length, MAX_SUBMESSAGES_PER_MESSAGE);
  });

  // Security review of issue 15: with only the count bounded, 10,000 submessages of 10,000 characters
  // made one message object 100 MB, sent with every fetch of the message by anyone able to vote.
  it(`refuses submessages past ${MAX_SUBMESSAGES_TOTAL_LENGTH} characters on one message; honest polls stay well within`, async () => {
    const { owner, hamlet } = t.users;
    // The most votes a message may hold, each as long as a vote on the 1000th option, fit.
    const vote = JSON.stringify({ type: 'vote', key: `${hamlet.id},999`, vote: -1 });
    assert.ok(MAX_SUBMESSAGES_PER_MESSAGE * vote.length < MAX_SUBMESSAGES_TOTAL_LENGTH / 2);
    const id = await sendToChannel(t, owner, channel, 'heavy', '/poll Heavy?\nyes');
    const insert = t.app.db.prepare("INSERT INTO submessage (message_id, sender_id, msg_type, content) VALUES (?, ?, 'widget', ?)");
    t.app.db.transaction(() => {
      for (let i = 0; i < 99; i++) insert.run(id, hamlet.id, 'x'.repeat(10_000));
    })();
    const q = await registerQueue(t, hamlet, ['submessage']);
    const before = submessageRows(id).length;
    await refused(
      hamlet,
      id,
      { type: 'new_option', idx: 1, option: 'o'.repeat(9_950) },
      `This message's submessages are too long (limit: ${MAX_SUBMESSAGES_TOTAL_LENGTH} characters)`,
    );
    assert.equal(submessageRows(id).length, before);
    assert.deepEqual(await queuedEvents(t, hamlet, q), []);
    await ok(hamlet, id, { type: 'vote', key: 'canned,0', vote: 1 });
    assert.equal(submessageRows(id).length, before + 1);
  });

  it('a deactivated user is refused', async () => {
    const { owner, admin } = t.users;
    const id = await sendToChannel(t, owner, channel, 'deactivated', '/poll Q\nA');
    const moderator = t.users.moderator;
    const res = await t.api(admin, 'DELETE', `/users/${moderator.id}`);
    assert.equal(res.status, 200, res.text);
    const r = await submit(moderator, id, { type: 'vote', key: 'canned,0', vote: 1 });
    assert.deepEqual({ status: r.status, body: r.body }, { status: 401, body: err('Account is deactivated', 'USER_DEACTIVATED') });
    assert.equal(submessageRows(id).length, 1);
  });
});
