// In a real browser: what goes wrong. A send the server refuses shows its reason and keeps the text; a
// server that stops under an open page is reported, retried and recovered from on its own (the single
// executable, restarted on the same port: the queue is gone, so the app registers again), keeping the
// compose box's text and sending a message that failed meanwhile on Retry; failed loads say what failed
// and offer a retry; hostile message content renders as text and runs nothing.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import type { Browser } from 'playwright-core';
import { createChannel, systemGroups } from '../helpers/chat';
import { apiCall, BINARY, initDataDir, makeTempDirs, startServe, type ServeProcess } from '../helpers/cli';
import { composeBox, launch, logIn, messageWith, person, screenshot, shownMessages, waitIdle } from '../helpers/browser';
import { startTestServer, type TestServer } from '../helpers/server';

/** A port nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

let browser: Browser;
before(async () => {
  browser = await launch();
});
after(() => browser.close());

describe('a send the server refuses', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(() => t.close());

  it('shows the reason and gives the text back, sending nothing', async () => {
    const announcements = await createChannel(t, t.users.owner, 'announcements', [t.users.owner, t.users.hamlet], {
      can_send_message_group: systemGroups(t)['role:administrators'],
    });
    const p = await person(browser);
    await logIn(p, t.url, t.users.hamlet, `#narrow/channel/${announcements}-announcements/topic/news`);
    const c = composeBox(p.page);
    await c.message.fill('Free cake in the kitchen');
    await c.send.click();
    await c.form.getByRole('alert').getByText('You do not have permission to post in this channel.').waitFor();
    assert.equal(await c.message.inputValue(), 'Free cake in the kitchen');
    assert.deepEqual(await shownMessages(p.page), []);
    const onServer = await t.api(t.users.owner, 'GET', '/messages', { anchor: 'newest', num_before: 5, num_after: 0, narrow: [{ operator: 'channel', operand: announcements }] });
    assert.deepEqual(onServer.body.messages, []);
    await screenshot(p.page, 'refused-send');
    // An empty message is refused before it is sent.
    await c.message.fill('   ');
    await c.send.click();
    await c.form.getByRole('alert').getByText('Write a message first.').waitFor();
    assert.deepEqual(p.errors, []);
    await p.context.close();
  });

  it('renders hostile content as text and runs none of it', async () => {
    const lab = await createChannel(t, t.users.owner, 'lab', [t.users.owner, t.users.hamlet]);
    const attacks = [
      '<script>window.pwned = 1</script>',
      '<img src=x onerror="window.pwned = 2">',
      '[click me](javascript:window.pwned=3)',
      '<a href="javascript:window.pwned=4">plain link</a>',
      '<iframe src="/json/users/me"></iframe><style>body{display:none}</style>',
    ];
    for (const content of attacks) {
      const r = await t.api(t.users.owner, 'POST', '/messages', { type: 'stream', to: lab, topic: 'xss', content });
      assert.equal(r.status, 200);
    }
    const p = await person(browser);
    let dialogs = 0;
    p.page.on('dialog', (d) => {
      dialogs++;
      void d.dismiss();
    });
    await logIn(p, t.url, t.users.hamlet, `#narrow/channel/${lab}-lab/topic/xss`);
    const shown = await shownMessages(p.page);
    assert.deepEqual(shown, [
      '<script>window.pwned = 1</script>',
      '<img src=x onerror="window.pwned = 2">',
      '[click me](javascript:window.pwned=3)',
      '<a href="javascript:window.pwned=4">plain link</a>',
      '<iframe src="/json/users/me"></iframe><style>body{display:none}</style>',
    ]);
    const list = p.page.getByRole('region', { name: 'Messages' });
    assert.equal(await list.locator('.content').locator('script, img, iframe, style, [onerror]').count(), 0);
    for (const link of await list.locator('.content a').all()) {
      const href = await link.getAttribute('href');
      assert.ok(!href || !/^\s*javascript:/i.test(href), `no javascript: link (${href})`);
    }
    // Clicking what looks like a link does nothing either.
    await messageWith(p.page, 'click me').click();
    await p.page.waitForTimeout(200);
    assert.equal(await p.page.evaluate(() => (window as any).pwned), undefined);
    assert.equal(dialogs, 0);
    await screenshot(p.page, 'hostile-content');
    assert.deepEqual(p.errors, []);
    await p.context.close();
  });

  it('shows what broke instead of a blank page when a screen fails', async () => {
    const p = await person(browser);
    await logIn(p, t.url, t.users.hamlet, '#feed');
    // Break the store under the screens, as a bug would.
    await p.page.evaluate(() => {
      const client = (window as any).parley;
      client.store.state.users = null;
      client.store.changed();
    });
    await p.page.getByRole('alert').getByText(/^Something went wrong in the app: /).waitFor();
    await p.page.getByRole('button', { name: 'Reload' }).click();
    await p.page.getByRole('region', { name: 'Messages' }).waitFor();
    p.errors.length = 0; // the app logged the failure on purpose
    await p.context.close();
  });

  it('says what failed when loading fails, and loads on retry', async () => {
    const p = await person(browser);
    // The first registration and the first page of messages fail.
    let registerFailures = 1;
    await p.page.route('**/json/register', (route) => (registerFailures-- > 0 ? route.abort('connectionrefused') : route.continue()));
    await p.page.goto(t.url + '/login');
    await p.page.getByLabel('Email').fill(t.users.hamlet.email);
    await p.page.getByLabel('Password').fill(t.users.hamlet.password);
    let messageFailures = 1;
    await p.page.route('**/json/messages?*', (route) =>
      messageFailures-- > 0 ? route.fulfill({ status: 502, contentType: 'text/html', body: '<h1>Bad gateway</h1>' }) : route.continue(),
    );
    await p.page.getByRole('button', { name: 'Log in' }).click();
    await p.page.getByRole('alert').getByText('Could not load Parley: Cannot reach the server.').waitFor();
    await screenshot(p.page, 'load-failed');
    await p.page.getByRole('button', { name: 'Try again' }).click();
    await p.page.getByRole('region', { name: 'Messages' }).getByRole('alert').getByText('Could not load messages: The server answered 502.').waitFor();
    await p.page.getByRole('region', { name: 'Messages' }).getByRole('button', { name: 'Try again' }).click();
    await waitIdle(p.page);
    await p.page.getByRole('region', { name: 'Messages' }).getByText('This is the start of the conversation.').waitFor();
    assert.equal((await shownMessages(p.page)).length, 5); // the five messages of the test above
    assert.deepEqual(p.errors, []);
    await p.context.close();
  });
});

describe('the server restarting under an open page', () => {
  const tmp = makeTempDirs();
  let server: ServeProcess;
  let dataDir: string;
  let port: number;
  let owner: { email: string; apiKey: string };
  const password = 'restart-password';

  before(async () => {
    assert.ok(fs.existsSync(BINARY), `${BINARY} is built by npm test (npm run build)`);
    dataDir = tmp.make();
    const creds = await initDataDir(dataDir, { cli: [BINARY], email: 'owner@example.com', password, realmName: 'Restart Org' });
    owner = { email: creds.email, apiKey: creds.api_key };
    // An explicit port, as a service is run: only then may a restart take the port again while the old
    // connections linger in TIME_WAIT (uSockets sets SO_REUSEADDR only for a port asked for by number).
    port = await freePort();
    server = await startServe(['--data-dir', dataDir, '--port', String(port), '--no-rate-limits'], { cli: [BINARY] });
    const made = await apiCall(server.url, owner, 'POST', '/channels/create', { name: 'ops', subscribers: JSON.stringify([creds.user_id]) });
    assert.equal(made.status, 200, made.text);
  });
  after(async () => {
    await server.stop();
    tmp.cleanup();
  });

  it('says the server is gone, recovers by itself when it is back, and keeps the compose text', async () => {
    const url = `http://127.0.0.1:${port}`;
    const p = await person(browser);
    await logIn(p, url, { email: owner.email, password }, '#narrow/channel/1-ops/topic/deploy');
    const c = composeBox(p.page);
    await c.message.fill('before the restart');
    await c.send.click();
    await messageWith(p.page, 'before the restart').waitFor();

    await c.message.fill('draft that must survive');
    assert.equal((await server.stop()).code, 0);
    const banner = p.page.getByRole('status').filter({ hasText: 'Cannot reach the server.' });
    await banner.waitFor();
    await screenshot(p.page, 'server-gone');
    // A message sent while the server is away fails visibly, with Retry.
    await c.message.fill('sent while away');
    await c.send.click();
    await messageWith(p.page, 'sent while away').getByText(/^Not sent:/).waitFor();
    assert.equal(await c.message.inputValue(), '');
    await c.message.fill('draft that must survive');

    server = await startServe(['--data-dir', dataDir, '--port', String(port), '--no-rate-limits'], { cli: [BINARY] });
    await banner.waitFor({ state: 'detached', timeout: 60_000 });
    await waitIdle(p.page);
    assert.equal(await c.message.inputValue(), 'draft that must survive');
    // A new event queue: messages from elsewhere arrive live again.
    const r = await apiCall(url, owner, 'POST', '/messages', { type: 'stream', to: 'ops', topic: 'deploy', content: 'after the restart' });
    assert.equal(r.status, 200, r.text);
    await messageWith(p.page, 'after the restart').waitFor();

    await messageWith(p.page, 'sent while away').getByRole('button', { name: 'Retry' }).click();
    await p.page.waitForFunction(() => !document.querySelector('.local-echo'));
    assert.deepEqual(await shownMessages(p.page), ['before the restart', 'after the restart', 'sent while away']);
    await screenshot(p.page, 'server-back');
    assert.deepEqual(p.errors, []);
    await p.context.close();
  });
});
