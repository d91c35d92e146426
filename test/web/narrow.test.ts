// In a real browser: narrows. Opening them from a shared address in Zulip's own form (channel, topic,
// DM, starred, mentions, old-style links), reloading keeps them, clicks in the sidebar and on narrow links
// inside messages navigate inside the app (no page load), Back works, and scrolling up loads older
// messages without moving what is on screen.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { createChannel, sendToChannel } from '../helpers/chat';
import { launch, logIn, messageWith, person, screenshot, shownMessages, sidebarLink, waitIdle, type Person } from '../helpers/browser';
import { startTestServer, type TestServer } from '../helpers/server';

let t: TestServer;
let browser: Browser;
let general: number;
let history: number;
let starredId: number;
let p: Person;
const OLD = 180;

before(async () => {
  [t, browser] = await Promise.all([startTestServer(), launch()]);
  const people = [t.users.owner, t.users.hamlet, t.users.othello];
  general = await createChannel(t, t.users.owner, 'general', people);
  history = await createChannel(t, t.users.owner, 'long history', people);
  for (let i = 1; i <= OLD; i++) await sendToChannel(t, t.users.othello, history, 'archive', `Old message number ${i}`);
  await sendToChannel(t, t.users.othello, general, 'lunch', 'Soup today?');
  starredId = await sendToChannel(t, t.users.othello, general, 'plans', `See #**general>lunch** for food, and @**King Hamlet** please reply`);
  await t.api(t.users.hamlet, 'POST', '/messages', { type: 'direct', to: [t.users.othello.id], content: 'A private word' });
  await t.api(t.users.hamlet, 'POST', '/messages/flags', { messages: [starredId], op: 'add', flag: 'starred' });
  // Everything read, so lists open at their newest messages.
  await t.api(t.users.hamlet, 'POST', '/mark_all_as_read');
  p = await person(browser);
  await logIn(p, t.url, t.users.hamlet);
});
after(async () => {
  assert.deepEqual(p.errors, []);
  await browser.close();
  await t.close();
});

const title = (page: Page) => page.getByRole('heading', { level: 1 });

async function open(hash: string): Promise<void> {
  await p.page.goto(`${t.url}/${hash}`);
  await p.page.getByRole('region', { name: 'Messages' }).waitFor();
  await waitIdle(p.page);
}

describe('narrows from the address bar', () => {
  it('opens channel, topic, DM, starred and mentions links in Zulip form, and keeps them on reload', async () => {
    const cases: [string, string, string[]][] = [
      [`#narrow/channel/${general}-general`, '#general', ['Soup today?', 'See #general > lunch for food, and @King Hamlet please reply']],
      [`#narrow/channel/${general}-general/topic/lunch`, '#general > lunch', ['Soup today?']],
      [`#narrow/dm/${t.users.othello.id}-Othello`, 'Othello', ['A private word']],
      ['#narrow/is/starred', 'Starred messages', ['See #general > lunch for food, and @King Hamlet please reply']],
      ['#narrow/is/mentioned', 'Mentions', ['See #general > lunch for food, and @King Hamlet please reply']],
    ];
    for (const [hash, heading, texts] of cases) {
      await open(hash);
      assert.equal(await title(p.page).innerText(), heading, hash);
      assert.deepEqual(await shownMessages(p.page), texts, hash);
      await p.page.reload();
      await waitIdle(p.page);
      assert.equal(new URL(p.page.url()).hash, hash);
      assert.equal(await title(p.page).innerText(), heading, `${hash} after reload`);
    }
  });

  it('reads old-style links and writes them back in the current form', async () => {
    await open('#narrow/stream/general/subject/lunch');
    assert.equal(await title(p.page).innerText(), '#general > lunch');
    assert.equal(new URL(p.page.url()).hash, `#narrow/channel/${general}-general/topic/lunch`);
    await open(`#narrow/pm-with/${t.users.othello.id}-othello`);
    assert.equal(await title(p.page).innerText(), 'Othello');
  });

  it('says so when a link cannot be read, and shows all messages', async () => {
    await open('#narrow/channel/%E0%A4%A/topic');
    await p.page.getByRole('status').getByText('That link could not be read').waitFor();
    assert.equal(await title(p.page).innerText(), 'All messages');
  });
});

describe('navigating inside the app', () => {
  it('narrows by clicking the sidebar, and Back returns', async () => {
    await open('#feed');
    await p.page.evaluate(() => ((window as any).stillTheSamePage = true));
    await sidebarLink(p.page, 'Channels', 'general').click();
    await p.page.waitForURL(new RegExp(`#narrow/channel/${general}-general$`));
    await sidebarLink(p.page, 'Channels', 'lunch').click();
    await p.page.waitForURL(new RegExp(`#narrow/channel/${general}-general/topic/lunch$`));
    await p.page.getByRole('heading', { level: 1, name: '#general > lunch', exact: true }).waitFor();
    await p.page.goBack();
    await p.page.waitForURL(new RegExp(`#narrow/channel/${general}-general$`));
    await p.page.getByRole('heading', { level: 1, name: '#general', exact: true }).waitFor();
    assert.equal(await p.page.evaluate(() => (window as any).stillTheSamePage), true);
  });

  it('follows a narrow link inside a message within the app', async () => {
    await open(`#narrow/channel/${general}-general/topic/plans`);
    await p.page.evaluate(() => ((window as any).stillTheSamePage = true));
    await messageWith(p.page, 'for food').getByRole('link', { name: '#general > lunch' }).click();
    await messageWith(p.page, 'Soup today?').waitFor();
    assert.equal(await title(p.page).innerText(), '#general > lunch');
    assert.match(new URL(p.page.url()).hash, new RegExp(`^#narrow/channel/${general}-general/topic/lunch/with/\\d+$`));
    assert.equal(await p.page.evaluate(() => (window as any).stillTheSamePage), true);
  });
});

describe('scrolling', () => {
  it('loads older messages when scrolled up, without moving what is on screen', async () => {
    await open(`#narrow/channel/${history}-long-history/topic/archive`);
    const list = p.page.getByRole('region', { name: 'Messages' });
    const count = () => list.getByRole('article').count();
    const first = await count();
    assert.ok(first > 0 && first < OLD, `a first page, not everything (${first})`);
    // Opened at the newest message, at the bottom.
    assert.equal(await list.evaluate((el) => Math.round(el.scrollHeight - el.scrollTop - el.clientHeight)), 0);
    while ((await count()) < OLD) {
      const before = await count();
      // Hold the page of older messages until the list has been scrolled to its top and measured.
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      await p.page.route('**/json/messages?*', async (route) => {
        await held;
        await route.continue();
      });
      await list.evaluate((el) => el.scrollTo(0, 0));
      const topText = (await shownMessages(p.page))[0];
      const anchor = list.locator('article .content', { hasText: new RegExp(`^${topText}$`) });
      const topBefore = (await anchor.boundingBox())!.y;
      release();
      await p.page.waitForFunction((n) => document.querySelectorAll('[aria-label="Messages"] article').length > n, before);
      await waitIdle(p.page);
      await p.page.unroute('**/json/messages?*');
      // The message that was at the top is where it was: scrolling up did not jump.
      const topAfter = (await anchor.boundingBox())!.y;
      assert.ok(Math.abs(topAfter - topBefore) < 2, `no jump: ${topBefore} → ${topAfter}`);
      const shown = await shownMessages(p.page);
      assert.equal(shown.indexOf(topText), (await count()) - before);
    }
    assert.deepEqual(await shownMessages(p.page), Array.from({ length: OLD }, (_, i) => `Old message number ${i + 1}`));
    await list.evaluate((el) => el.scrollTo(0, 0));
    await p.page.getByText('This is the start of the conversation.').waitFor();
    await screenshot(p.page, 'narrow-history-top');
  });
});
