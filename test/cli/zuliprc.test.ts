// `parley zuliprc` from source: a person's zuliprc, and never a system bot's key.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { apiCall, makeTempDirs, runCli, startServe } from '../helpers/cli';

const tmp = makeTempDirs();
after(() => tmp.cleanup());

describe('parley zuliprc', () => {
  it("prints the owner's zuliprc but answers a system bot's address as unknown", async () => {
    // The first start creates the organization, its owner and Welcome Bot's greeting.
    const dataDir = path.join(tmp.make(), 'fresh');
    const server = await startServe(['--data-dir', dataDir, '--port', '0']);
    let welcomeBot: string;
    let ownerKey: string;
    try {
      const m = /API key ([A-Za-z0-9]{32})/.exec(server.stderr());
      assert.ok(m, server.stderr());
      ownerKey = m[1];
      const greeting = await apiCall(server.url, { email: 'owner@parley.example.com', apiKey: ownerKey }, 'GET', '/messages/1');
      assert.equal(greeting.body.message.sender_full_name, 'Welcome Bot', greeting.text);
      welcomeBot = greeting.body.message.sender_email;
    } finally {
      assert.equal((await server.stop()).code, 0);
    }
    const site = ['--site', 'http://chat.example.com'];
    assert.deepEqual(await runCli(['zuliprc', '--data-dir', dataDir, '--email', 'owner@parley.example.com', ...site]), {
      code: 0,
      signal: null,
      stdout: `[api]\nemail=owner@parley.example.com\nkey=${ownerKey}\nsite=http://chat.example.com\n`,
      stderr: '',
    });
    assert.deepEqual(await runCli(['zuliprc', '--data-dir', dataDir, '--email', welcomeBot, ...site]), {
      code: 1,
      signal: null,
      stdout: '',
      stderr: `parley: no active user ${welcomeBot}\n`,
    });
  });

  it('names the real address of a person who hides it (the placeholder API email authenticates nothing)', async () => {
    const dataDir = path.join(tmp.make(), 'hidden');
    const server = await startServe(['--data-dir', dataDir, '--port', '0']);
    let ownerKey: string;
    let placeholder: string;
    try {
      const m = /API key ([A-Za-z0-9]{32})/.exec(server.stderr());
      assert.ok(m, server.stderr());
      ownerKey = m[1];
      const owner = { email: 'owner@parley.example.com', apiKey: ownerKey };
      const hide = await apiCall(server.url, owner, 'PATCH', '/settings', { email_address_visibility: '4' });
      assert.equal(hide.status, 200, hide.text);
      placeholder = (await apiCall(server.url, owner, 'GET', '/users/me')).body.email;
      assert.match(placeholder, /^user\d+@/);
    } finally {
      assert.equal((await server.stop()).code, 0);
    }
    const expected = { code: 0, signal: null, stdout: `[api]\nemail=owner@parley.example.com\nkey=${ownerKey}\nsite=http://chat.example.com\n`, stderr: '' };
    for (const email of ['owner@parley.example.com', placeholder]) {
      assert.deepEqual(await runCli(['zuliprc', '--data-dir', dataDir, '--email', email, '--site', 'http://chat.example.com']), expected, email);
    }
  });
});
