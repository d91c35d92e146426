// Browser tests: a real Chromium (Debian's `chromium`, driven by playwright-core), people logging in
// through the login form in their own browser contexts, and screenshots of each scenario's last screen
// in test-artifacts/screenshots/ (left on disk by .ci/run, to be looked at).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { TestUser } from './server';

export const SCREENSHOTS = path.join(__dirname, '..', '..', 'test-artifacts', 'screenshots');

/** Chromium's executable: PARLEY_CHROMIUM, else the first of the usual places. */
export function chromiumPath(): string {
  const candidates = [process.env.PARLEY_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].filter(Boolean) as string[];
  const found = candidates.find((p) => fs.existsSync(p));
  if (!found) throw new Error('No Chromium found: install it (apt-get install -y chromium; .ci/run does) or set PARLEY_CHROMIUM');
  return found;
}

export async function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    // As this machine's notes advise: no sandbox as root, and none of Chromium's own network traffic.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export const LAPTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

export interface Person {
  context: BrowserContext;
  page: Page;
  /** Errors the page reported (uncaught exceptions, CSP violations, console errors other than avatars). */
  errors: string[];
}

/** Opens a fresh browser context for someone (its own cookies), collecting what goes wrong in the page. */
export async function person(browser: Browser, viewport = LAPTOP): Promise<Person> {
  // Reduced motion: no sliding drawer caught half-way in a screenshot.
  const context = await browser.newContext({ viewport, reducedMotion: 'reduce' });
  // Gravatar is out of reach here: answer at once instead of waiting on DNS.
  await context.route('https://secure.gravatar.com/**', (route) => route.abort());
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    const text = m.text();
    // The browser logs every request that failed or answered an error status (aborted avatars, refused
    // sends); the app shows those itself. Anything else (exceptions, CSP violations) is a test failure.
    if (/^Failed to load resource/.test(text)) return;
    errors.push(`console: ${text}`);
  });
  return { context, page, errors };
}

/** Logs in through the real form (from `/` plus an optional hash) and waits for the app. */
export async function logIn(p: Person, baseUrl: string, user: Pick<TestUser, 'email' | 'password'>, hash = ''): Promise<void> {
  await p.page.goto(baseUrl + '/' + hash);
  assert.match(new URL(p.page.url()).pathname, /^\/login$/);
  await p.page.getByLabel('Email').fill(user.email);
  await p.page.getByLabel('Password').fill(user.password);
  await p.page.getByRole('button', { name: 'Log in' }).click();
  await p.page.getByRole('region', { name: 'Messages' }).waitFor();
  await waitIdle(p.page);
}

/** Waits until the app has loaded the open narrow's messages. */
export async function waitIdle(page: Page): Promise<void> {
  await page.waitForFunction(() => {
    const c = (window as any).parley;
    return c && c.store && c.ui.fetching.size === 0 && !document.querySelector('.list-status');
  });
}

export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file });
  return file;
}

/** The messages shown in the list, as "Sender: text" (the sender line is on the group's first message). */
export async function shownMessages(page: Page): Promise<string[]> {
  return page.getByRole('region', { name: 'Messages' }).getByRole('article').evaluateAll((articles) =>
    articles.map((a) => (a.querySelector('.content') as HTMLElement | null)?.innerText.trim() ?? ''),
  );
}

/** The sidebar link named `name` (its accessible name: "general", or "general 3 unread"). */
export function sidebarLink(page: Page, nav: string, name: string) {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return page.getByRole('navigation', { name: nav }).getByRole('link', { name: new RegExp(`^${escaped}( \\d+ (unread|starred))?$`) });
}

/** The unread count in a sidebar link (none shown → 0). */
export async function sidebarCount(page: Page, nav: string, name: string): Promise<number> {
  const link = sidebarLink(page, nav, name);
  assert.equal(await link.count(), 1, `one link named ${name} in ${nav}`);
  const label = (await link.getAttribute('aria-label')) ?? (await link.evaluate((a) => (a as HTMLElement).innerText));
  const m = /(\d+)\s*(unread|starred)?$/.exec(label.trim());
  return m ? Number(m[1]) : 0;
}

/** The compose box's controls, by the names the issue fixes (exact, so "Message" is not "Message type"). */
export function composeBox(page: Page) {
  const form = page.getByRole('form', { name: 'Compose' });
  return {
    form,
    message: form.getByRole('textbox', { name: 'Message', exact: true }),
    topic: form.getByRole('textbox', { name: 'Topic', exact: true }),
    to: form.getByRole('combobox', { name: 'To', exact: true }),
    channel: form.getByRole('combobox', { name: 'Channel', exact: true }),
    send: form.getByRole('button', { name: 'Send', exact: true }),
    directMode: form.getByRole('button', { name: 'Direct message', exact: true }),
    channelMode: form.getByRole('button', { name: 'Channel', exact: true }),
  };
}

/** The message list's article containing `text`. */
export function messageWith(page: Page, text: string | RegExp) {
  return page.getByRole('region', { name: 'Messages' }).getByRole('article').filter({ hasText: text });
}
