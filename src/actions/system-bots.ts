// System bots (Zulip's Notification Bot and Welcome Bot): found by their email's local part and
// created on first use, so an organization that never needs them has none.
// Note: unlike the rest of lib/, creating one goes through the users action (system groups, the
// realm_user event); only actions call these helpers.
import type { App } from '../app';
import { doCreateUser } from './users';
import { stmt } from '../db/stmt';
import { BOT_TYPE, ROLE } from '../lib/roles';
import { findUserById, type SYSTEM_BOT_LOCAL_PARTS, type UserRow } from '../lib/users';
import { isValidEmail } from '../lib/validate';

// The local parts are also how isSystemBot (lib/users.ts) knows these bots, to keep their keys unused.
const BOTS = {
  notification: { local: 'notification-bot', fullName: 'Notification Bot' },
  welcome: { local: 'welcome-bot', fullName: 'Welcome Bot' },
} as const satisfies Record<string, { local: (typeof SYSTEM_BOT_LOCAL_PARTS)[number]; fullName: string }>;
export type SystemBotKind = keyof typeof BOTS;

/** The host part for system bot addresses: the public URL's host name. */
function botHost(app: App): string {
  try {
    return new URL(app.publicUrl).hostname || 'localhost';
  } catch {
    return 'localhost';
  }
}

/** `local@host`, or a placeholder domain when the host is not one an address can use (localhost, IPv6). */
function botEmail(local: string, host: string): string {
  const email = `${local}@${host}`;
  return isValidEmail(email) ? email : `${local}@localhost.localdomain`;
}

/** The realm's system bot of `kind`, created (inside the caller's write) when missing. */
export function systemBot(app: App, realmId: number, kind: SystemBotKind): UserRow {
  const spec = BOTS[kind];
  // Looked up by local part: the public URL (and so the host) may change between runs.
  const row = stmt(
    app.db,
    `SELECT id FROM user WHERE realm_id = ? AND bot_type IS NOT NULL AND bot_owner_id IS NULL
       AND email LIKE ? ESCAPE '\\' ORDER BY id LIMIT 1`,
  ).get(realmId, `${spec.local.replace(/[%_\\]/g, '\\$&')}@%`) as { id: number } | undefined;
  if (row) return findUserById(app.db, realmId, row.id) as UserRow;
  const created = doCreateUser(app, {
    realmId,
    email: botEmail(spec.local, botHost(app)),
    password: null,
    fullName: spec.fullName,
    role: ROLE.MEMBER,
    botType: BOT_TYPE.GENERIC,
    botOwnerId: null,
    acting: null,
    systemBot: true,
  });
  return findUserById(app.db, realmId, created.userId) as UserRow;
}

/** Notification Bot: sends automated notices such as "X accepted your invitation". */
export const notificationBot = (app: App, realmId: number) => systemBot(app, realmId, 'notification');

/** Welcome Bot: greets new users. */
export const welcomeBot = (app: App, realmId: number) => systemBot(app, realmId, 'welcome');
