// Time and clocks: scheduled messages, invitations and web sessions across a restart (the server is
// stopped and a new one started on the same data directory) and across wall-clock changes (the clock
// jumps back an hour, or forward a day), with a fake clock. As in Zulip, every deadline is a wall-clock
// time stored in the database: a scheduled message's delivery time (sent at most 10 minutes late,
// otherwise failed and its sender told), an invitation's expiry date, a session's expiry date.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createApp, type App } from '../../src/app';
import { configFromEnv } from '../../src/config';
import { allRoutes } from '../../src/api';
import { startServer, type Server } from '../../src/http/server';
import { runDueScheduledMessages, startScheduledDelivery } from '../../src/actions/scheduled-messages';
import { RateLimiter } from '../../src/http/ratelimit';
import { basicAuth, encodeParams, startTestServer, TEST_USER_AGENT, type ApiResponse, type TestUser } from '../helpers/server';
import { createChannel } from '../helpers/chat';
import { queuedEvents, registerQueue } from '../helpers/events';

const T0 = 1_700_000_000;
const MINUTE = 60;
const HOUR = 3600;
const DAY = 86_400;

/** A clock the test moves, in whole seconds. */
const fakeClock = () => {
  const c = { now: T0, nowMs: () => c.now * 1000 };
  return c;
};

interface Running {
  app: App;
  server: Server;
  url: string;
  api(user: TestUser, method: string, apiPath: string, params?: Record<string, unknown>): Promise<ApiResponse>;
  stop(): Promise<void>;
}

const dirs: string[] = [];
/** Servers still running: a failed assertion must not leave one keeping the test process alive. */
const live = new Set<Running>();
after(async () => {
  for (const s of [...live]) await s.stop();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function client(app: App, server: Server): Running {
  const running: Running = {
    app,
    server,
    url: server.url,
    async api(user, method, apiPath, params = {}) {
      const encoded = encodeParams(params);
      const get = method === 'GET';
      const res = await fetch(`${server.url}/api/v1${apiPath}${get && encoded ? `?${encoded}` : ''}`, {
        method,
        headers: { authorization: basicAuth(user), 'user-agent': TEST_USER_AGENT, ...(get ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) },
        body: get ? undefined : encoded,
      });
      const text = await res.text();
      return { status: res.status, headers: res.headers, text, body: JSON.parse(text) };
    },
    async stop() {
      live.delete(running);
      app.shutdown();
      await server.close(1000);
      app.close();
    },
  };
  live.add(running);
  return running;
}

/** The seeded test server, but one that can be stopped without losing its data directory. */
async function firstStart(clock: { nowMs(): number }) {
  const t = await startTestServer({ clock });
  dirs.push(t.dataDir);
  // As `parley serve` does at every start.
  startScheduledDelivery(t.app);
  return { t, running: client(t.app, t.server) };
}

/** Starts a server on an existing data directory, as `parley serve` does after a restart. */
async function restart(dataDir: string, clock: { nowMs(): number }): Promise<Running> {
  const config = configFromEnv({});
  config.dataDir = dataDir;
  config.host = '127.0.0.1';
  config.port = 0;
  config.rateLimits = false;
  const app = createApp(config, { clock });
  const server = await startServer(app, allRoutes, config.host, 0);
  app.publicUrl = server.url;
  startScheduledDelivery(app);
  return client(app, server);
}

async function scheduled(s: Running, user: TestUser): Promise<Record<string, unknown>[]> {
  const res = await s.api(user, 'GET', '/scheduled_messages');
  assert.equal(res.status, 200, res.text);
  return res.body.scheduled_messages;
}

const messagesWith = (app: App, content: string) =>
  app.db.prepare('SELECT sender_id, date_sent FROM message WHERE content = ? ORDER BY id').all(content) as { sender_id: number; date_sent: number }[];

/** Waits (bounded) until `done` holds: the delivery timer runs on its own after a start. */
async function until(done: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200 && !(await done()); i++) await new Promise((r) => setTimeout(r, 10));
}

const LATE = 'Message could not be sent at the scheduled time.';

describe('scheduled messages across restarts and clock changes', () => {
  it('a message that fell due while the server was down goes out at start; one due long before fails and its sender is told', async () => {
    const clock = fakeClock();
    const { t, running } = await firstStart(clock);
    const { hamlet, othello } = t.users;
    const channel = await createChannel(t, hamlet, 'plans', [hamlet, othello]);
    const soon = await running.api(hamlet, 'POST', '/scheduled_messages', { type: 'stream', to: channel, topic: 'today', content: 'soon after', scheduled_delivery_timestamp: T0 + MINUTE });
    const later = await running.api(hamlet, 'POST', '/scheduled_messages', { type: 'direct', to: [othello.id], content: 'much later', scheduled_delivery_timestamp: T0 + 3 * HOUR });
    assert.equal(soon.status, 200, soon.text);
    assert.equal(later.status, 200, later.text);
    await running.stop();

    // Down for five minutes: the first is four minutes late when the server starts, and goes out.
    clock.now = T0 + 5 * MINUTE;
    let s = await restart(t.dataDir, clock);
    await until(() => messagesWith(s.app, 'soon after').length > 0);
    assert.deepEqual(messagesWith(s.app, 'soon after'), [{ sender_id: hamlet.id, date_sent: T0 + 5 * MINUTE }]);
    assert.deepEqual(
      (await scheduled(s, hamlet)).map((m) => [m.scheduled_message_id, m.failed]),
      [[later.body.scheduled_message_id, false]],
    );
    await s.stop();

    // Down for hours: the second is two hours late. As Zulip, it is not sent: it fails, and the
    // sender hears why (a direct message to themself; Zulip's Notification Bot).
    clock.now = T0 + 5 * HOUR;
    s = await restart(t.dataDir, clock);
    await until(async () => (await scheduled(s, hamlet))[0]?.failed === true);
    assert.deepEqual(await scheduled(s, hamlet), [
      {
        scheduled_message_id: later.body.scheduled_message_id,
        type: 'private',
        to: [othello.id],
        content: 'much later',
        rendered_content: '<p>much later</p>',
        scheduled_delivery_timestamp: T0 + 3 * HOUR,
        failed: true,
      },
    ]);
    assert.deepEqual(messagesWith(s.app, 'much later'), []);
    const notice = s.app.db.prepare('SELECT sender_id, content FROM message ORDER BY id DESC LIMIT 1').get() as { sender_id: number; content: string };
    assert.equal(notice.sender_id, hamlet.id);
    assert.ok(notice.content.includes(`was not sent because of the following error:\n\n> ${LATE}`), notice.content);
    // The sender may reschedule it, and then it goes out.
    const edit = await s.api(hamlet, 'PATCH', `/scheduled_messages/${later.body.scheduled_message_id}`, { scheduled_delivery_timestamp: clock.now + MINUTE });
    assert.deepEqual(edit.body, { result: 'success', msg: '' });
    clock.now += MINUTE;
    assert.deepEqual(runDueScheduledMessages(s.app), { delivered: 1, failed: 0 });
    assert.equal(messagesWith(s.app, 'much later').length, 1);
    await s.stop();

    // A further restart sends nothing twice.
    s = await restart(t.dataDir, clock);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(messagesWith(s.app, 'soon after').length, 1);
    assert.equal(messagesWith(s.app, 'much later').length, 1);
    assert.deepEqual(await scheduled(s, hamlet), []);
    await s.stop();
  });

  it('a clock moved back an hour neither sends a delivered message again nor loses a pending one', async () => {
    const clock = fakeClock();
    const { t, running } = await firstStart(clock);
    const { hamlet, othello } = t.users;
    const first = await running.api(hamlet, 'POST', '/scheduled_messages', { type: 'direct', to: [othello.id], content: 'first', scheduled_delivery_timestamp: T0 + MINUTE });
    const second = await running.api(hamlet, 'POST', '/scheduled_messages', { type: 'direct', to: [othello.id], content: 'second', scheduled_delivery_timestamp: T0 + 10 * MINUTE });
    clock.now = T0 + MINUTE;
    assert.deepEqual(runDueScheduledMessages(running.app), { delivered: 1, failed: 0 });

    clock.now = T0 + MINUTE - HOUR;
    assert.deepEqual(runDueScheduledMessages(running.app), { delivered: 0, failed: 0 });
    assert.equal(messagesWith(running.app, 'first').length, 1);
    // The pending one is still listed, with its time; the past (by the new clock) is refused for new ones.
    assert.deepEqual(
      (await scheduled(running, hamlet)).map((m) => [m.scheduled_message_id, m.scheduled_delivery_timestamp, m.failed]),
      [[second.body.scheduled_message_id, T0 + 10 * MINUTE, false]],
    );
    const past = await running.api(hamlet, 'POST', '/scheduled_messages', { type: 'direct', to: [othello.id], content: 'x', scheduled_delivery_timestamp: clock.now });
    assert.deepEqual(past.body, { result: 'error', msg: 'Scheduled delivery time must be in the future.', code: 'BAD_REQUEST' });
    await running.stop();

    // A restart with the clock still back sends nothing; the pending one goes out, once, when its time comes.
    const s = await restart(t.dataDir, clock);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(messagesWith(s.app, 'first').length, 1);
    assert.equal(messagesWith(s.app, 'second').length, 0);
    clock.now = T0 + 10 * MINUTE;
    assert.deepEqual(runDueScheduledMessages(s.app), { delivered: 1, failed: 0 });
    assert.deepEqual(runDueScheduledMessages(s.app), { delivered: 0, failed: 0 });
    assert.deepEqual(messagesWith(s.app, 'second'), [{ sender_id: hamlet.id, date_sent: T0 + 10 * MINUTE }]);
    assert.equal(first.status, 200);
    await s.stop();
  });

  it('a clock moved forward a day fails the messages it skipped over (Zulip sends none over 10 minutes late) and sends reminders', async () => {
    const clock = fakeClock();
    const { t, running } = await firstStart(clock);
    const { hamlet, othello } = t.users;
    const skipped = await running.api(hamlet, 'POST', '/scheduled_messages', { type: 'direct', to: [othello.id], content: 'skipped', scheduled_delivery_timestamp: T0 + HOUR });
    const tomorrow = await running.api(hamlet, 'POST', '/scheduled_messages', { type: 'direct', to: [othello.id], content: 'tomorrow', scheduled_delivery_timestamp: T0 + DAY + 5 * MINUTE });
    const target = await running.api(hamlet, 'POST', '/messages', { type: 'direct', to: [othello.id], content: 'remind me' });
    const reminder = await running.api(hamlet, 'POST', '/reminders', { message_id: target.body.id, scheduled_delivery_timestamp: T0 + 2 * HOUR });
    assert.equal(reminder.status, 200, reminder.text);

    clock.now = T0 + DAY;
    assert.deepEqual(runDueScheduledMessages(running.app), { delivered: 1, failed: 1 });
    assert.deepEqual(messagesWith(running.app, 'skipped'), []);
    assert.deepEqual(
      (await scheduled(running, hamlet)).map((m) => [m.scheduled_message_id, m.failed]),
      [
        [skipped.body.scheduled_message_id, true],
        [tomorrow.body.scheduled_message_id, false],
      ],
    );
    clock.now = T0 + DAY + 5 * MINUTE;
    assert.deepEqual(runDueScheduledMessages(running.app), { delivered: 1, failed: 0 });
    assert.equal(messagesWith(running.app, 'tomorrow').length, 1);
    await running.stop();
  });
});

describe('invitations and sessions across restarts and clock changes', () => {
  it('an invitation link expires at its wall-clock expiry date, across a restart and a clock moved back', async () => {
    const clock = fakeClock();
    const { t, running } = await firstStart(clock);
    const res = await running.api(t.users.admin, 'POST', '/invites', { invitee_emails: 'later@example.com', stream_ids: [], invite_expires_in_minutes: 60 });
    assert.deepEqual(res.body, { result: 'success', msg: '' });
    const { confirmation_key: key, expires } = t.app.db.prepare("SELECT confirmation_key, expires FROM invitation WHERE email = 'later@example.com'").get() as {
      confirmation_key: string;
      expires: number;
    };
    assert.equal(expires, T0 + HOUR);
    await running.stop();

    const page = async (s: Running) => (await fetch(`${s.url}/join/${key}/`)).status;
    clock.now = T0 + 59 * MINUTE;
    let s = await restart(t.dataDir, clock);
    assert.equal(await page(s), 200);
    clock.now = T0 + HOUR;
    assert.equal(await page(s), 410);
    const listed = async () => ((await s.api(t.users.admin, 'GET', '/invites')).body.invites as { email: string }[]).map((i) => i.email);
    assert.deepEqual(await listed(), []);
    // The clock moved back: the link is within its validity again, as Zulip compares expiry_date with now.
    clock.now = T0 - HOUR;
    assert.equal(await page(s), 200);
    assert.deepEqual(await listed(), ['later@example.com']);
    // A day ahead it has expired, and stays so after a restart.
    clock.now = T0 + DAY;
    await s.stop();
    s = await restart(t.dataDir, clock);
    assert.equal(await page(s), 410);
    await s.stop();
  });

  it('a web session survives a restart and ends 14 days after login by the wall clock', async () => {
    const clock = fakeClock();
    const { t, running } = await firstStart(clock);
    const login = await fetch(t.url + '/login', {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: encodeParams({ username: t.users.hamlet.email, password: t.users.hamlet.password }),
    });
    assert.equal(login.status, 303, await login.text());
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
    await running.stop();

    // The web app's own API (/json) answers the session's user, or 401 once it has ended.
    const me = async (s: Running) => {
      const r = await fetch(s.url + '/json/users/me', { headers: { cookie } });
      const body = (await r.json()) as { user_id?: number; code?: string };
      return r.status === 200 ? [200, body.user_id] : [r.status, body.code];
    };
    let s = await restart(t.dataDir, clock);
    try {
      clock.now = T0 + HOUR;
      assert.deepEqual(await me(s), [200, t.users.hamlet.id]);
      // An hour back (before the login, by the new clock): still valid.
      clock.now = T0 - HOUR;
      assert.deepEqual(await me(s), [200, t.users.hamlet.id]);
      clock.now = T0 + 14 * DAY - 1;
      assert.deepEqual(await me(s), [200, t.users.hamlet.id]);
      clock.now = T0 + 14 * DAY;
      assert.deepEqual(await me(s), [401, 'UNAUTHORIZED']);
    } finally {
      await s.stop();
    }
    // After a restart past its expiry it stays ended: a restart neither loses nor extends a session.
    clock.now = T0 + 14 * DAY + HOUR;
    s = await restart(t.dataDir, clock);
    try {
      assert.deepEqual(await me(s), [401, 'UNAUTHORIZED']);
    } finally {
      await s.stop();
    }
  });
});

describe('rate limits across clock changes', () => {
  it('a window ends when its time has elapsed, though the clock moved back an hour meanwhile', () => {
    const rl = new RateLimiter(true);
    const rules = [{ max: 2, windowMs: 30 * MINUTE * 1000 }];
    const at = (s: number) => s * 1000;
    assert.equal(rl.hit('login', rules, at(T0)).allowed, true);
    assert.equal(rl.hit('login', rules, at(T0 + MINUTE)).allowed, true);
    // The clock goes back an hour a minute later. The limiter cannot tell when the jump happened
    // between two calls: it counts it as at the last attempt, whose time becomes "a minute ago" only
    // once the clock has gone back: the attempts were 1 minute and 0 minutes before the jump.
    const refused = rl.hit('login', rules, at(T0 + 2 * MINUTE - HOUR));
    assert.deepEqual(refused, { allowed: false, limit: 2, remaining: 0, reset: T0 - 29 * MINUTE, retryAfter: 29 * MINUTE });
    assert.equal(rl.hit('login', rules, at(T0 - 29 * MINUTE) - 1).allowed, false);
    // 30 minutes after the first attempt (by elapsed time), a slot is free again, not 90.
    assert.equal(rl.hit('login', rules, at(T0 - 29 * MINUTE) + 1).allowed, true);
    // Forward a day: everything has expired.
    assert.equal(rl.hit('login', rules, at(T0 + DAY)).allowed, true);
    assert.equal(rl.hit('login', rules, at(T0 + DAY)).allowed, true);
    assert.equal(rl.hit('login', rules, at(T0 + DAY)).allowed, false);
  });
});

describe('event queues across clock changes', () => {
  it('a queue keeps working when the clock goes back an hour; a parked poll is answered across a jump of a day; an idle queue is then gone', async () => {
    const clock = fakeClock();
    const { t, running } = await firstStart(clock);
    const { hamlet, othello } = t.users;
    const q = await registerQueue(t, othello, ['message']);
    clock.now = T0 - HOUR;
    const sent = await t.api(hamlet, 'POST', '/messages', { type: 'direct', to: [othello.id], content: 'an hour back' });
    assert.equal(sent.status, 200, sent.text);
    assert.deepEqual(
      (await queuedEvents(t, othello, q)).map((e) => [e.type, e.message.id, e.message.timestamp]),
      [['message', sent.body.id, T0 - HOUR]],
    );

    // A poll parked on the queue, then the clock jumps forward a day: the next message answers it.
    const parked = t.api(othello, 'GET', '/events', { queue_id: q, last_event_id: 0 });
    await new Promise((r) => setTimeout(r, 50));
    clock.now = T0 + DAY;
    const next = await t.api(hamlet, 'POST', '/messages', { type: 'direct', to: [othello.id], content: 'a day later' });
    const answer = await parked;
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(
      answer.body.events.map((e: { type: string; message: { id: number } }) => [e.type, e.message.id]),
      [['message', next.body.id]],
    );
    // Left idle past its lifespan (10 minutes) by the clock, it is gone, as after Zulip's collection;
    // the client registers again.
    clock.now += 11 * MINUTE;
    const gone = await t.api(othello, 'GET', '/events', { queue_id: q, last_event_id: 1, dont_block: true });
    assert.equal(gone.status, 400);
    assert.deepEqual(gone.body, { result: 'error', msg: `Bad event queue ID: ${q}`, code: 'BAD_EVENT_QUEUE_ID', queue_id: q });
    assert.deepEqual(await queuedEvents(t, othello, await registerQueue(t, othello, ['message'])), []);
    await running.stop();
  });
});
