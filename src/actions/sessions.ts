// Web sessions: password login for the HTML pages, and the session rows behind the HttpOnly cookie.
// The cookie carries a random token; the table keeps only its SHA-256, so a copy of the database
// does not log anyone in.
import crypto from 'node:crypto';
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors } from '../http/errors';
import { checkAccountActive, checkLoginAttempts, recordFailedLogin, sessionTokenHash } from '../http/auth';
import { nowSeconds } from '../lib/clock';
import { checkPassword } from '../lib/secrets';
import { findUserByDeliveryEmail, isBot, type UserRow } from '../lib/users';
import { doRecordLogin } from './login';

/** Sessions last 14 days (Zulip's SESSION_COOKIE_AGE). */
export const SESSION_SECONDS = 14 * 24 * 60 * 60;

/** Starts a session for `user`; returns the cookie token. */
export function doCreateSession(app: App, user: UserRow): string {
  const token = crypto.randomBytes(32).toString('base64url');
  app.batch.write(() => {
    const now = nowSeconds(app.clock);
    stmt(app.db, 'INSERT INTO session (token_hash, user_id, created, expires) VALUES (?, ?, ?, ?)').run(
      sessionTokenHash(token),
      user.id,
      now,
      now + SESSION_SECONDS,
    );
    // Expired rows of this user are dropped on the way.
    stmt(app.db, 'DELETE FROM session WHERE user_id = ? AND expires <= ?').run(user.id, now);
  });
  return token;
}

/** Ends the session of `token` (unknown tokens are ignored). */
export function doDeleteSession(app: App, token: string): void {
  app.batch.write(() => {
    stmt(app.db, 'DELETE FROM session WHERE token_hash = ?').run(sessionTokenHash(token));
  });
}

/**
 * Ends every session of `userId` but the one of `keepToken` (the session changing the password; null:
 * all of them). Inside the caller's write. As Django's session auth hash does for Zulip: a session
 * someone else holds (a stolen cookie, a shared computer) ends when the password changes.
 */
export function deleteOtherSessions(app: App, userId: number, keepToken: string | null): void {
  if (keepToken === null) stmt(app.db, 'DELETE FROM session WHERE user_id = ?').run(userId);
  else stmt(app.db, 'DELETE FROM session WHERE user_id = ? AND token_hash <> ?').run(userId, sessionTokenHash(keepToken));
}

/**
 * Checks email and password for the login page: the same error for an unknown address and a wrong
 * password, failures counted against the address (RATE_LIMIT_HIT), deactivated accounts and
 * organizations refused, bots never. Returns the user and records the login.
 */
export function doPasswordLogin(app: App, email: string, password: string): UserRow {
  checkLoginAttempts(app, email);
  const user = findUserByDeliveryEmail(app.db, app.realmId(), email);
  const ok = checkPassword(password, user?.password_hash ?? null);
  if (!user || !ok || isBot(user)) {
    recordFailedLogin(app, email);
    throw errors.authenticationFailed();
  }
  checkAccountActive(app, user);
  doRecordLogin(app, user);
  return user;
}
