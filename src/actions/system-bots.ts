// System bots (Zulip's Notification Bot and Welcome Bot): found by their email's local part and
// created on first use, so an organization that never needs them has none.
// Note: unlike the rest of lib/, creating one goes through the users action (system groups, the
// realm_user event); only actions call these helpers.
import crypto from 'node:crypto';
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

/** Whether an account of the realm has `email` as its address or its login. */
function addressTaken(app: App, realmId: number, email: string): boolean {
  return (
    stmt(app.db, 'SELECT 1 FROM user WHERE realm_id = ? AND (email = ? COLLATE NOCASE OR delivery_email = ? COLLATE NOCASE) LIMIT 1').get(
      realmId,
      email,
      email,
    ) !== undefined
  );
}

/** The realm's system bot of `kind`, created (inside the caller's write) when missing. */
export function systemBot(app: App, realmId: number, kind: SystemBotKind): UserRow {
  const spec = BOTS[kind];
  // Looked up by local part (with or without the "+" suffix below): the public URL (and so the host)
  // may change between runs.
  const local = spec.local.replace(/[%_\\]/g, '\\$&');
  const row = stmt(
    app.db,
    `SELECT id FROM user WHERE realm_id = ? AND bot_type IS NOT NULL AND bot_owner_id IS NULL
       AND (email LIKE ? ESCAPE '\\' OR email LIKE ? ESCAPE '\\') ORDER BY id LIMIT 1`,
  ).get(realmId, `${local}@%`, `${local}+%@%`) as { id: number } | undefined;
  if (row) return findUserById(app.db, realmId, row.id) as UserRow;
  // Where members' addresses share the server's domain, a member (or their bot, "notification-bot@")
  // may hold the address first: the bot then gets a "+" suffix no one can have taken in advance,
  // rather than every notice failing for good.
  let email = botEmail(spec.local, botHost(app));
  if (addressTaken(app, realmId, email)) email = botEmail(`${spec.local}+${crypto.randomBytes(6).toString('hex')}`, botHost(app));
  const created = doCreateUser(app, {
    realmId,
    email,
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
