// In a real browser: what hostile names can do to what others see. A name may carry Unicode's
// directional formatting (Zulip allows it); where the app puts it into a longer text (a group's names,
// the narrow's heading), its formatting must end with the name instead of reversing what follows.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Locator } from 'playwright-core';
import type { Browser } from 'playwright-core';
import { createChannel, sendDirect, sendToChannel } from '../helpers/chat';
import { launch, logIn, person, screenshot, waitIdle } from '../helpers/browser';
import { PASSWORD, startTestServer, type TestServer, type TestUser } from '../helpers/server';

let t: TestServer;
let browser: Browser;
before(async () => {
  [t, browser] = await Promise.all([startTestServer(), launch()]);
});
after(async () => {
  await browser.close();
  await t.close();
});

/** Whether `word`'s first two letters, inside `el`'s text, are drawn left to right (as English reads). */
function readsLeftToRight(el: Locator, word: string): Promise<boolean> {
  return el.evaluate((root, w) => {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const at = (node.textContent ?? '').indexOf(w);
      if (at === -1) continue;
      // (No helper function here: the test build would wrap it in a name helper the page lacks.)
      const lefts: number[] = [];
      for (let i = 0; i < 2; i++) {
        const range = document.createRange();
        range.setStart(node, at + i);
        range.setEnd(node, at + i + 1);
        lefts.push(range.getBoundingClientRect().left);
      }
      return lefts[0] < lefts[1];
    }
    throw new Error(`no text node holds ${w}`);
  }, word);
}

describe('names with directional formatting', () => {
  // Shown "Eve exe.pdf": the U+202E RIGHT-TO-LEFT OVERRIDE reverses what follows it, unless contained.
  const EVE = 'Eve \u202efdp.exe';

  it('do not reverse the other names of a group, nor the topic after a channel name', async () => {
    const created = await t.api(t.users.owner, 'POST', '/users', { email: 'eve@example.com', password: PASSWORD, full_name: EVE });
    assert.equal(created.status, 200, created.text);
    const key = await t.api(null, 'POST', '/fetch_api_key', { username: 'eve@example.com', password: PASSWORD });
    const eve: TestUser = { id: created.body.user_id, email: 'eve@example.com', apiKey: key.body.api_key, password: PASSWORD, fullName: EVE };
    await sendDirect(t, eve, [t.users.hamlet, t.users.othello], 'hello both');
    // A PDI first: it would close an isolate set around the name early, freeing the override.
    const channel = await createChannel(t, t.users.owner, 'news \u2069\u202ewen', [t.users.owner, t.users.hamlet]);
    await sendToChannel(t, t.users.owner, channel, 'lunch', 'Soup today?');

    const p = await person(browser);
    await logIn(p, t.url, t.users.hamlet, `#narrow/channel/${channel}/topic/lunch`);
    const heading = p.page.getByRole('heading', { level: 1 });
    assert.ok(await readsLeftToRight(heading, 'lunch'), 'the topic in the heading reads left to right');

    const dms = p.page.getByRole('navigation', { name: 'Direct messages' });
    const group = dms.getByRole('link').filter({ hasText: 'Othello' });
    assert.ok(await readsLeftToRight(group, 'Othello'), "Othello's name in the sidebar reads left to right");
    await group.click();
    await waitIdle(p.page);
    assert.ok(await readsLeftToRight(heading, 'Othello'), 'Othello in the heading reads left to right');
    const header = p.page.getByRole('region', { name: 'Messages' }).locator('header.recipient');
    assert.ok(await readsLeftToRight(header, 'Othello'), "Othello's name in the conversation's header reads left to right");
    assert.match(await p.page.title(), /Othello/);
    await screenshot(p.page, 'bidi-names');
    assert.deepEqual(p.errors, []);
    await p.context.close();
  });
});
