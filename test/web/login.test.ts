// In a real browser: getting in and out. `/` without a session redirects to the login page; the login
// form (refused in Chromium before: Origin: null) lands in the app, at the narrow opened before logging
// in; sign-up through an invitation lands in the app too; "Log out" ends the session.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { createChannel, sendToChannel } from '../helpers/chat';
import { launch, logIn, person, screenshot, sidebarLink, waitIdle } from '../helpers/browser';
import { startTestServer, type TestServer } from '../helpers/server';

let t: TestServer;
let browser: Browser;
let lunch: number;
before(async () => {
  [t, browser] = await Promise.all([startTestServer(), launch()]);
  const general = await createChannel(t, t.users.owner, 'general', [t.users.owner, t.users.hamlet, t.users.othello]);
  lunch = await sendToChannel(t, t.users.othello, general, 'lunch', 'Soup today?');
});
after(async () => {
  await browser.close();
  await t.close();
});

describe('logging in and out in a browser', () => {
  it('redirects / to /login, logs in into the app at /, and logs out back to /login', async () => {
    const p = await person(browser);
    const res = await p.page.goto(t.url + '/');
    assert.equal(res?.request().redirectedFrom()?.url(), t.url + '/');
    assert.equal(new URL(p.page.url()).pathname, '/login');
    assert.equal(await p.page.title(), 'Log in');
    await p.page.getByLabel('Email').fill(t.users.hamlet.email);
    await p.page.getByLabel('Password').fill(t.users.hamlet.password);
    await p.page.getByRole('button', { name: 'Log in' }).click();
    await p.page.getByRole('region', { name: 'Messages' }).waitFor();
    await waitIdle(p.page);
    assert.equal(new URL(p.page.url()).pathname, '/');
    const banner = p.page.getByRole('banner');
    await banner.getByText('Test Org').waitFor();
    await banner.getByText('King Hamlet').waitFor();
    await p.page.getByRole('navigation', { name: 'Channels' }).getByRole('link', { name: /^general/ }).waitFor();
    await screenshot(p.page, 'login-app');

    await p.page.getByRole('button', { name: 'Log out' }).click();
    await p.page.waitForURL(/\/login$/);
    await p.page.getByRole('button', { name: 'Log in' }).waitFor();
    // The session is over: the app sends the browser back to the login page.
    await p.page.goto(t.url + '/');
    assert.equal(new URL(p.page.url()).pathname, '/login');
    assert.deepEqual(p.errors, []);
    await p.context.close();
  });

  it('sends an open app to the login page when its session has ended (logged out in another tab)', async () => {
    const p = await person(browser);
    await logIn(p, t.url, t.users.othello, '#feed');
    const other = await p.context.newPage();
    await other.goto(t.url + '/');
    await other.getByRole('button', { name: 'Log out' }).click();
    await other.waitForURL(/\/login$/);
    // The next request of the first tab is refused (401) and the app goes to the login page.
    await sidebarLink(p.page, 'Channels', 'general').click();
    await p.page.waitForURL(/\/login(#.*)?$/);
    await p.page.getByRole('button', { name: 'Log in' }).waitFor();
    assert.deepEqual(p.errors, []);
    await p.context.close();
  });

  it('shows a wrong password on the login page, keeping the address typed', async () => {
    const p = await person(browser);
    await p.page.goto(t.url + '/login');
    await p.page.getByLabel('Email').fill(t.users.hamlet.email);
    await p.page.getByLabel('Password').fill('not-the-password');
    await p.page.getByRole('button', { name: 'Log in' }).click();
    await p.page.getByRole('alert').getByText('Your username or password is incorrect').waitFor();
    assert.equal(await p.page.getByLabel('Email').inputValue(), t.users.hamlet.email);
    await screenshot(p.page, 'login-wrong-password');
    await p.context.close();
  });

  it('lands on the narrow that was opened before logging in', async () => {
    const p = await person(browser);
    const hash = `#narrow/channel/${(await t.api(t.users.hamlet, 'GET', '/get_stream_id', { stream: 'general' })).body.stream_id}-general/topic/lunch`;
    await logIn(p, t.url, t.users.hamlet, hash);
    assert.equal(new URL(p.page.url()).hash, hash);
    await p.page.getByRole('heading', { name: '#general > lunch' }).waitFor();
    await p.page.getByRole('article').filter({ hasText: 'Soup today?' }).waitFor();
    assert.ok(lunch > 0);
    assert.deepEqual(p.errors, []);
    await p.context.close();
  });

  it('signs up through an invitation link, confirming the address by email, and lands in the app', async () => {
    const invite = await t.api(t.users.owner, 'POST', '/invites/multiuse', { invite_expires_in_minutes: 60, invite_as: 400 });
    assert.equal(invite.status, 200, invite.text);
    const p = await person(browser);
    await p.page.goto(invite.body.invite_link);
    await p.page.getByLabel('Email').fill('newcomer@example.com');
    await p.page.getByRole('button', { name: 'Continue' }).click();
    await p.page.getByText('We sent a link to newcomer@example.com').waitFor();
    await screenshot(p.page, 'signup-check-email');
    // The link in the email finishes the sign-up.
    const outbox = path.join(t.dataDir, 'outbox');
    const mail = fs.readdirSync(outbox).map((f) => fs.readFileSync(path.join(outbox, f), 'utf8')).find((m) => m.includes('\r\nTo: newcomer@example.com\r\n'));
    assert.ok(mail, 'the confirmation email is in the outbox');
    const link = (/(http:\/\/\S+\/join\/[a-z0-9]{24}\/)/.exec(mail) as RegExpExecArray)[1];
    await p.page.goto(link);
    await p.page.getByText('Email: newcomer@example.com').waitFor();
    await p.page.getByLabel('Full name').fill('New Comer');
    await p.page.getByLabel('Password').fill('a-long-enough-password');
    await screenshot(p.page, 'signup-form');
    await p.page.getByRole('button', { name: 'Create account' }).click();
    await p.page.getByRole('region', { name: 'Messages' }).waitFor();
    await waitIdle(p.page);
    await p.page.getByRole('banner').getByText('New Comer').waitFor();
    assert.equal(new URL(p.page.url()).pathname, '/');
    assert.deepEqual(p.errors, []);
    await p.context.close();
  });
});
