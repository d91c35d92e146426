// The few HTML pages Parley serves itself besides the web app: sign-up through an invitation link,
// setting a password through a one-time link (imported accounts), web login and logout. Forms post to the same origin; a request whose Origin header names another site
// (or `null`, an opaque origin) is refused (the SameSite=Lax cookie already keeps cross-site posts from
// carrying it). After logging in or signing up, people land in the web app at `/`.
import { checkInvitationKey, doAcceptInvitation, doRequestRegistration, InvitationUnusable } from '../actions/invites';
import { doCreateSession, doDeleteSession, doPasswordLogin, SESSION_SECONDS } from '../actions/sessions';
import { checkPasswordLink, doSetPasswordWithLink, passwordLinkPath, PasswordLinkUnusable } from '../actions/password-links';
import { authenticateSession, readCookie, SESSION_COOKIE } from '../http/auth';
import { JsonableError } from '../http/errors';
import { p } from '../http/params';
import { publicRoute, Reply } from '../http/route';
import type { App } from '../app';
import { getRealmById } from '../lib/realm';
import { html, page, PAGE_HEADERS, type SafeHtml } from '../lib/html';
import { assetUrl, webAssets } from '../lib/web-assets';
import type { UserRow } from '../lib/users';

function htmlReply(status: number, title: string, body: SafeHtml, headers: Record<string, string> = {}, script?: string): Reply {
  const icon = webAssets()?.manifest['favicon.svg'];
  return new Reply(status, { ...PAGE_HEADERS, ...headers }, page(title, body, script, icon ? assetUrl(icon) : undefined));
}

/**
 * Where to go after logging in: the web app, at the narrow the person opened before being sent to log
 * in (`next`, filled in by the login page's script from the address's #fragment). Only `/` and
 * `/#...` are accepted, so the form cannot be made to redirect anywhere else; and the fragment only in
 * printable ASCII without backslashes (what a browser's location.hash holds: it percent-encodes the
 * rest), so no control character or raw byte reaches the Location header.
 */
export function afterLogin(next: string | undefined): string {
  return next !== undefined && /^\/#[\x21-\x5b\x5d-\x7e]*$/.test(next) ? next : '/';
}

export function redirect(location: string, headers: Record<string, string> = {}): Reply {
  return new Reply(303, { ...PAGE_HEADERS, Location: location, ...headers }, '');
}

export const secure = (app: App) => app.publicUrl.startsWith('https:');

function sessionCookie(app: App, token: string): string {
  return `${SESSION_COOKIE}=${token}; HttpOnly; SameSite=Lax; Path=/; Max-Age=${SESSION_SECONDS}${secure(app) ? '; Secure' : ''}`;
}

function clearedCookie(app: App): string {
  return `${SESSION_COOKIE}=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0${secure(app) ? '; Secure' : ''}`;
}

/** Whether a form post comes from our own pages: no Origin header (older clients), or our origin. */
export function sameOrigin(app: App, headers: Record<string, string>): boolean {
  const origin = headers.origin;
  if (origin === undefined) return true;
  const allowed = new Set<string>();
  try {
    allowed.add(new URL(app.publicUrl).origin);
  } catch {
    // an unparsable public URL allows only the Host header's origin
  }
  if (headers.host) {
    allowed.add(`http://${headers.host}`);
    allowed.add(`https://${headers.host}`);
  }
  return allowed.has(origin);
}

const forbidden = () =>
  htmlReply(403, 'Request refused', html`<p class="error">This form was submitted from another site, so it was not accepted.</p>`);

const errorBox = (message: string | null) => (message ? html`<p class="error" role="alert">${message}</p>` : '');

// --- sign-up ------------------------------------------------------------------------------------------

const UNUSABLE: Record<InvitationUnusable['state'], { status: number; title: string; text: string }> = {
  missing: { status: 404, title: 'Invitation not found', text: 'This invitation link is not valid. Check that you copied the whole link from the email.' },
  expired: { status: 410, title: 'Invitation expired', text: 'This invitation link has expired. Ask the person who invited you for a new one.' },
  revoked: { status: 410, title: 'Invitation revoked', text: 'This invitation was revoked. Ask the organization for a new one.' },
  used: { status: 410, title: 'Invitation already used', text: 'This invitation has already been used to create an account. Log in instead.' },
  realm_deactivated: { status: 410, title: 'Organization deactivated', text: 'This organization has been deactivated.' },
};

function unusablePage(err: InvitationUnusable): Reply {
  const u = UNUSABLE[err.state];
  return htmlReply(u.status, u.title, html`<p>${u.text}</p><p><a href="/login">Log in</a></p>`);
}

interface SignUpForm {
  email: string;
  fullName: string;
}

function signUpPage(app: App, key: string, status: number, error: string | null, form: SignUpForm, headers: Record<string, string> = {}): Reply {
  let state;
  try {
    state = checkInvitationKey(app, key);
  } catch (err) {
    if (err instanceof InvitationUnusable) return unusablePage(err);
    throw err;
  }
  const { invitation, realm, referrer } = state;
  // A reusable link asks only for the address, and sends it a link to finish (doRequestRegistration).
  if (invitation.multiuse) {
    return htmlReply(
      status,
      `Join ${realm.name}`,
      html`<p>You are invited to join ${realm.name}.</p>${errorBox(error)}
<form method="post" action="/join/${key}/">
<label for="email">Email</label><input id="email" name="email" type="email" required autocomplete="email" value="${form.email}">
<p class="realm">We will send a link to this address to finish creating your account.</p>
<button type="submit">Continue</button>
</form>`,
      headers,
    );
  }
  const who = referrer && invitation.registration_of === null ? html`<p>${referrer.full_name} invited you to join ${realm.name}.</p>` : html`<p>You are invited to join ${realm.name}.</p>`;
  return htmlReply(
    status,
    `Join ${realm.name}`,
    html`${who}${errorBox(error)}
<form method="post" action="/join/${key}/">
<p>Email: <strong>${invitation.email}</strong></p>
<label for="full_name">Full name</label><input id="full_name" name="full_name" required maxlength="100" autocomplete="name" value="${form.fullName}">
<label for="password">Password</label><input id="password" name="password" type="password" required minlength="6" autocomplete="new-password">
<button type="submit">Create account</button>
</form>`,
  );
}

// --- setting a password through a one-time link (imported accounts) ------------------------------------

const LINK_UNUSABLE: Record<PasswordLinkUnusable['state'], { status: number; title: string; text: string }> = {
  missing: { status: 404, title: 'Link not found', text: 'This link is not valid. Check that you copied the whole link.' },
  expired: { status: 410, title: 'Link expired', text: 'This link has expired. Ask an administrator of the organization for a new one.' },
  used: { status: 410, title: 'Link already used', text: 'This link has already been used to set a password. Log in instead.' },
  deactivated: { status: 410, title: 'Account deactivated', text: 'This account has been deactivated.' },
  realm_deactivated: { status: 410, title: 'Organization deactivated', text: 'This organization has been deactivated.' },
};

function linkUnusablePage(err: PasswordLinkUnusable): Reply {
  const u = LINK_UNUSABLE[err.state];
  return htmlReply(u.status, u.title, html`<p>${u.text}</p><p><a href="/login">Log in</a></p>`);
}

function setPasswordPage(app: App, key: string, status: number, error: string | null): Reply {
  let user: UserRow;
  try {
    user = checkPasswordLink(app, key);
  } catch (err) {
    if (err instanceof PasswordLinkUnusable) return linkUnusablePage(err);
    throw err;
  }
  const realm = getRealmById(app.db, user.realm_id);
  return htmlReply(
    status,
    'Set your password',
    html`<p>Set a password for your account in ${realm?.name ?? ''}.</p>${errorBox(error)}
<form method="post" action="${passwordLinkPath(key)}">
<p>Email: <strong>${user.delivery_email}</strong></p>
<label for="password">Password</label><input id="password" name="password" type="password" required minlength="6" autocomplete="new-password">
<button type="submit">Set password</button>
</form>`,
  );
}

// --- login --------------------------------------------------------------------------------------------

function loginPage(app: App, status: number, error: string | null, email = '', next = '/', headers: Record<string, string> = {}): Reply {
  const script = webAssets()?.manifest['login.js'];
  return htmlReply(
    status,
    'Log in',
    html`<p class="realm">${getRealmById(app.db, app.realmId())?.name ?? ''}</p>${errorBox(error)}
<form method="post" action="/login">
<input type="hidden" name="next" value="${afterLogin(next)}">
<label for="username">Email</label><input id="username" name="username" type="email" required autocomplete="username" value="${email}">
<label for="password">Password</label><input id="password" name="password" type="password" required autocomplete="current-password">
<button type="submit">Log in</button>
</form>`,
    headers,
    script ? assetUrl(script) : undefined,
  );
}

export function currentUser(app: App, cookie: string | undefined): UserRow | null {
  try {
    return authenticateSession(app, cookie);
  } catch (err) {
    if (err instanceof JsonableError) return null; // deactivated user or organization
    throw err;
  }
}

export const pageRoutes = [
  publicRoute({
    method: 'GET',
    path: '/join/{key}',
    handle: ({ app, path }) => signUpPage(app, path.key, 200, null, { email: '', fullName: '' }),
  }),
  publicRoute({
    method: 'POST',
    path: '/join/{key}',
    params: { email: p.str().optional(), full_name: p.str().optional(), password: p.str().optional() },
    handle({ app, path, params, headers, ip }) {
      if (!sameOrigin(app, headers)) return forbidden();
      const form = { email: params.email ?? '', fullName: params.full_name ?? '' };
      try {
        if (checkInvitationKey(app, path.key).invitation.multiuse) {
          const email = doRequestRegistration(app, path.key, form.email, ip);
          return htmlReply(
            200,
            'Check your email',
            html`<p>We sent a link to <strong>${email}</strong>. Follow it to finish creating your account (it works for 24 hours).</p>
<p>No email? Check your spam folder, or <a href="/join/${path.key}/">try again</a>.</p>`,
          );
        }
        const user = doAcceptInvitation(app, path.key, { fullName: form.fullName, password: params.password ?? '' });
        const token = doCreateSession(app, user);
        return redirect('/', { 'Set-Cookie': sessionCookie(app, token) });
      } catch (err) {
        if (err instanceof InvitationUnusable) return unusablePage(err);
        if (err instanceof JsonableError && err.code === 'RATE_LIMIT_HIT') {
          const retry = { 'Retry-After': err.headers['Retry-After'] ?? '3600' };
          return signUpPage(app, path.key, 429, 'Too many sign-up emails were sent from your network today. Try again tomorrow.', form, retry);
        }
        if (err instanceof JsonableError) return signUpPage(app, path.key, 400, err.message, form);
        throw err;
      }
    },
  }),
  publicRoute({
    method: 'GET',
    path: '/accounts/password/set/{key}',
    handle: ({ app, path }) => setPasswordPage(app, path.key, 200, null),
  }),
  publicRoute({
    method: 'POST',
    path: '/accounts/password/set/{key}',
    params: { password: p.str().optional() },
    handle({ app, path, params, headers }) {
      if (!sameOrigin(app, headers)) return forbidden();
      try {
        const user = doSetPasswordWithLink(app, path.key, params.password ?? '');
        const token = doCreateSession(app, user);
        return redirect('/', { 'Set-Cookie': sessionCookie(app, token) });
      } catch (err) {
        if (err instanceof PasswordLinkUnusable) return linkUnusablePage(err);
        if (err instanceof JsonableError) return setPasswordPage(app, path.key, 400, err.message);
        throw err;
      }
    },
  }),
  publicRoute({
    method: 'GET',
    path: '/login',
    handle: ({ app }) => loginPage(app, 200, null),
  }),
  publicRoute({
    method: 'POST',
    path: '/login',
    params: { username: p.str().alias('email').optional(), password: p.str().optional(), next: p.str().optional() },
    handle({ app, params, headers }) {
      if (!sameOrigin(app, headers)) return forbidden();
      const email = (params.username ?? '').trim();
      const next = afterLogin(params.next);
      try {
        const user = doPasswordLogin(app, email, params.password ?? '');
        const token = doCreateSession(app, user);
        return redirect(next, { 'Set-Cookie': sessionCookie(app, token) });
      } catch (err) {
        if (!(err instanceof JsonableError)) throw err;
        if (err.code === 'RATE_LIMIT_HIT') {
          return loginPage(app, 429, 'Too many failed attempts. Wait a few minutes, then try again.', email, next, {
            'Retry-After': err.headers['Retry-After'] ?? '60',
          });
        }
        const status = err.code === 'AUTHENTICATION_FAILED' ? 401 : 403;
        return loginPage(app, status, err.message, email, next);
      }
    },
  }),
  publicRoute({
    method: 'POST',
    path: '/logout',
    handle({ app, headers }) {
      if (!sameOrigin(app, headers)) return forbidden();
      const token = readCookie(headers.cookie, SESSION_COOKIE);
      if (token) doDeleteSession(app, token);
      return redirect('/login', { 'Set-Cookie': clearedCookie(app) });
    },
  }),
  // The page people landed on before the web app existed: old links and bookmarks go to the app.
  publicRoute({
    method: 'GET',
    path: '/welcome',
    handle: () => redirect('/'),
  }),
];
