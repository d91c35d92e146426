// In a real browser: the screen follows events without a reload. A message shows at once (local echo)
// and becomes the server's; edits, deletions, reactions, stars from another device, subscriptions added
// and removed, channel renames, name changes and muted topics all change what is on screen.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { createChannel, sendToChannel } from '../helpers/chat';
import { composeBox, launch, logIn, messageWith, person, screenshot, shownMessages, sidebarCount, sidebarLink, type Person } from '../helpers/browser';
import { startTestServer, type TestServer } from '../helpers/server';

let t: TestServer;
let browser: Browser;
let general: number;
let p: Person;

before(async () => {
  [t, browser] = await Promise.all([startTestServer(), launch()]);
  general = await createChannel(t, t.users.owner, 'general', [t.users.owner, t.users.hamlet, t.users.othello]);
  await sendToChannel(t, t.users.othello, general, 'plans', 'First plan');
  p = await person(browser);
  await logIn(p, t.url, t.users.hamlet, '#feed');
});
after(async () => {
  assert.deepEqual(p.errors, []);
  await browser.close();
  await t.close();
});

const channelNames = () => p.page.getByRole('navigation', { name: 'Channels' }).locator('ul.channels > li > a .name').allInnerTexts();

describe('what changes on screen by itself', () => {
  it('shows a message at once, then the server’s version of it', async () => {
    await p.page.goto(`${t.url}/#narrow/channel/${general}-general/topic/plans`);
    await messageWith(p.page, 'First plan').waitFor();
    // Hold the send so the local echo can be seen.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    await p.page.route('**/json/messages', async (route) => {
      if (route.request().method() === 'POST') await held;
      await route.continue();
    });
    const c = composeBox(p.page);
    await c.message.fill('Second plan, with **bold**');
    await c.send.click();
    const echo = messageWith(p.page, 'Second plan, with **bold**');
    await echo.getByText('Sending…').waitFor();
    release();
    const real = p.page.getByRole('region', { name: 'Messages' }).locator('article[data-id]').filter({ hasText: 'Second plan, with bold' });
    await real.locator('strong', { hasText: 'bold' }).waitFor();
    await echo.waitFor({ state: 'detached' });
    await p.page.unroute('**/json/messages');
    assert.deepEqual(await shownMessages(p.page), ['First plan', 'Second plan, with bold']);
  });

  it('replaces the echo of a sent message whose event is late by the message itself', async () => {
    // Hold back every answer of the event queue (the request goes out; its answer waits here).
    let hold = true;
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    await p.page.route('**/json/events?*', async (route) => {
      try {
        const response = await route.fetch();
        if (hold) await released;
        await route.fulfill({ response });
      } catch {
        // the page or the route went away meanwhile
      }
    });
    // A poll parked before the route would carry the event: end it with one event from elsewhere.
    await t.api(t.users.othello, 'POST', '/users/me/status', { status_text: 'busy' });
    await p.page.waitForTimeout(300);
    const c = composeBox(p.page);
    await c.message.fill('Sent while the events wait');
    await c.send.click();
    const real = p.page.getByRole('region', { name: 'Messages' }).locator('article[data-id]').filter({ hasText: 'Sent while the events wait' });
    await real.waitFor({ timeout: 10_000 });
    assert.equal(await p.page.locator('.local-echo').count(), 0);
    hold = false;
    release();
    await p.page.unrouteAll({ behavior: 'ignoreErrors' });
    // The late event changes nothing: the message is there once.
    await p.page.waitForTimeout(500);
    assert.equal(await real.count(), 1);
  });

  it('shows edits, reactions and deletions by others', async () => {
    const id = await sendToChannel(t, t.users.othello, general, 'plans', 'Meet at 5');
    await messageWith(p.page, 'Meet at 5').waitFor();
    assert.equal((await t.api(t.users.othello, 'PATCH', `/messages/${id}`, { content: 'Meet at 6' })).status, 200);
    await messageWith(p.page, 'Meet at 6').getByText('(edited)').waitFor();
    assert.equal((await t.api(t.users.othello, 'POST', `/messages/${id}/reactions`, { emoji_name: 'thumbs_up' })).status, 200);
    const reactions = messageWith(p.page, 'Meet at 6').getByRole('list', { name: 'Reactions' });
    await reactions.getByText('👍').waitFor();
    assert.equal((await t.api(t.users.owner, 'POST', `/messages/${id}/reactions`, { emoji_name: 'thumbs_up' })).status, 200);
    await reactions.locator('.reaction-count', { hasText: '2' }).waitFor();
    await screenshot(p.page, 'live-edit-reaction');
    assert.equal((await t.api(t.users.othello, 'DELETE', `/messages/${id}/reactions`, { emoji_name: 'thumbs_up' })).status, 200);
    await reactions.locator('.reaction-count', { hasText: '1' }).waitFor();
    assert.equal((await t.api(t.users.owner, 'DELETE', `/messages/${id}`)).status, 200);
    await messageWith(p.page, 'Meet at 6').waitFor({ state: 'detached' });
    assert.deepEqual(await shownMessages(p.page), ['First plan', 'Second plan, with bold', 'Sent while the events wait']);
  });

  it('shows a star set from another device, and stars from here', async () => {
    const [firstId] = (await t.api(t.users.hamlet, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 1, narrow: [{ operator: 'channel', operand: general }] })).body.messages.map(
      (m: { id: number }) => m.id,
    );
    assert.equal((await t.api(t.users.hamlet, 'POST', '/messages/flags', { messages: [firstId], op: 'add', flag: 'starred' })).status, 200);
    const star = messageWith(p.page, 'First plan').getByRole('button', { name: 'Unstar this message' });
    await star.waitFor();
    assert.equal(await star.getAttribute('aria-pressed'), 'true');
    assert.equal(await sidebarCount(p.page, 'Views', 'Starred'), 1);
    await messageWith(p.page, 'Second plan').hover();
    await messageWith(p.page, 'Second plan').getByRole('button', { name: 'Star this message' }).click();
    await messageWith(p.page, 'Second plan').getByRole('button', { name: 'Unstar this message' }).waitFor();
    await p.page.waitForFunction(() => (window as any).parley.store.state.starred.size === 2);
    const starred = (await t.api(t.users.hamlet, 'GET', '/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'is', operand: 'starred' }] })).body.messages;
    assert.equal(starred.length, 2);
  });

  it('adds and removes channels as subscriptions change, and follows renames', async () => {
    const created = await createChannel(t, t.users.owner, 'announcements', [t.users.owner]);
    assert.deepEqual(await channelNames(), ['general']);
    assert.equal((await t.api(t.users.owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'announcements' }], principals: [t.users.hamlet.id] })).status, 200);
    await sidebarLink(p.page, 'Channels', 'announcements').waitFor();
    assert.deepEqual(await channelNames(), ['announcements', 'general']);
    assert.equal((await t.api(t.users.owner, 'PATCH', `/streams/${general}`, { new_name: 'town square' })).status, 200);
    await sidebarLink(p.page, 'Channels', 'town square').waitFor();
    await p.page.getByRole('heading', { level: 1, name: '#town square > plans' }).waitFor();
    await p.page.getByRole('region', { name: 'Messages' }).getByRole('link', { name: '#town square' }).first().waitFor();
    assert.equal((await t.api(t.users.owner, 'DELETE', '/users/me/subscriptions', { subscriptions: ['announcements'], principals: [t.users.hamlet.id] })).status, 200);
    await sidebarLink(p.page, 'Channels', 'announcements').waitFor({ state: 'detached' });
    assert.deepEqual(await channelNames(), ['town square']);
    assert.ok(created > 0);
  });

  it('follows a change of someone’s name', async () => {
    assert.equal((await t.api(t.users.admin, 'PATCH', `/users/${t.users.othello.id}`, { full_name: 'Othello the Moor' })).status, 200);
    await messageWith(p.page, 'First plan').getByText('Othello the Moor').waitFor();
  });

  it('drops a topic muted on another device from all messages', async () => {
    await sendToChannel(t, t.users.othello, general, 'noise', 'Very loud chatter');
    await sidebarLink(p.page, 'Views', 'All messages').click();
    await messageWith(p.page, 'Very loud chatter').waitFor();
    const muted = await t.api(t.users.hamlet, 'POST', '/user_topics', { stream_id: general, topic: 'noise', visibility_policy: 1 });
    assert.equal(muted.status, 200, muted.text);
    await messageWith(p.page, 'Very loud chatter').waitFor({ state: 'detached' });
    await messageWith(p.page, 'First plan').waitFor();
    await screenshot(p.page, 'live-after-changes');
  });
});
