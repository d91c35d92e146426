// In a real browser: how the app looks and is reached. A lived-in organization on a laptop window
// (1280×800) and on a phone (390×844, the sidebar behind a button), every control reachable by keyboard,
// the dark theme from the user's setting; screenshots of each for people to look at.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { createChannel, sendToChannel } from '../helpers/chat';
import { composeBox, launch, LAPTOP, logIn, messageWith, person, PHONE, screenshot, sidebarLink, waitIdle } from '../helpers/browser';
import { startTestServer, type TestServer } from '../helpers/server';

let t: TestServer;
let browser: Browser;
let design: number;

before(async () => {
  [t, browser] = await Promise.all([startTestServer(), launch()]);
  const { owner, hamlet, othello, admin } = t.users;
  const all = [owner, hamlet, othello, admin];
  design = await createChannel(t, owner, 'design', all);
  const general = await createChannel(t, owner, 'general', all);
  await createChannel(t, owner, 'engineering', all);
  await createChannel(t, owner, 'leadership', [owner, hamlet], { invite_only: true });
  const social = await createChannel(t, owner, 'social', all);
  const muted = await t.api(hamlet, 'POST', '/users/me/subscriptions/properties', {
    subscription_data: [{ stream_id: social, property: 'is_muted', value: true }],
  });
  assert.equal(muted.status, 200, muted.text);
  await sendToChannel(t, othello, general, 'welcome', 'Welcome to **Test Org**! :tada:');
  await sendToChannel(t, admin, design, 'new logo', 'Here are the three options we discussed:\n1. The round one\n2. The square one\n3. The one with the bird');
  await sendToChannel(t, othello, design, 'new logo', 'I like the bird. @**King Hamlet** what do you think?');
  await sendToChannel(t, owner, design, 'new logo', '> I like the bird.\n\nSame here. Ship it :rocket:');
  const code = await sendToChannel(t, admin, design, 'colors', 'The palette, as CSS:\n```css\n:root {\n  --accent: #2864b4;\n}\n```\nThe contrast ratio is $$4.5:1$$ or better.');
  await t.api(othello, 'POST', `/messages/${code}/reactions`, { emoji_name: 'thumbs_up' });
  await t.api(hamlet, 'POST', `/messages/${code}/reactions`, { emoji_name: 'thumbs_up' });
  await t.api(hamlet, 'POST', '/messages/flags', { messages: [code], op: 'add', flag: 'starred' });
  await sendToChannel(t, othello, general, 'lunch', 'Anyone for lunch at noon? See https://example.com/menu');
  await t.api(othello, 'POST', '/messages', { type: 'direct', to: [hamlet.id], content: 'Can you review my PR?' });
  await t.api(admin, 'POST', '/messages', { type: 'direct', to: [hamlet.id, othello.id], content: 'Standup moved to 10:30' });
});
after(async () => {
  await browser.close();
  await t.close();
});

describe('the app on a laptop and a phone', () => {
  it('looks like a chat app on a laptop window', async () => {
    const p = await person(browser, LAPTOP);
    await logIn(p, t.url, t.users.hamlet, `#narrow/channel/${design}-design`);
    await messageWith(p.page, 'The palette, as CSS').getByRole('list', { name: 'Reactions' }).waitFor();
    // Private channels show a lock, muted ones come last.
    const channels = await p.page
      .getByRole('navigation', { name: 'Channels' })
      .locator('ul.channels > li > a .name')
      .allInnerTexts();
    assert.deepEqual(channels, ['design', 'engineering', 'general', 'leadership', 'social']);
    assert.equal(await p.page.getByRole('navigation', { name: 'Channels' }).locator('li.muted .name').innerText(), 'social');
    await screenshot(p.page, 'laptop');
    assert.deepEqual(p.errors, []);
    await p.context.close();
  });

  it('keeps the sidebar behind a button on a phone', async () => {
    const p = await person(browser, PHONE);
    await logIn(p, t.url, t.users.hamlet, `#narrow/channel/${design}-design/topic/new logo`);
    const sidebar = p.page.getByRole('navigation', { name: 'Channels' });
    assert.equal(await sidebar.isVisible(), false);
    await screenshot(p.page, 'phone');
    const open = p.page.getByRole('button', { name: 'Open sidebar' });
    assert.equal(await open.getAttribute('aria-expanded'), 'false');
    await open.click();
    await sidebar.waitFor({ state: 'visible' });
    await screenshot(p.page, 'phone-sidebar');
    await sidebarLink(p.page, 'Direct messages', 'Othello').click();
    await sidebar.waitFor({ state: 'hidden' });
    await messageWith(p.page, 'Can you review my PR?').waitFor();
    await composeBox(p.page).message.waitFor({ state: 'visible' });
    await screenshot(p.page, 'phone-dm');
    assert.deepEqual(p.errors, []);
    await p.context.close();
  });

  it('reaches every control by keyboard', async () => {
    const p = await person(browser, LAPTOP);
    await logIn(p, t.url, t.users.hamlet, '#feed');
    const reached = new Set<string>();
    await p.page.locator('body').focus();
    for (let i = 0; i < 80; i++) {
      await p.page.keyboard.press('Tab');
      const name = await p.page.evaluate(() => {
        const el = document.activeElement as HTMLElement | null;
        if (!el || el === document.body) return '';
        const label = el.getAttribute('aria-label') ?? (el as HTMLElement).innerText ?? '';
        return `${el.tagName.toLowerCase()}:${label.trim().split('\n')[0]}`;
      });
      reached.add(name);
    }
    for (const want of ['a:All messages', 'a:Mentions', 'a:Starred', 'a:design', 'a:Othello', 'section:Messages', 'textarea:Message', 'button:Send', 'input:Topic', 'select:Channel', 'button:Log out']) {
      assert.ok([...reached].some((r) => r.startsWith(want)), `${want} reachable by Tab (reached: ${[...reached].join(', ')})`);
    }
    // Enter on a focused sidebar link opens its narrow.
    await sidebarLink(p.page, 'Channels', 'general').focus();
    await p.page.keyboard.press('Enter');
    await p.page.waitForURL(/#narrow\/channel\/\d+-general$/);
    await waitIdle(p.page);
    assert.deepEqual(p.errors, []);
    await p.context.close();
  });

  it('follows the color_scheme setting, live', async () => {
    const p = await person(browser, LAPTOP);
    await logIn(p, t.url, t.users.hamlet, `#narrow/channel/${design}-design`);
    assert.equal((await t.api(t.users.hamlet, 'PATCH', '/settings', { color_scheme: 2 })).status, 200);
    await p.page.waitForFunction(() => document.documentElement.dataset.theme === 'dark');
    const bg = await p.page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(bg, 'rgb(27, 30, 35)');
    await screenshot(p.page, 'laptop-dark');
    assert.equal((await t.api(t.users.hamlet, 'PATCH', '/settings', { color_scheme: 3 })).status, 200);
    await p.page.waitForFunction(() => document.documentElement.dataset.theme === 'light');
    assert.deepEqual(p.errors, []);
    await p.context.close();
  });
});
