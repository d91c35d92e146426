import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApp, type App } from '../../src/app';
import { configFromEnv } from '../../src/config';
import { doCreateRealm } from '../../src/actions/realm';
import { EventBus } from '../../src/events/bus';
import { capabilities, type ClientCapabilities, type EventQueue, type QueueSpec } from '../../src/events/queue';
import { QueueRegistry } from '../../src/events/registry';
import { JsonableError } from '../../src/http/errors';

// The registry on its own: an in-memory app supplies the database (realm and user rows it reads);
// events go straight into app.events, and queue contents are read without HTTP.
let app: App;
let ownerId: number;
const OTHER = 999; // a user id with no row: fine for everything but legacy settings events

before(() => {
  const config = configFromEnv({});
  config.dataDir = ':memory:';
  app = createApp(config);
  ownerId = doCreateRealm(app, { name: 'Org', ownerEmail: 'owner@example.com', ownerPassword: 'secret-pw', ownerFullName: 'Owner' }).owner.userId;
  app.batch.commit();
});
after(() => app.close());

function spec(userId: number, o: Partial<Omit<QueueSpec, 'capabilities'>> & { caps?: Partial<ClientCapabilities> } = {}): QueueSpec {
  return {
    userId,
    realmId: app.realmId(),
    eventTypes: o.eventTypes ?? null,
    narrow: o.narrow ?? [],
    allPublicStreams: o.allPublicStreams ?? false,
    applyMarkdown: o.applyMarkdown ?? true,
    clientGravatar: o.clientGravatar ?? false,
    slimPresence: o.slimPresence ?? false,
    capabilities: capabilities(o.caps ?? {}),
    lifespanSeconds: o.lifespanSeconds ?? 0,
  };
}

/** A queue in the app's own registry (app.close() discards them all). */
function queue(userId: number, o: Parameters<typeof spec>[1] = {}): EventQueue {
  return app.queues.allocate(spec(userId, o));
}

/** Contents without the ids, for comparing payloads. */
const payloads = (q: EventQueue) => q.contents().map(({ id: _id, ...rest }) => rest);

const gravatar = 'https://secure.gravatar.com/avatar/abc?d=identicon&version=1';
const message = (o: Record<string, unknown> = {}) => ({
  id: 10,
  type: 'stream',
  stream_id: 3,
  display_recipient: 'Denmark',
  subject: 'castle',
  content: '<p>hi</p>',
  content_type: 'text/html',
  avatar_url: gravatar,
  sender_id: ownerId,
  sender_email: 'owner@example.com',
  ...o,
});

describe('QueueRegistry: message events', () => {
  it('gives each recipient its own flags and strips delivery keys', () => {
    const a = queue(1);
    const b = queue(2);
    app.events.send({ type: 'message', message: message(), flags_by_user: { 1: ['read'], 2: ['mentioned'] }, raw_content: 'hi' }, [1, 2]);
    assert.deepEqual(a.contents(), [{ type: 'message', message: message(), flags: ['read'], id: 0 }]);
    assert.deepEqual(b.contents(), [{ type: 'message', message: message(), flags: ['mentioned'], id: 0 }]);
  });

  it("echoes local_message_id to the sender's queue only", () => {
    const mine = queue(1);
    const other = queue(1);
    app.events.send({ type: 'message', message: message(), flags_by_user: {}, local_message_id: '1.5', sender_queue_id: mine.id }, [1]);
    assert.deepEqual(payloads(mine), [{ type: 'message', message: message(), flags: [], local_message_id: '1.5' }]);
    assert.deepEqual(payloads(other), [{ type: 'message', message: message(), flags: [] }]);
  });

  it('adapts the payload to apply_markdown, client_gravatar and empty_topic_name', () => {
    const raw = queue(1, { applyMarkdown: false, clientGravatar: true });
    const modern = queue(1, { caps: { empty_topic_name: true } });
    const m = message({ subject: '' });
    app.events.send({ type: 'message', message: m, flags_by_user: {}, raw_content: '**hi**' }, [1]);
    assert.deepEqual(payloads(raw)[0].message, { ...m, content: '**hi**', content_type: 'text/x-markdown', avatar_url: null, subject: 'general chat' });
    assert.deepEqual(payloads(modern)[0].message, m);
  });

  it('filters by the narrow, and lets narrowed or all-public queues see public channels they were not sent', () => {
    const denmark = queue(3, { narrow: [{ operator: 'channel', operand: 'Denmark' }] });
    const verona = queue(3, { narrow: [{ operator: 'channel', operand: 'Verona' }] });
    const all = queue(4, { allPublicStreams: true });
    const plain = queue(5);
    app.events.send({ type: 'message', message: message(), flags_by_user: { 1: [] }, public_stream_realm_id: app.realmId() }, [1]);
    assert.deepEqual(payloads(denmark), [{ type: 'message', message: message(), flags: [] }]);
    assert.deepEqual(payloads(verona), []);
    assert.equal(all.size, 1);
    assert.equal(plain.size, 0);
    // A private channel's message (no public_stream_realm_id) reaches recipients only.
    app.events.send({ type: 'message', message: message({ id: 11 }), flags_by_user: {} }, [1]);
    assert.equal(denmark.size, 1);
    assert.equal(all.size, 1);
  });

  it('honours event_types for messages', () => {
    const q = queue(1, { eventTypes: ['realm_user'] });
    app.events.send({ type: 'message', message: message(), flags_by_user: {} }, [1]);
    assert.equal(q.size, 0);
  });
});

describe('QueueRegistry: capability adaptations', () => {
  const presence = {
    type: 'presence',
    user_id: 7,
    email: 'x@example.com',
    server_timestamp: 1000.5,
    presence: { website: { client: 'website', status: 'active', timestamp: 1000, pushable: false } },
    presences: { '7': { active_timestamp: 1000, idle_timestamp: 1000 } },
  };

  it('sends presence as legacy, slim or modern', () => {
    const legacy = queue(1);
    const slim = queue(1, { slimPresence: true });
    const modern = queue(1, { caps: { simplified_presence_events: true } });
    app.events.send(presence, [1]);
    const { presences: _modern, ...legacyShape } = presence;
    assert.deepEqual(payloads(legacy), [legacyShape]);
    const { email: _email, ...slimShape } = legacyShape;
    assert.deepEqual(payloads(slim), [slimShape]);
    assert.deepEqual(payloads(modern), [{ type: 'presence', presences: presence.presences }]);
  });

  it('adds the legacy settings events for clients without user_settings_object', () => {
    const legacy = queue(ownerId);
    const modern = queue(ownerId, { caps: { user_settings_object: true } });
    const onlyLegacy = queue(ownerId, { eventTypes: ['update_global_notifications'] });
    app.events.send({ type: 'user_settings', op: 'update', property: 'enable_sounds', value: false }, [ownerId]);
    app.events.send({ type: 'user_settings', op: 'update', property: 'default_language', value: 'de', language_name: 'Deutsch' }, [ownerId]);
    app.events.send({ type: 'user_settings', op: 'update', property: 'send_read_receipts', value: false }, [ownerId]);
    assert.deepEqual(payloads(legacy), [
      { type: 'user_settings', op: 'update', property: 'enable_sounds', value: false },
      { type: 'update_global_notifications', user: 'owner@example.com', notification_name: 'enable_sounds', setting: false },
      { type: 'user_settings', op: 'update', property: 'default_language', value: 'de', language_name: 'Deutsch' },
      { type: 'update_display_settings', user: 'owner@example.com', setting_name: 'default_language', setting: 'de', language_name: 'Deutsch' },
      { type: 'user_settings', op: 'update', property: 'send_read_receipts', value: false },
    ]);
    assert.deepEqual(
      payloads(modern).map((e) => e.type),
      ['user_settings', 'user_settings', 'user_settings'],
    );
    assert.deepEqual(payloads(onlyLegacy), [
      { type: 'update_global_notifications', user: 'owner@example.com', notification_name: 'enable_sounds', setting: false },
    ]);
  });

  it('splits bulk message deletions for clients without bulk_message_deletion', () => {
    const old = queue(1);
    const bulk = queue(1, { caps: { bulk_message_deletion: true, empty_topic_name: true } });
    app.events.send({ type: 'delete_message', message_ids: [4, 5], message_type: 'stream', stream_id: 3, topic: '' }, [1]);
    assert.deepEqual(payloads(old), [
      { type: 'delete_message', message_type: 'stream', stream_id: 3, topic: 'general chat', message_id: 4 },
      { type: 'delete_message', message_type: 'stream', stream_id: 3, topic: 'general chat', message_id: 5 },
    ]);
    assert.deepEqual(payloads(bulk), [{ type: 'delete_message', message_ids: [4, 5], message_type: 'stream', stream_id: 3, topic: '' }]);
  });

  it('sends channel typing only to clients with stream_typing_notifications', () => {
    const old = queue(1);
    const modern = queue(1, { caps: { stream_typing_notifications: true } });
    app.events.send({ type: 'typing', op: 'start', message_type: 'stream', stream_id: 3, topic: 't', sender: { user_id: 2, email: 'b@x' } }, [1]);
    app.events.send({ type: 'typing', op: 'start', message_type: 'direct', sender: { user_id: 2, email: 'b@x' }, recipients: [] }, [1]);
    assert.deepEqual(
      payloads(old).map((e) => e.message_type),
      ['direct'],
    );
    assert.deepEqual(
      payloads(modern).map((e) => e.message_type),
      ['stream', 'direct'],
    );
  });

  it('expands flags_by_user on other events and renames empty topics', () => {
    const q = queue(1);
    app.events.send(
      { type: 'update_message', message_id: 4, subject: '', orig_subject: 'old', flags_by_user: { 1: ['read'] }, user_id: 2 },
      [1],
    );
    assert.deepEqual(payloads(q), [{ type: 'update_message', message_id: 4, subject: 'general chat', orig_subject: 'old', user_id: 2, flags: ['read'] }]);
  });

  it('keeps muted_topics from clients that asked for user_topic', () => {
    const both = queue(1, { eventTypes: ['muted_topics', 'user_topic'] });
    const legacy = queue(1, { eventTypes: ['muted_topics'] });
    app.events.send({ type: 'muted_topics', muted_topics: [] }, [1]);
    assert.equal(both.size, 0);
    assert.equal(legacy.size, 1);
  });

  it('sends group deactivation as remove or update depending on include_deactivated_groups', () => {
    const old = queue(1);
    const modern = queue(1, { caps: { include_deactivated_groups: true } });
    app.events.send({ type: 'user_group', op: 'remove', group_id: 9 }, [1]);
    app.events.send({ type: 'user_group', op: 'update', group_id: 9, data: { deactivated: true } }, [1]);
    app.events.send({ type: 'user_group', op: 'update', group_id: 9, data: { name: 'renamed' }, deactivated: true }, [1]);
    assert.deepEqual(payloads(old), [{ type: 'user_group', op: 'remove', group_id: 9 }]);
    assert.deepEqual(payloads(modern), [
      { type: 'user_group', op: 'update', group_id: 9, data: { deactivated: true } },
      { type: 'user_group', op: 'update', group_id: 9, data: { name: 'renamed' } },
    ]);
  });

  it('sends realm_linkifiers only to clients that read URL templates', () => {
    const old = queue(1);
    const modern = queue(1, { caps: { linkifier_url_template: true } });
    app.events.send({ type: 'realm_linkifiers', realm_linkifiers: [] }, [1]);
    assert.equal(old.size, 0);
    assert.equal(modern.size, 1);
  });

  it('hides inaccessible new users from user_list_incomplete clients', () => {
    const old = queue(1);
    const modern = queue(1, { caps: { user_list_incomplete: true } });
    app.events.send({ type: 'realm_user', op: 'add', person: { user_id: 50 }, inaccessible_user: true }, [1]);
    assert.deepEqual(payloads(old), [{ type: 'realm_user', op: 'add', person: { user_id: 50 } }]);
    assert.equal(modern.size, 0);
  });
});

describe('QueueRegistry: bounds and lifecycle', () => {
  const clock = { now: 1_000_000, nowMs: () => clock.now };
  const bus = new EventBus();
  let reg: QueueRegistry;
  before(() => {
    reg = new QueueRegistry({ db: app.db, events: bus, clock, config: app.config }, { maxQueuesPerUser: 2, maxBacklog: 3 });
    reg.start();
  });
  after(() => reg.stop());

  it('discards a queue whose backlog passes the limit (its next poll must re-register)', () => {
    const q = reg.allocate(spec(OTHER));
    for (let i = 0; i < 3; i++) bus.send({ type: 'x' }, [OTHER]);
    assert.equal(reg.access(OTHER, q.id).size, 3);
    bus.send({ type: 'x' }, [OTHER]);
    assert.throws(() => reg.access(OTHER, q.id), (e: unknown) => e instanceof JsonableError && e.code === 'BAD_EVENT_QUEUE_ID');
  });

  it('evicts the least recently connected idle queue, and refuses when every queue has a poll parked', async () => {
    const user = OTHER + 1;
    const a = reg.allocate(spec(user));
    clock.now += 10;
    const b = reg.allocate(spec(user));
    clock.now += 10;
    a.touch(clock.now);
    const c = reg.allocate(spec(user));
    assert.throws(() => reg.access(user, b.id));
    assert.equal(reg.access(user, a.id), a);
    const answers: string[] = [];
    a.park((events) => answers.push(events), 60_000, clock.now);
    c.park((events) => answers.push(events), 60_000, clock.now);
    assert.throws(
      () => reg.allocate(spec(user)),
      (e: unknown) => e instanceof JsonableError && e.message === 'Could not allocate event queue',
    );
    reg.remove(a);
    reg.remove(c);
    assert.deepEqual(answers, ['[]', '[]']);
  });

  it('keeps a queue with a parked poll however long it waits, and collects it once idle', () => {
    const q = reg.allocate(spec(OTHER, { lifespanSeconds: 5 }));
    q.park(() => undefined, 60_000, clock.now);
    clock.now += 10_000;
    assert.equal(reg.gc(), 0);
    q.finishPoll(clock.now);
    clock.now += 4_000;
    assert.equal(reg.gc(), 0);
    clock.now += 1_000;
    assert.equal(reg.gc(), 1);
  });

  it('caps queue_lifespan_secs at 7 days', () => {
    const q = reg.allocate(spec(OTHER, { lifespanSeconds: 30 * 24 * 3600 }));
    assert.equal(q.lifespanMs, 7 * 24 * 3600 * 1000);
    reg.remove(q);
  });

  it('answers parked polls on stop, then delivers nothing and allocates nothing', () => {
    const local = new QueueRegistry({ db: app.db, events: bus, clock, config: app.config });
    local.start();
    const q = local.allocate(spec(OTHER));
    let answered: unknown = null;
    q.park((events) => (answered = events), 60_000, clock.now);
    local.stop();
    assert.equal(answered, '[]');
    bus.send({ type: 'x' }, [OTHER]);
    assert.equal(q.size, 0);
    assert.throws(() => local.allocate(spec(OTHER)));
  });
});
