// `parley serve --demo`: a ready organization with deterministic, documented credentials (README.md,
// "Parley as a CI fixture"), and the ready file a CI job waits on. Seeding must stay tiny: the
// password hash is precomputed (no bcrypt at start-up), API keys are fixed strings, and the handful of
// channels and messages go through the ordinary actions in one transaction.
import fs from 'node:fs';
import path from 'node:path';
import type { App } from './app';
import { doCreateRealm } from './actions/realm';
import { doSubscribe } from './actions/subscriptions';
import { doCreateChannel } from './actions/streams';
import { doSendMessage } from './actions/messages';
import { doCreateUser } from './actions/users';
import { stmt } from './db/stmt';
import { BOT_TYPE, ROLE } from './lib/roles';
import { setPrerendered } from './lib/render';
import { findUserById, type UserRow } from './lib/users';

/** The password of every human demo user. */
export const DEMO_PASSWORD = 'parley-demo-password';
// bcrypt (cost 10) of DEMO_PASSWORD, computed once with bcryptjs so start-up does no hashing.
const DEMO_PASSWORD_HASH = '$2b$10$Cv0qu.AJF//5TDUajwqDGuY04mzLXx4G8ekOHDQDsuR4DUPM7BFjK';

export interface DemoUser {
  email: string;
  fullName: string;
  role: number;
  /** Fixed 32-character API key. */
  apiKey: string;
  bot?: true;
}

/** The demo users, in creation order (the owner first: user ids 1..7). */
export const DEMO_USERS: readonly DemoUser[] = [
  { email: 'owner@example.com', fullName: 'Olivia Owner', role: ROLE.OWNER, apiKey: 'demoOwnerKey00000000000000000001' },
  { email: 'admin@example.com', fullName: 'Adam Admin', role: ROLE.ADMINISTRATOR, apiKey: 'demoAdminKey00000000000000000002' },
  { email: 'moderator@example.com', fullName: 'Maya Moderator', role: ROLE.MODERATOR, apiKey: 'demoModeratorKey0000000000000003' },
  { email: 'alice@example.com', fullName: 'Alice Member', role: ROLE.MEMBER, apiKey: 'demoAliceKey00000000000000000004' },
  { email: 'bob@example.com', fullName: 'Bob Member', role: ROLE.MEMBER, apiKey: 'demoBobKey0000000000000000000005' },
  { email: 'guest@example.com', fullName: 'Gina Guest', role: ROLE.GUEST, apiKey: 'demoGuestKey00000000000000000006' },
  { email: 'demo-bot@example.com', fullName: 'Demo Bot', role: ROLE.MEMBER, apiKey: 'demoBotKey0000000000000000000007', bot: true },
];

interface DemoChannel {
  name: string;
  description: string;
  inviteOnly: boolean;
  /** Emails of the subscribers (everyone subscribed may post: no channel restricts posting). */
  subscribers: string[];
  messages: [from: string, topic: string, content: string][];
}

const EVERYONE = DEMO_USERS.map((u) => u.email);
const STAFF = ['owner@example.com', 'admin@example.com', 'moderator@example.com'];

const DEMO_CHANNELS: readonly DemoChannel[] = [
  {
    name: 'general',
    description: 'Everyone is here',
    inviteOnly: false,
    subscribers: EVERYONE,
    messages: [
      ['owner@example.com', 'welcome', 'Welcome to the **Parley demo**!'],
      ['alice@example.com', 'welcome', 'Hello everyone :wave:'],
      ['guest@example.com', 'welcome', 'Thanks for having me.'],
    ],
  },
  {
    name: 'random',
    description: 'Off-topic chatter',
    inviteOnly: false,
    subscribers: EVERYONE.filter((e) => e !== 'guest@example.com'),
    messages: [['bob@example.com', 'lunch', 'Anyone for lunch at noon?']],
  },
  {
    name: 'bot-testing',
    description: 'Where bots may talk',
    inviteOnly: false,
    subscribers: ['owner@example.com', 'alice@example.com', 'bob@example.com', 'demo-bot@example.com'],
    messages: [['demo-bot@example.com', 'status', 'Demo Bot is online.']],
  },
  {
    name: 'staff',
    description: 'Private: owners, administrators and moderators',
    inviteOnly: true,
    subscribers: STAFF,
    messages: [['admin@example.com', 'moderation', 'Nothing to report today.']],
  },
];

/** The renderer's output for every demo text (checked against the renderer by test/clients/demo-render.test.ts). */
export const DEMO_HTML: ReadonlyMap<string, string> = new Map([
  ['Welcome to the **Parley demo**!', '<p>Welcome to the <strong>Parley demo</strong>!</p>'],
  ['Hello everyone :wave:', '<p>Hello everyone <span aria-label="wave" class="emoji emoji-1f44b" role="img" title="wave">:wave:</span></p>'],
  ['Thanks for having me.', '<p>Thanks for having me.</p>'],
  ['Anyone for lunch at noon?', '<p>Anyone for lunch at noon?</p>'],
  ['Demo Bot is online.', '<p>Demo Bot is online.</p>'],
  ['Nothing to report today.', '<p>Nothing to report today.</p>'],
  ['Hi Bob, this is a direct message.', '<p>Hi Bob, this is a direct message.</p>'],
  ['Everyone is here', '<p>Everyone is here</p>'],
  ['Off-topic chatter', '<p>Off-topic chatter</p>'],
  ['Where bots may talk', '<p>Where bots may talk</p>'],
  ['Private: owners, administrators and moderators', '<p>Private: owners, administrators and moderators</p>'],
]);

/** Every text the demo seed renders (messages and channel descriptions). */
export function demoTexts(): string[] {
  return [...DEMO_CHANNELS.flatMap((c) => [c.description, ...c.messages.map((m) => m[2])]), DEMO_DM];
}

const DEMO_DM = 'Hi Bob, this is a direct message.';

/** Creates the demo organization on an empty database (one transaction, no password hashing or Markdown). */
export function seedDemo(app: App): void {
  setPrerendered(app, DEMO_HTML);
  try {
    seed(app);
  } finally {
    setPrerendered(app, null);
  }
  app.batch.commit();
}

function seed(app: App): void {
  app.batch.write(() => {
    const [ownerSpec, ...rest] = DEMO_USERS;
    const { realmId, owner } = doCreateRealm(app, {
      name: 'Parley Demo',
      ownerEmail: ownerSpec.email,
      ownerPassword: null,
      ownerFullName: ownerSpec.fullName,
    });
    const setSecrets = stmt(app.db, 'UPDATE user SET password_hash = ?, api_key = ? WHERE id = ?');
    setSecrets.run(DEMO_PASSWORD_HASH, ownerSpec.apiKey, owner.userId);
    const byEmail = new Map<string, UserRow>();
    for (const spec of rest) {
      const u = doCreateUser(app, {
        realmId,
        email: spec.email,
        password: null,
        fullName: spec.fullName,
        role: spec.role,
        botType: spec.bot ? BOT_TYPE.GENERIC : null,
        botOwnerId: spec.bot ? owner.userId : null,
        acting: null,
      });
      setSecrets.run(spec.bot ? null : DEMO_PASSWORD_HASH, spec.apiKey, u.userId);
    }
    for (const spec of DEMO_USERS) {
      const row = stmt(app.db, 'SELECT id FROM user WHERE realm_id = ? AND email = ?').get(realmId, spec.email) as { id: number };
      byEmail.set(spec.email, findUserById(app.db, realmId, row.id) as UserRow);
    }
    const ownerRow = byEmail.get(ownerSpec.email) as UserRow;
    for (const ch of DEMO_CHANNELS) {
      const s = doCreateChannel(app, ownerRow, realmId, { name: ch.name, description: ch.description, inviteOnly: ch.inviteOnly });
      doSubscribe(app, ownerRow, {
        streams: [{ name: ch.name }],
        principals: ch.subscribers.map((e) => byEmail.get(e) as UserRow),
        authorizationErrorsFatal: true,
        channelSpec: {},
      });
      for (const [from, topic, content] of ch.messages) {
        doSendMessage(app, byEmail.get(from) as UserRow, { to: { kind: 'channel', streamId: s.id, topic }, content });
      }
    }
    doSendMessage(app, byEmail.get('alice@example.com') as UserRow, {
      to: { kind: 'direct', emails: ['bob@example.com'] },
      content: DEMO_DM,
    });
  });
}

export interface ReadyInfo {
  url: string;
  users: { user_id: number; email: string; full_name: string; role: number; api_key: string }[];
  channels: { stream_id: number; name: string }[];
}

/** What the ready file says: the server's URL, the listed users' credentials and every channel. */
export function readyInfo(app: App, url: string, emails: readonly string[]): ReadyInfo {
  const realmId = app.realmId();
  const users: ReadyInfo['users'] = [];
  const find = stmt(app.db, 'SELECT id, email, full_name, role, api_key FROM user WHERE realm_id = ? AND email = ? AND is_active = 1');
  for (const email of emails) {
    const u = find.get(realmId, email) as { id: number; email: string; full_name: string; role: number; api_key: string } | undefined;
    if (u) users.push({ user_id: u.id, email: u.email, full_name: u.full_name, role: u.role, api_key: u.api_key });
  }
  const channels = stmt(app.db, 'SELECT id AS stream_id, name FROM stream WHERE realm_id = ? AND deactivated = 0 ORDER BY id').all(realmId) as ReadyInfo['channels'];
  return { url, users, channels };
}

/** Writes `info` to `file` atomically (a temporary file in the same folder, then rename). */
export function writeReadyFile(file: string, info: ReadyInfo): void {
  const target = path.resolve(file);
  const tmp = path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.tmp`);
  fs.writeFileSync(tmp, JSON.stringify(info, null, 2) + '\n');
  fs.renameSync(tmp, target);
}
