// A logged-in browser's credentials for tests of the web app's API under /json: the session cookie from
// the login form and the CSRF token from the app page's csrftoken cookie, and a client that sends them
// the way the web app does.
import assert from 'node:assert/strict';
import { encodeParams, type ApiResponse, type TestServer, type TestUser } from './server';

export interface WebSession {
  /** "parley_session=…" */
  session: string;
  /** The value the app sends as X-CSRFToken. */
  csrf: string;
}

/** Logs `user` in through POST /login and opens the app page (which sets the csrftoken cookie). */
export async function webLogin(t: TestServer, user: TestUser): Promise<WebSession> {
  const login = await fetch(t.url + '/login', {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: encodeParams({ username: user.email, password: user.password }),
  });
  assert.equal(login.status, 303, await login.text());
  const session = (login.headers.get('set-cookie') ?? '').split(';')[0];
  const page = await fetch(t.url + '/', { redirect: 'manual', headers: { cookie: session } });
  assert.equal(page.status, 200);
  await page.text();
  const m = /^csrftoken=([^;]+)/.exec(page.headers.get('set-cookie') ?? '');
  assert.ok(m, 'the app page sets the csrftoken cookie');
  return { session, csrf: m[1] };
}

/** Calls `/json<path>` as the web app: cookies, and X-CSRFToken unless `csrf` says otherwise (null: none). */
export async function json(
  t: TestServer,
  s: WebSession | null,
  method: string,
  path: string,
  params: Record<string, unknown> = {},
  opts: { csrf?: string | null; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  if (s) headers.cookie = `${s.session}; csrftoken=${s.csrf}`;
  const csrf = opts.csrf === undefined ? s?.csrf : opts.csrf;
  const encoded = encodeParams(params);
  const full = '/json' + path;
  if (method === 'GET' || method === 'HEAD') return t.raw(method, encoded ? `${full}?${encoded}` : full, { headers });
  headers['content-type'] = 'application/x-www-form-urlencoded';
  if (csrf !== null && csrf !== undefined) headers['x-csrftoken'] = csrf;
  return t.raw(method, full, { headers, body: encoded });
}
