// GET/POST /accounts/password/set/{key}: the one-time links `parley import` prints so that imported
// people (who have no password) can set one. Whole pages are not asserted (they are the site's page
// template); their status, title, message and form are.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server';
import { doCreatePasswordLink, PASSWORD_LINK_SECONDS } from '../../src/actions/password-links';
import { doCreateUser, doDeactivateUser } from '../../src/actions/users';
import { ROLE } from '../../src/lib/roles';
import { findUserById, type UserRow } from '../../src/lib/users';
import { stmt } from '../../src/db/stmt';
import { sessionTokenHash } from '../../src/http/auth';
import { RULES } from '../../src/http/ratelimit';

let t: TestServer;
let nowMs = Date.UTC(2026, 0, 1);
const clock = { nowMs: () => nowMs };

before(async () => {
  t = await startTestServer({ clock });
});
after(() => t.close());

const linkFor = (userId: number) => {
  const key = doCreatePasswordLink(t.app, userId);
  t.app.batch.commit();
  return `/accounts/password/set/${key}/`;
};
const form = (password: string) => ({ headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ password }).toString() });
const title = (text: string) => /<title>([^<]*)<\/title>/.exec(text)?.[1];

describe('GET /accounts/password/set/{key}', () => {
  it('shows a form for the account the link is for', async () => {
    const link = linkFor(t.users.othello.id);
    const r = await t.raw('GET', link);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(title(r.text), 'Set your password');
    assert.ok(r.text.includes(`<form method="post" action="${link}">`), r.text);
    assert.ok(r.text.includes('<p>Email: <strong>othello@example.com</strong></p>'), r.text);
    assert.ok(r.text.includes('<p>Set a password for your account in Test Org.</p>'), r.text);
  });

  it('answers 404 for a key that is not a link', async () => {
    const r = await t.raw('GET', '/accounts/password/set/not-a-key/');
    assert.equal(r.status, 404);
    assert.equal(title(r.text), 'Link not found');
    assert.ok(r.text.includes('This link is not valid. Check that you copied the whole link.'));
  });
});

describe('POST /accounts/password/set/{key}', () => {
  it('sets the password, logs the person in, and is used up', async () => {
    const link = linkFor(t.users.hamlet.id);
    const other = linkFor(t.users.hamlet.id);
    // Not followed: the answer itself is the redirect with the session cookie.
    const r = await fetch(t.url + link, { method: 'POST', redirect: 'manual', ...form('a-new-secret') });
    assert.equal(r.status, 303, await r.text());
    assert.equal(r.headers.get('location'), '/');
    assert.match(r.headers.get('set-cookie') ?? '', /^parley_session=[A-Za-z0-9_-]+; HttpOnly; SameSite=Lax; Path=\/; Max-Age=1209600$/);
    const login = await t.raw('POST', '/api/v1/fetch_api_key', { headers: form('').headers, body: 'username=hamlet%40example.com&password=a-new-secret' });
    assert.equal(login.status, 200, login.text);
    assert.equal(login.body.api_key, t.users.hamlet.apiKey);
    // This link and the person's other links are spent.
    for (const l of [link, other]) {
      const again = await t.raw('POST', l, form('another-secret'));
      assert.equal(again.status, 410);
      assert.equal(title(again.text), 'Link already used');
    }
  });

  it('refuses a weak password and shows the form again', async () => {
    const link = linkFor(t.users.moderator.id);
    const r = await t.raw('POST', link, form('abc'));
    assert.equal(r.status, 400);
    assert.ok(r.text.includes('<p class="error" role="alert">The password is too weak.</p>'), r.text);
    assert.ok(r.text.includes(`<form method="post" action="${link}">`));
    // Still usable.
    assert.equal((await t.raw('GET', link)).status, 200);
  });

  it('refuses a form posted from another site', async () => {
    const link = linkFor(t.users.moderator.id);
    const r = await t.raw('POST', link, { ...form('a-new-secret'), headers: { ...form('').headers, origin: 'https://evil.example' } });
    assert.equal(r.status, 403);
    assert.equal(title(r.text), 'Request refused');
    assert.equal((await t.raw('GET', link)).status, 200);
  });

  it('refuses an expired link', async () => {
    const link = linkFor(t.users.admin.id);
    nowMs += PASSWORD_LINK_SECONDS * 1000;
    try {
      for (const r of [await t.raw('GET', link), await t.raw('POST', link, form('a-new-secret'))]) {
        assert.equal(r.status, 410);
        assert.equal(title(r.text), 'Link expired');
      }
    } finally {
      nowMs -= PASSWORD_LINK_SECONDS * 1000;
    }
  });

  it("refuses a deactivated person's link", async () => {
    const link = linkFor(t.users.guest.id);
    doDeactivateUser(t.app, findUserById(t.app.db, t.app.realmId(), t.users.owner.id) as UserRow, t.users.guest.id);
    t.app.batch.commit();
    const r = await t.raw('POST', link, form('a-new-secret'));
    assert.equal(r.status, 410);
    assert.equal(title(r.text), 'Account deactivated');
  });
});

// An attacker's and a careless operator's view of the links (issue 18 review).
describe('set-password links: what they must not do', () => {
  const post = (link: string, password: string, headers: Record<string, string> = {}) =>
    fetch(t.url + link, { method: 'POST', redirect: 'manual', headers: { ...form('').headers, ...headers }, body: form(password).body });
  // Whether the session of a `parley_session=TOKEN` cookie is still there.
  const hasSession = (cookie: string) =>
    (stmt(t.app.db, 'SELECT count(*) AS n FROM session WHERE token_hash = ?').get(sessionTokenHash(cookie.slice(cookie.indexOf('=') + 1))) as { n: number }).n === 1;

  it("never works for a bot (bots log in with their API key): the link is as good as no link", async () => {
    const link = linkFor(t.users.bot.id);
    for (const r of [await t.raw('GET', link), await t.raw('POST', link, form('a-new-secret'))]) {
      assert.equal(r.status, 404);
      assert.equal(title(r.text), 'Link not found');
    }
    const row = stmt(t.app.db, 'SELECT password_hash FROM user WHERE id = ?').get(t.users.bot.id) as { password_hash: string | null };
    assert.equal(row.password_hash, null);
  });

  it('refuses every link while the organization is deactivated, and sets nothing', async () => {
    const link = linkFor(t.users.othello.id);
    const before = stmt(t.app.db, 'SELECT password_hash FROM user WHERE id = ?').get(t.users.othello.id);
    stmt(t.app.db, 'UPDATE realm SET deactivated = 1').run();
    try {
      for (const r of [await t.raw('GET', link), await t.raw('POST', link, form('a-new-secret'))]) {
        assert.equal(r.status, 410);
        assert.equal(title(r.text), 'Organization deactivated');
        assert.equal(r.headers.get('set-cookie'), null);
      }
    } finally {
      stmt(t.app.db, 'UPDATE realm SET deactivated = 0').run();
    }
    assert.deepEqual(stmt(t.app.db, 'SELECT password_hash FROM user WHERE id = ?').get(t.users.othello.id), before);
    assert.equal((await t.raw('GET', link)).status, 200);
  });

  it("ends the person's other sessions when it sets the password (as changing it does): a stolen cookie stops working", async () => {
    const login = await fetch(t.url + '/login', { method: 'POST', redirect: 'manual', ...form(''), body: `username=${encodeURIComponent(t.users.othello.email)}&password=${encodeURIComponent(t.users.othello.password)}` });
    assert.equal(login.status, 303);
    const old = (login.headers.get('set-cookie') ?? '').split(';')[0];
    assert.ok(hasSession(old));
    const r = await post(linkFor(t.users.othello.id), 'othello-new-secret');
    assert.equal(r.status, 303);
    const fresh = (r.headers.get('set-cookie') ?? '').split(';')[0];
    assert.ok(!hasSession(old));
    assert.ok(hasSession(fresh));
  });

  it('answers a guessed, malformed or oversized key with the same 404 (never a 500)', async () => {
    for (const key of ['A'.repeat(32), 'a'.repeat(31), '%00', '..%2F..%2Fetc', 'x'.repeat(8000), '\u00e9\u00e9']) {
      for (const r of [await t.raw('GET', `/accounts/password/set/${encodeURIComponent(key)}/`), await t.raw('POST', `/accounts/password/set/${encodeURIComponent(key)}/`, form('a-new-secret'))]) {
        assert.equal(r.status, 404, key);
        assert.equal(title(r.text), 'Link not found');
      }
    }
  });

  it("works for a guest as for anyone (guests are people), and the page carries the pages' headers: no caching, no Referer to other sites, the CSP", async () => {
    // The seeded guest is deactivated above: a guest of an imported workspace, without a password.
    const guest = doCreateUser(t.app, { realmId: t.app.realmId(), email: 'rosencrantz@example.com', password: null, fullName: 'Rosencrantz', role: ROLE.GUEST, botType: null, botOwnerId: null, acting: null });
    t.app.batch.commit();
    const link = linkFor(guest.userId);
    const r = await t.raw('GET', link);
    assert.equal(r.status, 200);
    for (const [name, value] of [
      ['cache-control', 'no-store'],
      ['referrer-policy', 'same-origin'],
      ['x-frame-options', 'DENY'],
      ['content-security-policy', "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"],
    ]) {
      assert.equal(r.headers.get(name), value, name);
    }
    // The form is served to the guest's address; no outside link on it.
    assert.ok(!/https?:\/\//.test(r.text.replace(/<head>[\s\S]*<\/head>/, '')), r.text);
  });
});

describe('set-password links: guessing keys', () => {
  it('counts every try against the address, as any anonymous request: guessing stops at the limit', async () => {
    const s = await startTestServer({
      configure: (c) => {
        c.rateLimits = true;
        c.rateLimitRules = { ...RULES, apiByIp: [{ max: 3, windowMs: 60_000 }] };
      },
    });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await s.raw('POST', `/accounts/password/set/guess${i}/`, form('a-new-secret'))).status);
      assert.deepEqual(statuses, [404, 404, 404, 429]);
      const key = doCreatePasswordLink(s.app, s.users.hamlet.id);
      s.app.batch.commit();
      // Even the right key waits: nothing is set.
      assert.equal((await s.raw('POST', `/accounts/password/set/${key}/`, form('a-new-secret'))).status, 429);
      assert.equal((await s.raw('GET', `/accounts/password/set/${key}/`)).status, 429);
    } finally {
      await s.close();
    }
  });
});

