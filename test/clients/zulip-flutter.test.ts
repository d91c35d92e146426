// What the Zulip mobile app (zulip-flutter, lib/api/route/*.dart and model/initial_snapshot.dart)
// asks for in a session, against the demo organization, sent the way it sends them: sign-in with a
// password, /register with its parameters and capabilities, the standard emoji data, the organization
// icon, the first page of messages, a send with local echo, a reaction, a poll vote,
// marking read, the event queue, its device's push registration and the logout. Every request must
// succeed and every field the app's models require must be there with its type: a missing one makes
// the app fail to load the account, and a 404 on the emoji data makes it retry forever.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApp, type App } from '../../src/app';
import { configFromEnv } from '../../src/config';
import { allRoutes } from '../../src/api';
import { startServer, type Server } from '../../src/http/server';
import { DEMO_PASSWORD, DEMO_USERS, seedDemo } from '../../src/demo';

let app: App;
let server: Server;
const alice = DEMO_USERS.find((u) => u.email === 'alice@example.com')!;
const bob = DEMO_USERS.find((u) => u.email === 'bob@example.com')!;
// The app's User-Agent: Parley reads it as a mobile client (read_by_sender, client name).
const UA = 'ZulipFlutter/30.0.262 (Android 14)';

before(async () => {
  const config = configFromEnv({});
  config.dataDir = ':memory:';
  config.rateLimits = false;
  app = createApp(config);
  seedDemo(app);
  server = await startServer(app, allRoutes, '127.0.0.1', 0);
  app.publicUrl = server.url;
});
after(async () => {
  app.shutdown();
  await server.close(1000);
  app.close();
});

/** A call as the app's ApiConnection makes it: form fields, JSON-encoded values; GET in the query. */
async function call(who: { email: string; apiKey: string } | null, method: string, path: string, params: Record<string, unknown> = {}): Promise<any> {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) form.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  const headers: Record<string, string> = { 'user-agent': UA };
  if (who) headers.authorization = 'Basic ' + Buffer.from(`${who.email}:${who.apiKey}`).toString('base64');
  let url = `${server.url}/api/v1${path}`;
  let body: string | undefined;
  if (method === 'GET') url += `?${form}`;
  else {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = form.toString();
  }
  const res = await fetch(url, { method, headers, body });
  const json: any = await res.json();
  assert.equal(res.status, 200, `${method} ${path}: ${JSON.stringify(json)}`);
  assert.equal(json.result, 'success', `${method} ${path}: ${JSON.stringify(json)}`);
  return json;
}

const isInt = (x: unknown) => Number.isInteger(x);
const isStr = (x: unknown) => typeof x === 'string';
const isBool = (x: unknown) => typeof x === 'boolean';
const isList = (x: unknown) => Array.isArray(x);
const isMap = (x: unknown) => x !== null && typeof x === 'object' && !Array.isArray(x);

/** Every field InitialSnapshot.fromJson requires (nullable ones may be null, never absent). */
const SNAPSHOT: Record<string, (x: any) => boolean> = {
  queue_id: isStr,
  last_event_id: isInt,
  zulip_feature_level: isInt,
  zulip_version: isStr,
  zulip_merge_base: isStr,
  alert_words: isList,
  custom_profile_fields: isList,
  server_presence_ping_interval_seconds: isInt,
  server_presence_offline_threshold_seconds: isInt,
  server_typing_started_expiry_period_milliseconds: isInt,
  server_typing_stopped_wait_period_milliseconds: isInt,
  server_typing_started_wait_period_milliseconds: isInt,
  muted_users: isList,
  presences: isMap,
  realm_emoji: isMap,
  realm_user_groups: isList,
  recent_private_conversations: isList,
  saved_snippets: isList,
  subscriptions: isList,
  unread_msgs: (u) => isInt(u.count) && isList(u.pms) && isList(u.streams) && isList(u.huddles) && isList(u.mentions) && isBool(u.old_unreads_missing),
  streams: isList,
  user_status: isMap,
  user_settings: (s) => isBool(s.twenty_four_hour_time) && isBool(s.display_emoji_reaction_users) && isStr(s.emojiset) && isBool(s.presence_enabled),
  user_topics: isList,
  realm_wildcard_mention_policy: (x) => [1, 2, 3, 5, 6, 7].includes(x),
  realm_mandatory_topics: isBool,
  realm_waiting_period_threshold: isInt,
  realm_allow_message_editing: isBool,
  realm_message_content_edit_limit_seconds: (x) => x === null || isInt(x),
  realm_presence_disabled: isBool,
  realm_default_external_accounts: isMap,
  max_file_upload_size_mib: isInt,
  server_emoji_data_url: isStr,
  realm_empty_topic_display_name: isStr,
  realm_users: isList,
  realm_non_active_users: isList,
  cross_realm_bots: isList,
  // Not required by the model, but read by the app: the devices it registered (Zulip 12), the icon.
  devices: isMap,
  realm_icon_url: isStr,
  realm_moderation_request_channel_id: isInt,
};

describe('the Zulip mobile app (zulip-flutter) session', () => {
  it('signs in, loads the account, shows messages, sends, reacts, votes, reads, hears events and logs out', async () => {
    // 1. The login screen: server settings without credentials, then a password sign-in.
    const settings = await call(null, 'GET', '/server_settings');
    assert.ok(settings.zulip_feature_level >= 277, 'the app refuses servers below feature level 277');
    assert.equal(settings.realm_web_public_access_enabled, false);
    const key = await call(null, 'POST', '/fetch_api_key', { username: alice.email, password: DEMO_PASSWORD });
    assert.equal(key.api_key, alice.apiKey);
    const me = { email: alice.email, apiKey: key.api_key };

    // 2. registerQueue, with the app's parameters (lib/api/route/events.dart).
    const snap = await call(me, 'POST', '/register', {
      idle_queue_timeout: 'mobile',
      apply_markdown: true,
      client_gravatar: false,
      slim_presence: true,
      client_capabilities: {
        notification_settings_null: true,
        bulk_message_deletion: true,
        user_avatar_url_field_optional: true,
        stream_typing_notifications: true,
        user_settings_object: true,
        include_deactivated_groups: true,
        empty_topic_name: true,
        individual_emoji_changes: true,
      },
    });
    const bad = Object.entries(SNAPSHOT).filter(([k, ok]) => !(k in snap) || !ok(snap[k])).map(([k]) => `${k}: ${JSON.stringify(snap[k])}`);
    assert.deepEqual(bad, [], 'fields the app requires');
    assert.equal(snap.idle_queue_timeout_secs, 12 * 3600);
    for (const u of [...snap.realm_users, ...snap.cross_realm_bots]) {
      assert.ok(isInt(u.user_id) && isStr(u.email) && isStr(u.full_name) && isStr(u.avatar_url) && isBool(u.is_bot), JSON.stringify(u));
    }
    assert.ok(snap.cross_realm_bots.every((b: any) => b.is_system_bot === true));
    assert.ok(!snap.realm_users.some((u: any) => u.is_system_bot), 'system bots are not the organization\'s users');

    // 3. The standard emoji data (no credentials), the organization icon and an avatar: images.
    const emoji = await fetch(snap.server_emoji_data_url, { headers: { 'user-agent': UA } });
    assert.equal(emoji.status, 200);
    const codeToNames = (await emoji.json()).code_to_names;
    assert.deepEqual(codeToNames['1f44d'].slice(0, 1), ['+1']);
    const img = await fetch(new URL(snap.realm_icon_url, server.url), { headers: { 'user-agent': UA } });
    assert.equal(img.status, 200);
    assert.match(img.headers.get('content-type') ?? '', /^image\//);
    await img.arrayBuffer();
    // Without an upload, avatars are Gravatar's (as in Zulip; not reachable from these machines).
    assert.match(snap.realm_users.find((u: any) => u.user_id === 5).avatar_url, /^https:\/\/secure\.gravatar\.com\/avatar\//);

    // 4. The first page of the combined feed, as MessageListView fetches it.
    const page = await call(me, 'GET', '/messages', {
      anchor: 'newest', num_before: 100, num_after: 0, narrow: [], apply_markdown: true, client_gravatar: false, allow_empty_topic_name: true,
    });
    assert.ok(page.messages.length > 0);
    for (const m of page.messages) {
      assert.ok(isInt(m.id) && isStr(m.content) && isStr(m.content_type) && isList(m.reactions) && isList(m.submessages) && isList(m.flags), JSON.stringify(m));
    }

    // 5. Sending with local echo, a poll, a reaction, a vote, and the events that tell the app.
    const general = snap.streams.find((s: any) => s.name === 'general').stream_id;
    const sent = await call(me, 'POST', '/messages', { type: 'stream', to: general, topic: 'mobile', content: 'from the phone', queue_id: snap.queue_id, local_id: '1' });
    const poll = (await call({ email: bob.email, apiKey: bob.apiKey }, 'POST', '/messages', { type: 'stream', to: general, topic: 'mobile', content: '/poll Lunch?\nPizza\nSoup' })).id;
    await call(me, 'POST', `/messages/${sent.id}/reactions`, { emoji_name: '+1', emoji_code: '1f44d', reaction_type: 'unicode_emoji' });
    await call(me, 'POST', '/submessage', { message_id: poll, msg_type: 'widget', content: JSON.stringify({ type: 'vote', key: 'canned,0', vote: 1 }) });
    await call(me, 'POST', '/messages/flags', { messages: [sent.id, poll], op: 'add', flag: 'read' });
    const events = (await call(me, 'GET', '/events', { queue_id: snap.queue_id, last_event_id: snap.last_event_id, dont_block: true })).events;
    const kinds = events.map((e: any) => (e.op ? `${e.type}:${e.op}` : e.type));
    for (const k of ['message', 'reaction:add', 'submessage', 'update_message_flags:add']) assert.ok(kinds.includes(k), `${k} in ${kinds}`);
    const echo = events.find((e: any) => e.type === 'message' && e.message.id === sent.id);
    assert.equal(echo.local_message_id, '1');
    const pollEvent = events.find((e: any) => e.type === 'message' && e.message.id === poll);
    assert.equal(pollEvent.message.submessages.length, 1);

    // 6. Notifications: the device, its E2EE registration, and logout removing it.
    const device = (await call(me, 'POST', '/register_client_device')).device_id;
    assert.ok(isInt(device));
    const again = await call(me, 'POST', '/register', { fetch_event_types: ['device'] });
    assert.ok(String(device) in again.devices);
    await call(me, 'POST', '/remove_client_device', { device_id: device });
    assert.deepEqual((await call(me, 'POST', '/register', { fetch_event_types: ['device'] })).devices, {});
  });
});
