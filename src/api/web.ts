// The web client: its page at `/` (for a logged-in browser; others are sent to /login) and its built,
// content-hashed files under /static/web/. The client itself (web/) is its own program and talks to
// Parley only through the API under /json (session cookie + CSRF token, see http/auth.ts).
import type { App } from '../app';
import { CSRF_COOKIE, csrfTokenFor, readCookie, SESSION_COOKIE } from '../http/auth';
import { errors } from '../http/errors';
import { publicRoute, Reply } from '../http/route';
import { html, page, PAGE_HEADERS } from '../lib/html';
import { assetUrl, webAssets, type WebManifest } from '../lib/web-assets';
import { currentUser, redirect, secure } from './pages';

/**
 * The app page's policy: scripts and styles only from the built files (/static/web/, not 'self', which
 * would also admit user uploads served from this origin); style attributes are allowed because
 * rendered math (KaTeX) sizes its parts with them; images from us, data: URLs and Gravatar (the default
 * avatars); requests only to us. `host` is the request's Host header (an http: source also admits
 * https: for the same host, as behind a TLS proxy).
 */
function appCsp(host: string | undefined): string {
  const files = host && /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/.test(host) ? `http://${host}/static/web/` : "'self'";
  return [
    "default-src 'none'",
    `script-src ${files}`,
    `style-src ${files}`,
    "style-src-attr 'unsafe-inline'",
    "img-src 'self' data: https://secure.gravatar.com",
    "connect-src 'self'",
    "font-src 'self'",
    "media-src 'self'",
    "manifest-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

const APP_HEADERS: Record<string, string> = {
  ...PAGE_HEADERS,
  // The page itself is tiny and names hashed files: always revalidated, never stale; it is one
  // person's (it sets their CSRF cookie), so no shared cache keeps it.
  'Cache-Control': 'private, no-cache',
};

/** The app's page: a shell that loads the hashed script and style; the app draws everything else. */
function appPage(m: WebManifest): string {
  return html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Parley</title>
<link rel="icon" href="${assetUrl(m['favicon.svg'])}" type="image/svg+xml">
<link rel="stylesheet" href="${assetUrl(m['app.css'])}">
<script type="module" src="${assetUrl(m['app.js'])}"></script>
</head>
<body>
<div id="app"><p class="boot">Loading…</p><noscript><p class="boot">Parley's web app needs JavaScript.</p></noscript></div>
</body>
</html>
`.value;
}

export function csrfCookie(app: App, sessionToken: string): string {
  // Not HttpOnly: the app reads it to send it back as X-CSRFToken (a page on another site cannot read it).
  return `${CSRF_COOKIE}=${csrfTokenFor(sessionToken)}; SameSite=Lax; Path=/${secure(app) ? '; Secure' : ''}`;
}

const notBuilt = () =>
  new Reply(
    503,
    PAGE_HEADERS,
    page('Web app not built', html`<p>This copy of Parley was started from source without its web app. Run <code>npm run build</code> (or <code>node scripts/build-web.mjs</code>) and reload.</p>`),
  );

export const webRoutes = [
  publicRoute({
    method: 'GET',
    path: '/',
    handle({ app, headers }) {
      const user = currentUser(app, headers.cookie);
      if (!user) return redirect('/login');
      const assets = webAssets();
      if (!assets) return notBuilt();
      const token = readCookie(headers.cookie, SESSION_COOKIE) as string;
      return new Reply(200, { ...APP_HEADERS, 'Content-Security-Policy': appCsp(headers.host), 'Set-Cookie': csrfCookie(app, token) }, appPage(assets.manifest));
    },
  }),
  publicRoute({
    method: 'GET',
    path: '/static/web/{file}',
    handle({ path, headers }) {
      const file = webAssets()?.files.get(path.file);
      if (!file) throw errors.notFound();
      const gzip = file.gzip !== null && /\bgzip\b/.test(headers['accept-encoding'] ?? '');
      return new Reply(
        200,
        {
          'Content-Type': file.type,
          // Hashed names: the bytes behind a name never change.
          'Cache-Control': 'public, max-age=31536000, immutable',
          'X-Content-Type-Options': 'nosniff',
          Vary: 'Accept-Encoding',
          ...(gzip ? { 'Content-Encoding': 'gzip' } : {}),
        },
        gzip ? (file.gzip as Buffer) : file.body,
      );
    },
  }),
];
