// What zulip-terminal (zulipterminal/model.py) asks for and reads when it starts, against the demo
// organization: POST /register with its fetch_event_types, and GET /messages with
// use_first_unread_anchor, both sent the way the python client sends them (form fields, JSON values).
// Every key and type it reads must be there, or the terminal crashes before showing the channels.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApp, type App } from '../../src/app';
import { configFromEnv } from '../../src/config';
import { allRoutes } from '../../src/api';
import { startServer, type Server } from '../../src/http/server';
import { DEMO_USERS, seedDemo } from '../../src/demo';

let app: App;
let server: Server;
const alice = DEMO_USERS.find((u) => u.email === 'alice@example.com')!;

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

/** A call as the python client makes it: strings raw, everything else JSON; GET in the query string. */
async function call(method: string, path: string, params: Record<string, unknown> = {}): Promise<any> {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) form.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  const headers: Record<string, string> = { authorization: 'Basic ' + Buffer.from(`${alice.email}:${alice.apiKey}`).toString('base64') };
  let url = `${server.url}/api/v1${path}`;
  let body: string | undefined;
  if (method === 'GET') url += `?${form}`;
  else {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = form.toString();
  }
  const res = await fetch(url, { method, headers, body });
  const json: any = await res.json();
  assert.equal(json.result, 'success', `${method} ${path}: ${JSON.stringify(json)}`);
  return json;
}

const types = {
  string: (v: unknown) => typeof v === 'string',
  int: (v: unknown) => Number.isInteger(v),
  bool: (v: unknown) => typeof v === 'boolean',
  array: (v: unknown) => Array.isArray(v),
  object: (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v),
  intOrNull: (v: unknown) => v === null || Number.isInteger(v),
  boolOrNull: (v: unknown) => v === null || typeof v === 'boolean',
};
type Kind = keyof typeof types;

function expectKeys(obj: any, spec: Record<string, Kind>, where: string): void {
  for (const [key, kind] of Object.entries(spec)) {
    assert.ok(obj !== null && typeof obj === 'object' && key in obj, `${where} lacks ${key}`);
    assert.ok(types[kind](obj[key]), `${where}.${key} should be ${kind}, is ${JSON.stringify(obj[key])}`);
  }
}

// Model.initial_data_to_fetch and Model.event_actions.
const FETCH_EVENT_TYPES = [
  'realm', 'presence', 'subscription', 'message', 'starred_messages', 'update_message_flags', 'muted_topics',
  'realm_user', 'realm_user_groups', 'update_global_notifications', 'update_display_settings', 'user_settings',
  'realm_emoji', 'zulip_version',
];
const EVENT_TYPES = [
  'message', 'update_message', 'reaction', 'subscription', 'typing', 'update_message_flags',
  'update_global_notifications', 'update_display_settings', 'user_settings', 'realm_emoji',
];

describe('zulip-terminal start-up against the demo', () => {
  let state: any;
  before(async () => {
    // The terminal reports presence every minute (POST /users/me/presence), once that route exists.
    if (server.router.match('POST', '/api/v1/users/me/presence').kind === 'found') {
      await call('POST', '/users/me/presence', { status: 'active', new_user_input: true });
    }
    state = await call('POST', '/register', {
      event_types: EVENT_TYPES,
      fetch_event_types: FETCH_EVENT_TYPES,
      client_gravatar: true,
      apply_markdown: true,
      narrow: [],
    });
  });

  it('POST /register has the top-level keys the model reads', () => {
    expectKeys(state, {
      queue_id: 'string',
      last_event_id: 'int',
      max_message_id: 'int',
      zulip_version: 'string',
      zulip_feature_level: 'int',
      user_id: 'int',
      email: 'string',
      full_name: 'string',
      realm_name: 'string',
      realm_message_retention_days: 'intOrNull',
      realm_users: 'array',
      realm_non_active_users: 'array',
      cross_realm_bots: 'array',
      presences: 'object',
      subscriptions: 'array',
      muted_topics: 'array',
      starred_messages: 'array',
      realm_user_groups: 'array',
      realm_emoji: 'object',
      unread_msgs: 'object',
      // twenty_four_hour_time and pm_content_in_desktop_notifications: read at the top level
      // (update_display_settings / update_global_notifications), besides user_settings.
      twenty_four_hour_time: 'bool',
      pm_content_in_desktop_notifications: 'bool',
      user_settings: 'object',
      max_stream_name_length: 'int',
      max_topic_length: 'int',
      max_message_length: 'int',
    }, 'register');
    assert.equal(state.user_id, 4);
    assert.equal(state.realm_name, 'Parley Demo');
  });

  it('user_settings has what the model reads', () => {
    expectKeys(state.user_settings, {
      send_private_typing_notifications: 'bool',
      twenty_four_hour_time: 'bool',
      pm_content_in_desktop_notifications: 'bool',
      color_scheme: 'int',
      emojiset: 'string',
    }, 'user_settings');
  });

  it('realm_users and cross_realm_bots have user_id, email, full_name (and role, is_bot, timezone, date_joined)', () => {
    assert.ok(state.realm_users.length >= 7);
    for (const u of state.realm_users) {
      expectKeys(u, { user_id: 'int', email: 'string', full_name: 'string', role: 'int', is_bot: 'bool', timezone: 'string', date_joined: 'string' }, 'realm_users[]');
    }
    for (const b of state.cross_realm_bots) expectKeys(b, { user_id: 'int', email: 'string', full_name: 'string' }, 'cross_realm_bots[]');
    const bot = state.realm_users.find((u: any) => u.is_bot);
    expectKeys(bot, { bot_type: 'int', bot_owner_id: 'int' }, 'bot');
  });

  it('presences is the legacy shape: by email, then by client, each with status and timestamp', () => {
    for (const [email, clients] of Object.entries<any>(state.presences)) {
      assert.match(email, /@/);
      for (const [client, p] of Object.entries<any>(clients)) {
        if (client === 'aggregated') expectKeys(p, { timestamp: 'int' }, `presences.${email}.aggregated`);
        else expectKeys(p, { status: 'string', timestamp: 'int' }, `presences.${email}.${client}`);
      }
    }
  });

  it('subscriptions have what the stream list shows, with colors as #rrggbb', () => {
    const names = state.subscriptions.map((s: any) => s.name).sort();
    assert.deepEqual(names, ['bot-testing', 'general', 'random']);
    for (const s of state.subscriptions) {
      expectKeys(s, {
        stream_id: 'int',
        name: 'string',
        color: 'string',
        description: 'string',
        invite_only: 'bool',
        is_web_public: 'bool',
        pin_to_top: 'bool',
        in_home_view: 'bool',
        desktop_notifications: 'boolOrNull', // null: the user's default (the terminal tests truthiness)
        date_created: 'int',
        message_retention_days: 'intOrNull',
      }, `subscriptions[${s.name}]`);
      assert.match(s.color, /^#[0-9a-fA-F]{6}$/);
    }
  });

  it('muted_topics are [channel, topic, date_muted] triples; realm_user_groups have id, name, members', () => {
    for (const m of state.muted_topics) assert.equal(m.length, 3);
    for (const g of state.realm_user_groups) expectKeys(g, { id: 'int', name: 'string', members: 'array', description: 'string' }, 'realm_user_groups[]');
  });

  it('unread_msgs has pms, streams, huddles and mentions', () => {
    expectKeys(state.unread_msgs, { pms: 'array', streams: 'array', huddles: 'array', mentions: 'array', count: 'int' }, 'unread_msgs');
    for (const s of state.unread_msgs.streams) expectKeys(s, { stream_id: 'int', topic: 'string', unread_message_ids: 'array' }, 'unread_msgs.streams[]');
    for (const p of state.unread_msgs.pms) expectKeys(p, { other_user_id: 'int', unread_message_ids: 'array' }, 'unread_msgs.pms[]');
    assert.ok(state.unread_msgs.count > 0, 'alice has unread demo messages');
  });

  it('with include_subscribers, subscriptions list their subscribers', async () => {
    const withSubs = await call('POST', '/register', { event_types: EVENT_TYPES, fetch_event_types: ['subscription'], include_subscribers: true });
    for (const s of withSubs.subscriptions) {
      assert.ok(Array.isArray(s.subscribers) && s.subscribers.includes(4), `${s.name} subscribers`);
    }
  });

  it('GET /messages with use_first_unread_anchor returns anchor, found_newest and messages it can index', async () => {
    const res = await call('GET', '/messages', {
      anchor: 0,
      num_before: 30,
      num_after: 10,
      apply_markdown: true,
      use_first_unread_anchor: true,
      client_gravatar: true,
      narrow: '[]',
    });
    expectKeys(res, { anchor: 'int', found_newest: 'bool', found_oldest: 'bool', messages: 'array' }, 'GET /messages');
    assert.ok(res.messages.length > 0);
    for (const m of res.messages) {
      expectKeys(m, {
        id: 'int', sender_id: 'int', sender_full_name: 'string', sender_email: 'string', timestamp: 'int', content: 'string',
        type: 'string', subject: 'string', flags: 'array', reactions: 'array', topic_links: 'array',
      }, `message ${m.id}`);
      if (m.type === 'stream') expectKeys(m, { stream_id: 'int', display_recipient: 'string' }, `message ${m.id}`);
      else for (const r of m.display_recipient) expectKeys(r, { id: 'int', email: 'string', full_name: 'string' }, 'display_recipient[]');
    }
  });

  it('GET /users/me/{stream_id}/topics lists topic names (the topic view)', async () => {
    const general = state.subscriptions.find((s: any) => s.name === 'general');
    const res = await call('GET', `/users/me/${general.stream_id}/topics`);
    assert.deepEqual(res.topics.map((t: any) => t.name), ['welcome']);
  });
});
