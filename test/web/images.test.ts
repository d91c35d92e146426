// In a real browser: an uploaded image in a message shows as its preview (the file itself, loaded
// from Parley), an image on another site is not loaded (the page's policy) and shows its address,
// and an uploaded avatar shows next to its owner's messages.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { createChannel, sendToChannel } from '../helpers/chat';
import { launch, logIn, messageWith, person, screenshot, type Person } from '../helpers/browser';
import { multipart } from '../helpers/multipart';
import { basicAuth, startTestServer, type TestServer } from '../helpers/server';

let t: TestServer;
let browser: Browser;
let channel: number;
// A real 128×128 PNG (the built-in organization icon).
const IMAGE = fs.readFileSync(path.join(__dirname, '..', '..', 'assets', 'images', 'default-realm-icon.png'));

async function post(route: string, filename: string): Promise<Record<string, string>> {
  const { body, contentType } = multipart([{ field: 'file', filename, type: 'image/png', data: IMAGE }]);
  const res = await t.raw('POST', route, { headers: { authorization: basicAuth(t.users.hamlet), 'content-type': contentType }, body });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

before(async () => {
  [t, browser] = await Promise.all([startTestServer(), launch()]);
  channel = await createChannel(t, t.users.owner, 'pictures', [t.users.hamlet, t.users.othello]);
});
after(async () => {
  await browser.close();
  await t.close();
});

describe('images in the web app', () => {
  let othello: Person;
  before(async () => {
    othello = await person(browser);
  });
  after(async () => {
    assert.deepEqual(othello.errors, []);
    await othello.context.close();
  });

  it('shows an uploaded image’s preview and the sender’s uploaded avatar; not another site’s image', async () => {
    await post('/api/v1/users/me/avatar', 'me.png');
    const { url } = await post('/api/v1/user_uploads', 'icon.png');
    await sendToChannel(t, t.users.hamlet, channel, 'pics', `Our icon: [icon.png](${url})`);
    await sendToChannel(t, t.users.hamlet, channel, 'pics', 'Elsewhere: https://example.com/elsewhere.png');
    await sendToChannel(t, t.users.hamlet, channel, 'pics', 'https://example.com/bare.png');
    await logIn(othello, t.url, t.users.othello, `#narrow/channel/${channel}-pictures/topic/pics`);

    const ours = messageWith(othello.page, 'Our icon');
    const img = ours.locator('.message_inline_image img');
    await img.waitFor();
    await othello.page.waitForFunction((el) => (el as HTMLImageElement).complete && (el as HTMLImageElement).naturalWidth > 0, await img.elementHandle());
    assert.equal(await img.evaluate((el) => (el as HTMLImageElement).naturalWidth), 128);
    assert.equal(await ours.locator('.message_inline_image a').getAttribute('title'), 'icon.png');

    // Another site's image: not loaded. Its link is in the text, so the preview goes; a bare link the
    // preview replaced shows as its address.
    const theirs = messageWith(othello.page, 'Elsewhere');
    assert.equal(await theirs.locator('.message_inline_image').count(), 0);
    assert.equal(await theirs.locator('a').textContent(), 'https://example.com/elsewhere.png');
    const bare = messageWith(othello.page, 'https://example.com/bare.png');
    assert.equal(await bare.locator('.message_inline_image img').count(), 0);
    assert.equal(await bare.locator('.message_inline_image a').textContent(), 'https://example.com/bare.png');

    const avatar = othello.page.locator('.avatar img.loaded').first();
    await avatar.waitFor();
    assert.match((await avatar.getAttribute('src')) ?? '', /^\/user_avatars\/\d+\/[A-Za-z0-9_-]{32}\.png\?version=2$/);
    await screenshot(othello.page, 'images-preview-and-avatar');
  });
});
