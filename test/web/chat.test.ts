// In a real browser, two people chatting: a channel message appears live for the other person with the
// unread counts moving, reading it clears the counts on every screen (also another device of the
// reader's); a direct-message conversation, group DMs in the sidebar, typing notices, and the Enter key
// following the enter_sends setting.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { createChannel } from '../helpers/chat';
import { composeBox, launch, logIn, messageWith, person, screenshot, shownMessages, sidebarCount, sidebarLink, type Person } from '../helpers/browser';
import { startTestServer, type TestServer } from '../helpers/server';

let t: TestServer;
let browser: Browser;
let general: number;
let random: number;
before(async () => {
  [t, browser] = await Promise.all([startTestServer(), launch()]);
  const everyone = [t.users.owner, t.users.hamlet, t.users.othello];
  general = await createChannel(t, t.users.owner, 'general', everyone);
  random = await createChannel(t, t.users.owner, 'random', everyone);
});
after(async () => {
  await browser.close();
  await t.close();
});


async function expectCount(page: Page, nav: string, name: string, n: number): Promise<void> {
  await page.waitForFunction(
    ([nav, name, n]) => {
      const navEl = [...document.querySelectorAll('nav')].find((e) => e.getAttribute('aria-label') === nav);
      const link = [...(navEl?.querySelectorAll('a') ?? [])].find((a) => a.querySelector('.name')?.textContent === name);
      if (!link) return false;
      const count = link.querySelector('.count');
      return (count ? Number(/\d+/.exec(count.textContent ?? '')?.[0]) : 0) === n;
    },
    [nav, name, n] as const,
  );
  assert.equal(await sidebarCount(page, nav, name), n);
}

describe('two people chatting', () => {
  let othello: Person;
  let hamlet: Person;
  let hamletPhone: Person;

  before(async () => {
    [othello, hamlet, hamletPhone] = await Promise.all([person(browser), person(browser), person(browser)]);
    await logIn(othello, t.url, t.users.othello, `#narrow/channel/${general}-general/topic/lunch`);
    // Hamlet looks at another channel on his laptop and at all messages elsewhere: the new message is
    // not on either screen, so it stays unread until he opens it.
    await logIn(hamlet, t.url, t.users.hamlet, `#narrow/channel/${random}-random`);
    await logIn(hamletPhone, t.url, t.users.hamlet, `#narrow/channel/${random}-random`);
  });
  after(async () => {
    for (const p of [othello, hamlet, hamletPhone]) {
      assert.deepEqual(p.errors, []);
      await p.context.close();
    }
  });

  it('shows a message live to the other person, with the unread counts moving', async () => {
    const c = composeBox(othello.page);
    assert.equal(await c.topic.inputValue(), 'lunch');
    await c.message.fill('Soup or salad today?');
    await c.send.click();
    await messageWith(othello.page, 'Soup or salad today?').waitFor();
    assert.equal(await c.message.inputValue(), '');

    for (const p of [hamlet, hamletPhone]) {
      await expectCount(p.page, 'Channels', 'general', 1);
      await expectCount(p.page, 'Views', 'All messages', 1);
      await p.page.waitForFunction(() => document.title.startsWith('(1) #random - Test Org'));
    }
    // Not in the open narrow: not on Hamlet's screen.
    assert.deepEqual(await shownMessages(hamlet.page), []);
  });

  it('reads it when opened, and every count goes to zero on every screen', async () => {
    await sidebarLink(hamlet.page, 'Channels', 'general').click();
    await hamlet.page.waitForURL(new RegExp(`#narrow/channel/${general}-general$`));
    await messageWith(hamlet.page, 'Soup or salad today?').waitFor();
    for (const p of [hamlet, hamletPhone]) {
      await expectCount(p.page, 'Channels', 'general', 0);
      await expectCount(p.page, 'Views', 'All messages', 0);
      await p.page.waitForFunction(() => !document.title.startsWith('('));
    }
    await expectCount(othello.page, 'Channels', 'general', 0);
    await screenshot(hamletPhone.page, 'chat-other-device');
  });

  it("lists the open channel's topics newest first with their unread counts, and opens one", async () => {
    await sidebarLink(hamlet.page, 'Channels', 'lunch').click();
    await hamlet.page.waitForURL(new RegExp(`#narrow/channel/${general}-general/topic/lunch$`));
    // A message in another topic: not in the open topic, so it waits unread in the topic list.
    assert.equal((await t.api(t.users.othello, 'POST', '/messages', { type: 'stream', to: general, topic: 'dinner', content: 'Pizza tonight' })).status, 200);
    await expectCount(hamlet.page, 'Channels', 'dinner', 1);
    await expectCount(hamlet.page, 'Channels', 'general', 1);
    const topics = await hamlet.page.getByRole('list', { name: 'Topics in general' }).getByRole('link').evaluateAll((links) => links.map((a) => a.querySelector('.name')?.textContent));
    assert.deepEqual(topics, ['dinner', 'lunch']);
    await screenshot(hamlet.page, 'chat-topic-unread');
    await sidebarLink(hamlet.page, 'Channels', 'dinner').click();
    await messageWith(hamlet.page, 'Pizza tonight').waitFor();
    await expectCount(hamlet.page, 'Channels', 'general', 0);
    await expectCount(hamletPhone.page, 'Channels', 'general', 0);
  });

  it('holds a direct-message conversation, with typing notices and Enter as the setting says', async () => {
    // Othello writes to Hamlet: the DM compose mode, recipients by name.
    const c = composeBox(othello.page);
    await c.directMode.click();
    await c.to.fill('King Hamlet');
    await c.message.fill('Are you free later?');
    await c.send.click();
    await expectCount(hamlet.page, 'Direct messages', 'Othello', 1);
    await sidebarLink(hamlet.page, 'Direct messages', 'Othello').click();
    await messageWith(hamlet.page, 'Are you free later?').waitFor();
    await expectCount(hamlet.page, 'Direct messages', 'Othello', 0);
    await expectCount(hamletPhone.page, 'Direct messages', 'Othello', 0);

    // Othello opens the conversation too; Hamlet starts typing and Othello sees it.
    await sidebarLink(othello.page, 'Direct messages', 'King Hamlet').click();
    await messageWith(othello.page, 'Are you free later?').waitFor();
    const box = composeBox(hamlet.page).message;
    assert.equal(await composeBox(hamlet.page).to.inputValue(), 'Othello');
    await box.pressSequentially('Yes', { delay: 20 });
    await othello.page.getByText('King Hamlet is typing…').waitFor();

    // enter_sends is off (Zulip's default): Enter adds a line, Ctrl+Enter sends.
    await box.press('Enter');
    await box.pressSequentially('after four', { delay: 10 });
    assert.equal(await box.inputValue(), 'Yes\nafter four');
    await box.press('Control+Enter');
    await messageWith(othello.page, 'after four').waitFor();
    assert.equal(await box.inputValue(), '');
    // Sending ends the typing notice.
    await othello.page.getByText('King Hamlet is typing…').waitFor({ state: 'detached' });

    // With enter_sends on, Enter sends and Shift+Enter adds a line.
    assert.equal((await t.api(t.users.hamlet, 'PATCH', '/settings', { enter_sends: true })).status, 200);
    await hamlet.page.getByText('Enter sends · Shift+Enter adds a line').waitFor();
    await box.pressSequentially('See you', { delay: 10 });
    await box.press('Shift+Enter');
    await box.pressSequentially('then', { delay: 10 });
    await box.press('Enter');
    await messageWith(othello.page, /See you\s+then/).waitFor();
    await screenshot(othello.page, 'chat-direct-messages');
  });

  it('lists group conversations and new ones from elsewhere, newest first', async () => {
    const r = await t.api(t.users.owner, 'POST', '/messages', { type: 'direct', to: [t.users.hamlet.id, t.users.othello.id], content: 'Team meeting at 3' });
    assert.equal(r.status, 200);
    await expectCount(hamlet.page, 'Direct messages', 'Desdemona and Othello', 1);
    const labels = await hamlet.page
      .getByRole('navigation', { name: 'Direct messages' })
      .getByRole('link')
      .evaluateAll((links) => links.map((a) => a.querySelector('.name')?.textContent));
    assert.deepEqual(labels, ['Desdemona and Othello', 'Othello']);
    await sidebarLink(hamlet.page, 'Direct messages', 'Desdemona and Othello').click();
    await hamlet.page.getByRole('heading', { name: 'Desdemona and Othello' }).waitFor();
    await messageWith(hamlet.page, 'Team meeting at 3').waitFor();
    await expectCount(hamlet.page, 'Direct messages', 'Desdemona and Othello', 0);
  });
});
