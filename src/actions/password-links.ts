// One-time links to set a password: how someone whose account was imported (and so has no password)
// gets to log in to the web app. `parley import` makes one per person and prints it, as invitations
// print their links; following it shows a form (src/api/pages.ts), and the password set there logs
// the person in. The key is 32 random characters; only its SHA-256 is stored.
import crypto from 'node:crypto';
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { nowSeconds } from '../lib/clock';
import { hashPassword, randomAlnum } from '../lib/secrets';
import { findUserById, isBot, type UserRow } from '../lib/users';
import { isRealmDeactivated } from '../lib/auth-cache';
import { deleteOtherSessions } from './sessions';
import { checkPasswordStrength } from '../lib/validate';

/** How long a link works: 30 days (moving an organization takes a while to reach everyone). */
export const PASSWORD_LINK_SECONDS = 30 * 24 * 60 * 60;

/** The path a link's key is used at. */
export const passwordLinkPath = (key: string) => `/accounts/password/set/${key}/`;

const keyHash = (key: string) => crypto.createHash('sha256').update(key).digest('hex');

interface PasswordLinkRow {
  id: number;
  user_id: number;
  expires: number;
  used: number;
}

export class PasswordLinkUnusable extends Error {
  constructor(readonly state: 'missing' | 'expired' | 'used' | 'deactivated' | 'realm_deactivated') {
    super(state);
  }
}

/** Makes a link for `userId`; returns its key (shown once, never stored). */
export function doCreatePasswordLink(app: App, userId: number, seconds = PASSWORD_LINK_SECONDS): string {
  const key = randomAlnum(32);
  app.batch.write(() => {
    const now = nowSeconds(app.clock);
    stmt(app.db, 'INSERT INTO password_link (user_id, key_hash, created, expires) VALUES (?, ?, ?, ?)').run(userId, keyHash(key), now, now + seconds);
  });
  return key;
}

function usableLink(app: App, key: string): { link: PasswordLinkRow; user: UserRow } {
  const link = stmt(app.db, 'SELECT id, user_id, expires, used FROM password_link WHERE key_hash = ?').get(keyHash(key)) as PasswordLinkRow | undefined;
  if (!link) throw new PasswordLinkUnusable('missing');
  if (link.used) throw new PasswordLinkUnusable('used');
  if (link.expires <= nowSeconds(app.clock)) throw new PasswordLinkUnusable('expired');
  const user = findUserById(app.db, app.realmId(), link.user_id);
  // Bots log in with their API key, never a password (doPasswordLogin refuses them): a link for one,
  // however it was made, is no link.
  if (!user || isBot(user)) throw new PasswordLinkUnusable('missing');
  // As logging in: nothing is set, and no session made, in a deactivated organization.
  if (isRealmDeactivated(app, user.realm_id)) throw new PasswordLinkUnusable('realm_deactivated');
  if (!user.is_active) throw new PasswordLinkUnusable('deactivated');
  return { link, user };
}

/** The person a link is for, if it can still be used; throws PasswordLinkUnusable otherwise. */
export function checkPasswordLink(app: App, key: string): UserRow {
  return usableLink(app, key).user;
}

/**
 * Sets the password through a link, which is then used up (with the person's other links). Returns the
 * person. Their existing sessions end, as when a password is changed (deleteOtherSessions): whoever
 * held one (a shared computer, a stolen cookie) must log in with the new password.
 */
export function doSetPasswordWithLink(app: App, key: string, password: string): UserRow {
  return app.batch.write(() => {
    const { user } = usableLink(app, key);
    checkPasswordStrength(password);
    stmt(app.db, 'UPDATE user SET password_hash = ? WHERE id = ?').run(hashPassword(password), user.id);
    stmt(app.db, 'UPDATE password_link SET used = 1 WHERE user_id = ?').run(user.id);
    deleteOtherSessions(app, user.id, null);
    return user;
  });
}
