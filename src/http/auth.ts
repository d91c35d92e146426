// Who is calling: HTTP Basic (email : API key) for the API, and the web session cookie where a route
// allows it. Failures answer in the spec's codes: INVALID_API_KEY for a bad key, USER_DEACTIVATED and
// REALM_DEACTIVATED (401), UNAUTHORIZED with WWW-Authenticate for a missing or unreadable header.
import crypto from 'node:crypto';
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { isRealmDeactivated, rememberAuthHeader, userByAuthHeader, userByDeliveryEmail } from '../lib/auth-cache';
import { API_KEY_FORMAT, safeEqual } from '../lib/secrets';
import { findUserByEmail, findUserById, isSystemBot, type UserRow } from '../lib/users';
import { nowSeconds } from '../lib/clock';
import { errors } from './errors';
import { rateLimitHeaders } from './ratelimit';

export const SESSION_COOKIE = 'parley_session';
/** Zulip's CSRF cookie name: the web app reads it and sends it back as X-CSRFToken. */
export const CSRF_COOKIE = 'csrftoken';

/** Realm and account state checks shared by every way of logging in. */
export function checkAccountActive(app: App, user: UserRow): void {
  if (isRealmDeactivated(app, user.realm_id)) throw errors.realmDeactivated();
  if (!user.is_active) throw errors.userDeactivated();
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes `Authorization: Basic ...` into (email, key); throws the Zulip error for anything else. */
export function parseBasic(header: string | undefined): { email: string; key: string } {
  if (!header) throw errors.unauthorized('Missing authorization header for basic auth');
  const invalid = () => errors.unauthorized('Invalid authorization header for basic auth');
  // As Zulip's get_basic_credentials: exactly "<scheme> <credentials>", the scheme checked second.
  const parts = header.trim().split(/\s+/);
  if (parts.length !== 2) throw invalid();
  const [scheme, encoded] = parts;
  if (scheme.toLowerCase() !== 'basic') throw errors.badRequest('This endpoint requires HTTP basic authentication.');
  if (encoded.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) throw invalid();
  let decoded: string;
  try {
    decoded = utf8.decode(Buffer.from(encoded, 'base64'));
  } catch {
    throw invalid();
  }
  const fields = decoded.split(':');
  if (fields.length !== 2) throw invalid();
  return { email: fields[0], key: fields[1] };
}

/** The user named by Basic credentials. The same error for an unknown email and a wrong key. */
export function authenticateBasic(app: App, header: string | undefined): UserRow {
  // zulip-compat: a request without credentials is refused before Basic parsing (rest_dispatch's
  // MissingAuthenticationError), so the client sees "Not logged in", not "Missing authorization header".
  if (!header) throw errors.unauthorized();
  const known = userByAuthHeader(app, header);
  if (known) {
    checkAccountActive(app, known);
    return known;
  }
  const { email, key } = parseBasic(header);
  if (!API_KEY_FORMAT.test(key)) throw errors.invalidApiKey('Malformed API key');
  const user = userByDeliveryEmail(app, app.realmId(), email);
  // System bots speak only through the server (Zulip's cross-realm bots have no key anyone holds):
  // their key, were it ever learned, authenticates nothing, and answers as a wrong key does.
  if (!user || isSystemBot(user) || !safeEqual(user.api_key, key)) throw errors.invalidApiKey();
  checkAccountActive(app, user);
  rememberAuthHeader(app, header, user);
  return user;
}

/** Reads one cookie from a Cookie header. */
export function readCookie(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

export const sessionTokenHash = (token: string) => crypto.createHash('sha256').update(token).digest('hex');

/**
 * The CSRF token of a session: derived from the session's secret token, so it needs no storage, changes
 * with every login, and cannot be forged by someone who can plant a cookie but not read ours.
 */
export const csrfTokenFor = (sessionToken: string) =>
  crypto.createHash('sha256').update(`parley-csrf\0${sessionToken}`).digest('base64url');

/**
 * The web app's requests under /json: the session cookie (never Basic), and for every method that may
 * change something an X-CSRFToken header equal to the session's CSRF token (Zulip's scheme). Throws
 * UNAUTHORIZED for no or an expired session, CSRF_FAILED (403) for a missing or wrong token.
 */
export function authenticateWebRequest(app: App, method: string, headers: Record<string, string>): UserRow {
  const user = authenticateSession(app, headers.cookie);
  if (!user) throw errors.unauthorized();
  if (method !== 'GET' && method !== 'HEAD') {
    const sent = headers['x-csrftoken'];
    if (!sent) throw errors.csrfFailed('CSRF token missing.');
    const token = readCookie(headers.cookie, SESSION_COOKIE) as string;
    if (!safeEqual(sent, csrfTokenFor(token))) throw errors.csrfFailed("CSRF token from the 'X-Csrftoken' HTTP header incorrect.");
  }
  return user;
}

/** The user of a valid, unexpired session cookie, or null. */
export function authenticateSession(app: App, cookieHeader: string | undefined): UserRow | null {
  const token = readCookie(cookieHeader, SESSION_COOKIE);
  if (!token) return null;
  const row = stmt(app.db, 'SELECT user_id, expires FROM session WHERE token_hash = ?').get(sessionTokenHash(token)) as
    | { user_id: number; expires: number }
    | undefined;
  if (!row || row.expires <= nowSeconds(app.clock)) return null;
  const user = findUserById(app.db, app.realmId(), row.user_id);
  if (!user || isSystemBot(user)) return null;
  checkAccountActive(app, user);
  return user;
}

/** Refuses a login name with too many recent failures (Zulip: 5 in 30 minutes) with RATE_LIMIT_HIT. */
export function checkLoginAttempts(app: App, username: string): void {
  if (!app.limits.enabled) return;
  const d = app.limits.peek(`login:${username.toLowerCase()}`, app.limits.rules.authenticateByUsername, app.clock.nowMs());
  if (!d.allowed) throw errors.rateLimited(Math.round(d.retryAfter * 1000) / 1000, rateLimitHeaders(d));
}

/** Counts one failed login for `username`. */
export function recordFailedLogin(app: App, username: string): void {
  if (app.limits.enabled) app.limits.record(`login:${username.toLowerCase()}`, app.limits.rules.authenticateByUsername, app.clock.nowMs());
}
