// Outgoing-webhook bots against a real bot server on 127.0.0.1 (test/helpers/bot-server.ts): the
// payload Zulip sends, the reply posted back, the triggers, and every way the bot server can fail.
// The tests allow private addresses (the bot server is on loopback) except where the refusal is tested.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { webhookQueue } from '../../src/actions/outgoing-webhooks';
import { recorderFromEnv } from '../../src/http/record';
import { isForbiddenAddress, outboundPost } from '../../src/lib/outbound-http';
import { startBotServer, type TestBotServer } from '../helpers/bot-server';
import { createChannel, err, SUCCESS } from '../helpers/chat';
import { registerQueue, queuedEvents } from '../helpers/events';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';

let t: TestServer;
let hook: TestBotServer;
let channelId: number;
let hooky: { id: number; email: string; apiKey: string; token: string };
const TIMEOUT_MS = 400;
const MAX_RESPONSE_BYTES = 4096;

async function createOutgoingBot(owner: TestUser, fullName: string, shortName: string, url: string, iface = 1) {
  const res = await t.api(owner, 'POST', '/bots', { full_name: fullName, short_name: shortName, bot_type: 3, payload_url: url, interface_type: iface });
  assert.equal(res.status, 200, res.text);
  const reg = await t.api(owner, 'POST', '/register', { fetch_event_types: ['realm_bot'] });
  const entry = reg.body.realm_bots.find((b: { user_id: number }) => b.user_id === res.body.user_id);
  assert.deepEqual(entry.services, [{ base_url: url, interface: iface, token: entry.services[0].token }]);
  assert.match(entry.services[0].token, /^[A-Za-z0-9]{32}$/);
  return { id: res.body.user_id as number, email: entry.email as string, apiKey: res.body.api_key as string, token: entry.services[0].token as string };
}

/** Waits until no delivery is waiting, retrying or running. */
async function idle(): Promise<void> {
  const q = webhookQueue(t.app);
  const end = Date.now() + 20_000;
  while (q.pending > 0) {
    if (Date.now() > end) throw new Error('outgoing webhooks still pending');
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function send(user: TestUser, to: Record<string, unknown>, content: string): Promise<number> {
  const res = await t.api(user, 'POST', '/messages', { ...to, content });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.result, 'success');
  return res.body.id;
}
const inTopic = (topic: string) => ({ type: 'channel', to: channelId, topic });

/** Raw contents of the messages `viewer` sees in the narrow, oldest first, with their senders. */
async function contents(viewer: TestUser, narrow: unknown[]): Promise<{ sender: number; content: string }[]> {
  const res = await t.api(viewer, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 1000, apply_markdown: false, allow_empty_topic_name: true, narrow });
  assert.equal(res.status, 200, res.text);
  return res.body.messages.map((m: { sender_id: number; content: string }) => ({ sender: m.sender_id, content: m.content }));
}
const topicNarrow = (topic: string) => [
  { operator: 'channel', operand: channelId },
  { operator: 'topic', operand: topic },
];
/** The direct messages between Hamlet (the bots' owner) and `botId`. */
const ownerNotices = async (botId: number) => (await contents(t.users.hamlet, [{ operator: 'dm', operand: [botId] }])).map((m) => m.content);
const linkTo = (topic: string, id: number) => `${t.url}/#narrow/channel/${channelId}-bot-room/topic/${topic}/near/${id}`;

before(async () => {
  t = await startTestServer({
    configure: (c) => {
      c.outgoingWebhooks = { ...c.outgoingWebhooks, allowPrivate: true, timeoutMs: TIMEOUT_MS, retryBaseMs: 5, maxResponseBytes: MAX_RESPONSE_BYTES };
    },
  });
  hook = await startBotServer();
  hooky = await createOutgoingBot(t.users.hamlet, 'Hooky', 'hooky', hook.url);
  channelId = await createChannel(t, t.users.hamlet, 'bot-room', [t.users.hamlet, t.users.othello]);
});
after(async () => {
  await t.close();
  await hook.close();
  // The payloads go to the conformance check as what Zulip documents them as: the "response" of its
  // pseudo-endpoint POST /zulip-outgoing-webhook (scripts/check-conformance.mjs).
  const record = recorderFromEnv();
  for (const r of hook.requests) {
    if (record && r.headers['content-type'] === 'application/json') record('POST', '/api/v1/zulip-outgoing-webhook', 200, r.text);
  }
});

describe('outgoing webhooks: payload and reply', () => {
  it('POSTs Zulip\'s payload for a mention and posts the answer in the same topic, after the send has answered', async () => {
    const o = t.users.othello;
    const q = await registerQueue(t, o, ['message']);
    hook.answerWith({ hold: true });
    const before = hook.requests.length;
    const id = await send(o, inTopic('ping'), '@**Hooky** ping');
    // The send has answered while the bot server still holds its answer.
    const [req] = (await hook.waitForRequests(before + 1)).slice(before);
    assert.deepEqual(await contents(o, topicNarrow('ping')), [{ sender: o.id, content: '@**Hooky** ping' }]);
    const fetched = (await t.api(o, 'GET', '/messages', { message_ids: [id], apply_markdown: true, client_gravatar: false })).body.messages[0];
    assert.match(fetched.avatar_url, /^https:/);
    assert.equal(req.path, '/hook');
    assert.equal(req.headers['content-type'], 'application/json');
    assert.match(req.headers['user-agent'] as string, /^ZulipOutgoingWebhook\//);
    assert.deepEqual(JSON.parse(req.text), {
      data: '@**Hooky** ping',
      message: {
        id,
        sender_id: o.id,
        content: '@**Hooky** ping',
        recipient_id: fetched.recipient_id,
        timestamp: fetched.timestamp,
        client: fetched.client,
        subject: 'ping',
        topic_links: [],
        is_me_message: false,
        reactions: [],
        submessages: [],
        sender_full_name: 'Othello',
        sender_email: o.email,
        sender_realm_str: fetched.sender_realm_str,
        avatar_url: fetched.avatar_url,
        content_type: 'text/x-markdown',
        type: 'stream',
        stream_id: channelId,
        display_recipient: 'bot-room',
        rendered_content: `<p><span class="user-mention" data-user-id="${hooky.id}">@Hooky</span> ping</p>`,
      },
      bot_email: hooky.email,
      bot_full_name: 'Hooky',
      token: hooky.token,
      trigger: 'mention',
    });
    hook.release(200, JSON.stringify({ content: 'pong' }));
    await idle();
    assert.deepEqual(await contents(o, topicNarrow('ping')), [
      { sender: o.id, content: '@**Hooky** ping' },
      { sender: hooky.id, content: 'pong' },
    ]);
    const events = (await queuedEvents(t, o, q)).filter((e) => e.message.sender_id === hooky.id);
    assert.equal(events.length, 1);
    // The queue was registered without apply_markdown: raw Markdown in the event.
    const reply = (await t.api(o, 'GET', '/messages', { message_ids: [events[0].message.id], apply_markdown: false })).body.messages[0];
    const { flags, ...replyMessage } = reply;
    assert.deepEqual(flags, []);
    assert.deepEqual(events[0], { type: 'message', message: replyMessage, flags: [] });
    assert.equal(reply.client, 'OutgoingWebhookResponse');
    assert.equal(reply.content, 'pong');
    assert.equal(reply.sender_id, hooky.id);
    assert.equal(reply.subject, 'ping');
    assert.equal(reply.display_recipient, 'bot-room');
  });

  it('posts nothing for response_not_required, an empty content or no content; str() of other values', async () => {
    const o = t.users.othello;
    const answers: [unknown, string | null][] = [
      [{ response_not_required: true }, null],
      [{ response_not_required: true, content: 'ignored' }, null],
      [{ content: '   ' }, null],
      [{}, null],
      ['', null],
      [{ response_string: 'old style' }, 'old style'],
      [{ content: 5 }, '5'],
      [{ content: null }, 'None'],
      [{ content: ['a', 1, true, { k: null }] }, "['a', 1, True, {'k': None}]"],
      [{ content: 'with a widget', widget_content: { widget_type: 'zform' } }, 'with a widget'],
    ];
    for (const [i, [answer]] of answers.entries()) {
      hook.answerWith({ body: JSON.stringify(answer) });
      await send(o, inTopic('answers'), `@**Hooky** ${i}`);
      await idle();
    }
    const posted = (await contents(o, topicNarrow('answers'))).filter((m) => m.sender === hooky.id).map((m) => m.content);
    assert.deepEqual(posted, answers.map(([, want]) => want).filter((w) => w !== null));
  });

  it('is triggered by a direct message and answers in the same conversation', async () => {
    const o = t.users.othello;
    const before = hook.requests.length;
    hook.answerWith({ body: JSON.stringify({ content: 'hello back' }) });
    const id = await send(o, { type: 'direct', to: [hooky.id] }, 'hello bot');
    await idle();
    const [req] = hook.requests.slice(before);
    const body = JSON.parse(req.text);
    assert.equal(body.trigger, 'direct_message');
    assert.equal(body.data, 'hello bot');
    assert.equal(body.message.id, id);
    assert.equal(body.message.type, 'private');
    assert.deepEqual(
      body.message.display_recipient.map((r: { id: number }) => r.id),
      [o.id, hooky.id].sort((a, b) => a - b),
    );
    assert.deepEqual(await contents(o, [{ operator: 'dm', operand: [hooky.id] }]), [
      { sender: o.id, content: 'hello bot' },
      { sender: hooky.id, content: 'hello back' },
    ]);
  });

  it('speaks the Slack interface (form fields) in channels, and refuses direct messages there', async () => {
    const o = t.users.othello;
    const slacky = await createOutgoingBot(t.users.hamlet, 'Slacky', 'slacky', hook.url, 2);
    const before = hook.requests.length;
    hook.answerWith({ body: JSON.stringify({ text: 'from slack' }) });
    const id = await send(o, inTopic('slack'), '@**Slacky** go');
    await idle();
    const [req] = hook.requests.slice(before);
    const fetched = (await t.api(o, 'GET', '/messages', { message_ids: [id] })).body.messages[0];
    assert.equal(req.headers['content-type'], 'application/x-www-form-urlencoded');
    assert.deepEqual(Object.fromEntries(new URLSearchParams(req.text)), {
      token: slacky.token,
      team_id: `T${t.app.realmId()}`,
      team_domain: new URL(t.url).host,
      channel_id: `C${channelId}`,
      channel_name: 'bot-room',
      thread_ts: String(fetched.timestamp),
      timestamp: String(fetched.timestamp),
      user_id: `U${o.id}`,
      user_name: 'Othello',
      text: '@**Slacky** go',
      trigger_word: 'mention',
      service_id: String(slacky.id),
    });
    assert.deepEqual((await contents(o, topicNarrow('slack'))).at(-1), { sender: slacky.id, content: 'from slack' });
    await send(o, { type: 'direct', to: [slacky.id] }, 'psst');
    await idle();
    assert.equal(hook.requests.length, before + 1);
    assert.deepEqual((await contents(o, [{ operator: 'dm', operand: [slacky.id] }])).at(-1), {
      sender: slacky.id,
      content: "Failure! Slack outgoing webhooks don't support direct messages.",
    });
  });
});

describe('outgoing webhooks: who triggers them', () => {
  it("is not triggered by bots' messages, silent mentions, deactivated bots or channels the bot may not read", async () => {
    const before = hook.requests.length;
    const helper = t.users.bot; // a generic bot
    await send(helper, inTopic('quiet'), '@**Hooky** from a bot');
    await send({ ...t.users.hamlet, email: hooky.email, apiKey: hooky.apiKey }, inTopic('quiet'), '@**Hooky** myself');
    await send(t.users.othello, inTopic('quiet'), '@_**Hooky** silently');
    await send(t.users.othello, inTopic('quiet'), '`@**Hooky**` in code');
    const secret = await createChannel(t, t.users.othello, 'secret-room', [t.users.othello], { invite_only: true });
    await send(t.users.othello, { type: 'channel', to: secret, topic: 'x' }, '@**Hooky** secret');
    const sleepy = await createOutgoingBot(t.users.hamlet, 'Sleepy', 'sleepy', hook.url);
    assert.deepEqual((await t.api(t.users.hamlet, 'DELETE', `/bots/${sleepy.id}`)).body, SUCCESS);
    await send(t.users.othello, inTopic('quiet'), '@**Sleepy** wake up');
    await idle();
    assert.equal(hook.requests.length, before);
    // A mention a human writes still triggers (the queue is not stuck).
    await send(t.users.othello, inTopic('quiet'), '@**Hooky** now');
    await idle();
    assert.equal(hook.requests.length, before + 1);
    assert.equal(JSON.parse(hook.requests[before].text).data, '@**Hooky** now');
  });

  it('a bot made, deactivated or reactivated after earlier mentions counts from the next send (the bot list kept in memory is read again)', async () => {
    const before = hook.requests.length;
    // This send reads the organization's webhook bots (Hooky) into memory.
    await send(t.users.othello, inTopic('fresh'), '@**Hooky** warm up');
    await idle();
    const fresh = await createOutgoingBot(t.users.hamlet, 'Fresh', 'fresh', hook.url);
    await send(t.users.othello, inTopic('fresh'), '@**Fresh** hello');
    await idle();
    assert.deepEqual(
      hook.requests.slice(before).map((r) => JSON.parse(r.text).data),
      ['@**Hooky** warm up', '@**Fresh** hello'],
    );
    assert.deepEqual((await t.api(t.users.hamlet, 'DELETE', `/bots/${fresh.id}`)).body, SUCCESS);
    await send(t.users.othello, inTopic('fresh'), '@**Fresh** gone?');
    await idle();
    assert.equal(hook.requests.length, before + 2);
    assert.deepEqual((await t.api(t.users.owner, 'POST', `/users/${fresh.id}/reactivate`)).body, SUCCESS);
    await send(t.users.othello, inTopic('fresh'), '@**Fresh** back');
    await idle();
    assert.deepEqual(
      hook.requests.slice(before).map((r) => JSON.parse(r.text).data),
      ['@**Hooky** warm up', '@**Fresh** hello', '@**Fresh** back'],
    );
  });
});

describe('outgoing webhooks: group mentions', () => {
  it('a group mention triggers the subscribed bots among its members, as Zulip counts them mentioned', async () => {
    const h = t.users.hamlet;
    const group = await t.api(h, 'POST', '/user_groups/create', { name: 'bot-fans', description: 'd', members: [hooky.id] });
    assert.equal(group.status, 200, group.text);
    const before = hook.requests.length;
    // Not subscribed: a group mention does not reach it (a direct mention would).
    await send(t.users.othello, inTopic('groups'), '@*bot-fans* anyone?');
    await idle();
    assert.equal(hook.requests.length, before);
    const sub = await t.api(h, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'bot-room' }], principals: [hooky.id] });
    assert.equal(sub.status, 200, sub.text);
    await send(t.users.othello, inTopic('groups'), '@_*bot-fans* silently');
    await send(t.users.othello, inTopic('groups'), '@*bot-fans* now?');
    await idle();
    assert.deepEqual(
      hook.requests.slice(before).map((r) => [JSON.parse(r.text).data, JSON.parse(r.text).trigger]),
      [['@*bot-fans* now?', 'mention']],
    );
  });
});

describe('outgoing webhooks: failures', () => {
  it('an error status: "Failure!" in the conversation and the status and payload to the owner, no retry', async () => {
    const o = t.users.othello;
    const before = hook.requests.length;
    hook.answerWith({ status: 500, body: '{"msg": "it\'s down"}' });
    const id = await send(o, inTopic('t500'), '@**Hooky** status');
    await idle();
    assert.equal(hook.requests.length, before + 1);
    assert.deepEqual((await contents(o, topicNarrow('t500'))).at(-1), { sender: hooky.id, content: 'Failure! Third party responded with 500' });
    assert.equal(
      (await ownerNotices(hooky.id)).at(-1),
      `[A message](${linkTo('t500', id)}) to your bot @_**Hooky** triggered an outgoing webhook.\n` +
        'The webhook got a response with status code *500*.\n' +
        'The response contains the following payload:\n```\nb\'{"msg": "it\\\'s down"}\'\n```',
    );
  });

  it("a failed direct message's notice links to the conversation as Zulip's pm_message_url does (ids sorted, no suffix below three)", async () => {
    const o = t.users.othello;
    hook.answerWith({ status: 500, body: 'no' });
    const id = await send(o, { type: 'direct', to: [hooky.id] }, 'are you there');
    await idle();
    const ids = [o.id, hooky.id].sort((a, b) => a - b).join(',');
    assert.equal(
      (await ownerNotices(hooky.id)).at(-1),
      `[A message](${t.url}/#narrow/dm/${ids}/near/${id}) to your bot @_**Hooky** triggered an outgoing webhook.\n` +
        'The webhook got a response with status code *500*.\n' +
        "The response contains the following payload:\n```\nb'no'\n```",
    );
  });

  it('an answer that is not JSON, not an object, or that cannot be posted', async () => {
    const o = t.users.othello;
    const cases: [string, string, string][] = [
      ['not json', 'Invalid JSON in response', "'not json'"],
      ['[1, 2]', 'Invalid response format', "'[1, 2]'"],
      ['{"content": "nul \\u0000 byte"}', 'Message must not contain null bytes', `'{"content": "nul \\\\u0000 byte"}'`],
    ];
    for (const [i, [answer, error, shown]] of cases.entries()) {
      hook.answerWith({ body: answer });
      const id = await send(o, inTopic('shapes'), `@**Hooky** shape ${i}`);
      await idle();
      assert.deepEqual((await contents(o, topicNarrow('shapes'))).at(-1), { sender: hooky.id, content: `Failure! ${error}` });
      assert.equal(
        (await ownerNotices(hooky.id)).at(-1),
        `[A message](${linkTo('shapes', id)}) to your bot @_**Hooky** triggered an outgoing webhook.\n` +
          'The outgoing webhook server attempted to send a message in Zulip, but that request resulted in the following error:\n' +
          `> ${error}\nThe response contains the following payload:\n\`\`\`\n${shown}\n\`\`\``,
      );
    }
  });

  it('an answer larger than the limit is a failure, never read in full', async () => {
    const o = t.users.othello;
    hook.answerWith({ body: JSON.stringify({ content: 'x'.repeat(MAX_RESPONSE_BYTES * 4) }) });
    const id = await send(o, inTopic('huge'), '@**Hooky** huge');
    await idle();
    assert.deepEqual((await contents(o, topicNarrow('huge'))).at(-1), {
      sender: hooky.id,
      content: 'Failure! An exception of type *ResponseTooLarge* occurred for message `@**Hooky** huge`! See the Zulip server logs for more information.',
    });
    assert.equal(
      (await ownerNotices(hooky.id)).at(-1),
      `[A message](${linkTo('huge', id)}) to your bot @_**Hooky** triggered an outgoing webhook.\n` +
        `When trying to send a request to the webhook service, an exception of type ResponseTooLarge occurred:\n\`\`\`\nThe response is larger than ${MAX_RESPONSE_BYTES} bytes.\n\`\`\``,
    );
  });

  it('a bot server that does not answer in time is tried 1 + 3 times, then the owner is told', async () => {
    const o = t.users.othello;
    const before = hook.requests.length;
    hook.answerWith({ hold: true }, { hold: true }, { hold: true }, { hold: true });
    const id = await send(o, inTopic('slow'), '@**Hooky** slow');
    // The send answered at once; nothing was posted yet.
    assert.deepEqual(await contents(o, topicNarrow('slow')), [{ sender: o.id, content: '@**Hooky** slow' }]);
    await idle();
    hook.release(200, '{}');
    assert.equal(hook.requests.length, before + 4);
    assert.ok(hook.requests.slice(before).every((r) => r.text === hook.requests[before].text));
    assert.deepEqual((await contents(o, topicNarrow('slow'))).at(-1), { sender: hooky.id, content: 'Failure! Bot is unavailable' });
    assert.equal(
      (await ownerNotices(hooky.id)).at(-1),
      `[A message](${linkTo('slow', id)}) to your bot @_**Hooky** triggered an outgoing webhook.\nRequest timed out after ${TIMEOUT_MS / 1000} seconds.`,
    );
  });

  it('an unreachable bot server is tried 1 + 3 times, then the owner is told; a later answer after a retry counts', async () => {
    const o = t.users.othello;
    // A port nothing listens on.
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const downy = await createOutgoingBot(t.users.hamlet, 'Downy', 'downy', `http://127.0.0.1:${port}/`);
    const id = await send(o, inTopic('down'), '@**Downy** anyone?');
    await idle();
    assert.deepEqual((await contents(o, topicNarrow('down'))).at(-1), { sender: downy.id, content: 'Failure! Bot is unavailable' });
    assert.deepEqual(await ownerNotices(downy.id), [
      `[A message](${linkTo('down', id)}) to your bot @_**Downy** triggered an outgoing webhook.\nA connection error occurred. Is my bot server down?`,
    ]);
    // One failure, then an answer: the answer is posted and nobody is told anything.
    const before = hook.requests.length;
    hook.answerWith({ hold: true }, { body: JSON.stringify({ content: 'second time lucky' }) });
    await send(o, inTopic('flaky'), '@**Hooky** flaky');
    await idle();
    hook.release(200, '{}');
    assert.equal(hook.requests.length, before + 2);
    assert.deepEqual((await contents(o, topicNarrow('flaky'))).at(-1), { sender: hooky.id, content: 'second time lucky' });
  });

  it('refuses loopback addresses unless the operator allows them, and tells the owner', async () => {
    const o = t.users.othello;
    const before = hook.requests.length;
    t.app.config.outgoingWebhooks.allowPrivate = false;
    try {
      const id = await send(o, inTopic('private'), '@**Hooky** inside');
      await idle();
      assert.equal(hook.requests.length, before);
      assert.deepEqual((await contents(o, topicNarrow('private'))).at(-1), { sender: hooky.id, content: 'Failure! Third party responded with 407' });
      assert.equal(
        (await ownerNotices(hooky.id)).at(-1),
        `[A message](${linkTo('private', id)}) to your bot @_**Hooky** triggered an outgoing webhook.\nThe URL configured for the webhook is for a private or disallowed network.`,
      );
    } finally {
      t.app.config.outgoingWebhooks.allowPrivate = true;
    }
  });

  it('drops deliveries past the queue bound, with the rest still delivered', async () => {
    const o = t.users.othello;
    const q = webhookQueue(t.app);
    const before = hook.requests.length;
    const dropped = q.stats.dropped;
    const bound = t.app.config.outgoingWebhooks.maxPending;
    t.app.config.outgoingWebhooks.maxPending = 1;
    try {
      hook.answerWith({ hold: true });
      for (const i of [1, 2, 3]) await send(o, inTopic('flood'), `@**Hooky** flood ${i}`);
      assert.equal(q.stats.dropped, dropped + 2);
      await hook.waitForRequests(before + 1);
      hook.release(200, JSON.stringify({ content: 'only one' }));
      await idle();
    } finally {
      t.app.config.outgoingWebhooks.maxPending = bound;
    }
    assert.equal(hook.requests.length, before + 1);
    assert.deepEqual((await contents(o, topicNarrow('flood'))).map((m) => m.content), ['@**Hooky** flood 1', '@**Hooky** flood 2', '@**Hooky** flood 3', 'only one']);
  });

  it('pending deliveries do not hold a stopping server', async () => {
    const t2 = await startTestServer({ configure: (c) => (c.outgoingWebhooks = { ...c.outgoingWebhooks, allowPrivate: true }) });
    const h2 = await startBotServer();
    try {
      const res = await t2.api(t2.users.hamlet, 'POST', '/bots', { full_name: 'Held', short_name: 'held', bot_type: 3, payload_url: h2.url });
      assert.equal(res.status, 200, res.text);
      h2.answerWith({ hold: true });
      const sent = await t2.api(t2.users.othello, 'POST', '/messages', { type: 'direct', to: [res.body.user_id], content: 'hi' });
      assert.equal(sent.status, 200, sent.text);
      await h2.waitForRequests(1);
      // Closing answers although the bot server never does; the delivery is abandoned.
      await t2.close();
      const q = webhookQueue(t2.app);
      for (let i = 0; i < 1000 && q.pending > 0; i++) await new Promise((r) => setImmediate(r));
      assert.equal(q.pending, 0);
      assert.deepEqual(q.stats, { delivered: 0, retried: 0, failed: 0, dropped: 0 });
    } finally {
      await h2.close();
    }
  });
});

describe('outgoing webhooks: addresses', () => {
  it('classes loopback, link-local, unspecified and mapped addresses as forbidden', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '0.0.0.0', '169.254.169.254', '::1', '::', 'fe80::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:169.254.169.254', '255.255.255.255']) {
      assert.equal(isForbiddenAddress(a), true, a);
    }
    for (const a of ['8.8.8.8', '93.184.216.34', '2606:4700::1111']) assert.equal(isForbiddenAddress(a), false, a);
  });

  it('classes the cloud metadata services outside link-local as forbidden (AWS over IPv6, Alibaba Cloud)', () => {
    // Security review of issue 15: 169.254.169.254 was refused, but the same service is also at
    // fd00:ec2::254 on AWS (Nitro, IPv6) and at 100.100.100.200 on Alibaba Cloud; neighbours stay allowed.
    for (const a of ['fd00:ec2::254', 'FD00:EC2:0:0:0:0:0:254', '100.100.100.200', '::ffff:100.100.100.200']) assert.equal(isForbiddenAddress(a), true, a);
    for (const a of ['100.128.0.1', '8.8.4.4']) assert.equal(isForbiddenAddress(a), false, a);
  });

  it('classes private networks as forbidden: a failure notice would show their answers to a bot\'s owner', () => {
    // Review of issue 15: a member who may create bots could point one at the router's admin page and
    // read its answer in the failure notice. Allowed with outgoing_webhook_allow_private.
    for (const a of ['10.0.0.1', '172.16.5.4', '172.31.255.255', '192.168.1.1', '100.64.0.1', 'fd12:3456::1', 'fc00::1', '::ffff:192.168.1.1']) {
      assert.equal(isForbiddenAddress(a), true, a);
    }
    for (const a of ['172.32.0.1', '172.15.255.255', '192.169.0.1', '11.0.0.1']) assert.equal(isForbiddenAddress(a), false, a);
  });

  it('refuses a name that resolves to loopback, and URLs it cannot request', async () => {
    const base = { headers: {}, body: '{}', timeoutMs: 2000, maxResponseBytes: 1000, allowPrivate: false };
    const byName = await outboundPost({ ...base, url: `http://localhost:${new URL(hook.url).port}/` });
    assert.ok(byName.kind === 'refused' && ['127.0.0.1', '::1'].includes(byName.address), JSON.stringify(byName));
    assert.deepEqual(await outboundPost({ ...base, url: 'http://[::1]:9/' }), { kind: 'refused', address: '::1' });
    assert.deepEqual(await outboundPost({ ...base, url: 'http://0x7f000001/' }), { kind: 'refused', address: '127.0.0.1' });
    // Allowed, a name is resolved and connected to (the lookup hands the socket the address it checked).
    hook.answerWith({ status: 201, body: 'ok' });
    assert.deepEqual(await outboundPost({ ...base, allowPrivate: true, url: `http://localhost:${new URL(hook.url).port}/x` }), {
      kind: 'response',
      status: 201,
      body: Buffer.from('ok'),
    });
    assert.deepEqual(await outboundPost({ ...base, url: 'file:///etc/passwd' }), {
      kind: 'error',
      name: 'InvalidSchema',
      message: 'No connection adapters were found for "file:///etc/passwd"',
    });
    assert.deepEqual(await outboundPost({ ...base, url: 'not a url' }), { kind: 'error', name: 'InvalidURL', message: 'Invalid URL "not a url"' });
  });
});

describe('POST /bots and PATCH /bots/{id}: the outgoing webhook service', () => {
  const invalid = (name: string) => err(`Invalid ${name}: Value error, Not a URL`);

  it('refuses payload URLs that are not http(s) URLs or are too long', async () => {
    const post = (payload_url: unknown) => t.api(t.users.hamlet, 'POST', '/bots', { full_name: 'Bad Hook', short_name: 'badhook', bot_type: 3, payload_url });
    for (const url of ['', 'not a url', 'file:///etc/passwd', 'javascript:alert(1)', 'ftp://example.com/x', 'http://', `https://example.com/${'a'.repeat(2048)}`]) {
      const res = await post(url);
      assert.equal(res.status, 400, url);
      assert.deepEqual(res.body, invalid('payload_url'), url);
    }
    assert.equal((await t.api(t.users.hamlet, 'GET', '/bots')).body.bots.some((b: { full_name: string }) => b.full_name === 'Bad Hook'), false);
  });

  it('changes the URL and interface (JSON-encoded as Zulip\'s web app sends them) and tells the owner', async () => {
    const h = t.users.hamlet;
    const patchy = await createOutgoingBot(h, 'Patch Hook', 'patchhook', 'https://one.example.com/');
    const q = await registerQueue(t, h, ['realm_bot']);
    const res = await t.api(h, 'PATCH', `/bots/${patchy.id}`, { service_payload_url: JSON.stringify('https://two.example.com/'), service_interface: 2 });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.service_payload_url, 'https://two.example.com/');
    assert.equal(res.body.service_interface, 2);
    const services = [{ base_url: 'https://two.example.com/', interface: 2, token: patchy.token }];
    assert.deepEqual(await queuedEvents(t, h, q), [{ type: 'realm_bot', op: 'update', bot: { user_id: patchy.id, services } }]);
    for (const bad of [JSON.stringify('file:///etc/passwd'), JSON.stringify('nope'), JSON.stringify(`https://x.example.com/${'a'.repeat(2048)}`)]) {
      assert.deepEqual((await t.api(h, 'PATCH', `/bots/${patchy.id}`, { service_payload_url: bad })).body, invalid('service_payload_url'), bad);
    }
    for (const notString of ['5', 'null', '{"url": "https://x.example.com/"}', '["https://x.example.com/"]']) {
      assert.deepEqual((await t.api(h, 'PATCH', `/bots/${patchy.id}`, { service_payload_url: notString })).body, err('service_payload_url is not a string'), notString);
    }
    assert.deepEqual((await t.api(h, 'PATCH', `/bots/${patchy.id}`, { service_interface: 3 })).body, err('Invalid interface type'));
    // Only the owner and administrators; never a guest or a bot.
    assert.deepEqual((await t.api(t.users.othello, 'PATCH', `/bots/${patchy.id}`, { service_payload_url: JSON.stringify('https://evil.example.com/') })).body, err('Insufficient permission'));
    assert.deepEqual((await t.api(t.users.guest, 'PATCH', `/bots/${patchy.id}`, { service_payload_url: JSON.stringify('https://evil.example.com/') })).body, err('Not allowed for guest users'));
    assert.deepEqual((await t.api(t.users.bot, 'PATCH', `/bots/${patchy.id}`, { service_payload_url: JSON.stringify('https://evil.example.com/') })).body, err('This endpoint does not accept bot requests.'));
    let reg = await t.api(h, 'POST', '/register', { fetch_event_types: ['realm_bot'] });
    assert.deepEqual(reg.body.realm_bots.find((b: { user_id: number }) => b.user_id === patchy.id).services, services);
    // A bare URL (not JSON) is taken as it is.
    assert.equal((await t.api(h, 'PATCH', `/bots/${patchy.id}`, { service_payload_url: 'https://three.example.com/' })).body.service_payload_url, 'https://three.example.com/');
    reg = await t.api(h, 'POST', '/register', { fetch_event_types: ['realm_bot'] });
    assert.deepEqual(reg.body.realm_bots.find((b: { user_id: number }) => b.user_id === patchy.id).services, [{ ...services[0], base_url: 'https://three.example.com/' }]);
  });
});
