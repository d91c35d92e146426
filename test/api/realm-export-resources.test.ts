// Data exports under abuse, beyond test/api/realm-export.test.ts: the export process killed outright
// (an out-of-memory kill: no cleanup of its own), a second export asked for while one runs (queued, it
// runs next), and Zulip's weekly limit counting failed exports too.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { createChannel, err, sendToChannel } from '../helpers/chat';
import { queuedEvents, registerQueue } from '../helpers/events';
import { until } from '../helpers/wait';

/** The pid of the export process working on `dataDir` (a child of this process, found through /proc). */
function exportPid(dataDir: string): number | undefined {
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let cmdline: string[];
    try {
      cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    const at = cmdline.indexOf('--data-dir');
    if (cmdline.includes('export') && at >= 0 && cmdline[at + 1] === path.resolve(dataDir)) return Number(entry);
  }
  return undefined;
}

let t: TestServer;
before(async () => {
  t = await startTestServer();
  const channel = await createChannel(t, t.users.owner, 'busy', [t.users.hamlet]);
  for (let i = 0; i < 3; i++) await sendToChannel(t, t.users.owner, channel, 'busy', `message ${i}`);
});
after(() => t.close());

describe('the export process killed (SIGKILL), with another export waiting', () => {
  it('marks the first failed with its files gone, then runs the second', async () => {
    const queue = await registerQueue(t, t.users.admin, ['realm_export']);
    const realmDir = path.join(t.dataDir, 'exports', String(t.app.realmId()));
    process.env.PARLEY_EXPORT_TEST_STALL_AFTER = 'realm.json';
    let first: number;
    let pid: number;
    try {
      const res = await t.api(t.users.owner, 'POST', '/export/realm');
      assert.equal(res.status, 200, res.text);
      first = res.body.id;
      pid = await until('the export process', () => exportPid(t.dataDir));
      await until('the partial tarball', () => {
        for (const token of fs.existsSync(realmDir) ? fs.readdirSync(realmDir) : []) {
          for (const f of fs.readdirSync(path.join(realmDir, token))) if (f.includes('.partial-')) return true;
        }
        return undefined;
      });
    } finally {
      delete process.env.PARLEY_EXPORT_TEST_STALL_AFTER;
    }
    // Asked for while the first runs: it waits its turn.
    const second = await t.api(t.users.admin, 'POST', '/export/realm', { export_type: 1 });
    assert.equal(second.status, 200, second.text);
    const waiting = (await t.api(t.users.owner, 'GET', '/export/realm')).body.exports;
    assert.deepEqual(waiting.map((e: any) => [e.id, e.pending]), [[first, true], [second.body.id, true]]);
    assert.deepEqual((await t.api(t.users.admin, 'DELETE', `/export/realm/${second.body.id}`)).body, err('Export still in progress'));

    process.kill(pid, 'SIGKILL');
    const done = await until('both exports to end', async () => {
      const list = (await t.api(t.users.owner, 'GET', '/export/realm')).body.exports;
      return list.every((e: any) => !e.pending) ? list : undefined;
    });
    const [killed, next] = done;
    assert.equal(typeof killed.failed_timestamp, 'number');
    assert.deepEqual(killed, { ...waiting[0], pending: false, failed_timestamp: killed.failed_timestamp });
    assert.equal(next.failed_timestamp, null);
    assert.match(next.export_url, /\/user_avatars\/exports\//);
    // Only the second's folder is left, with its tarball alone: nothing partial of the killed one.
    const tokens = fs.readdirSync(realmDir);
    assert.deepEqual(tokens, [new URL(next.export_url).pathname.split('/')[4]]);
    assert.deepEqual(fs.readdirSync(path.join(realmDir, tokens[0])), [path.basename(new URL(next.export_url).pathname)]);
    // Administrators heard each step: two requests, the failure, the success.
    const events = (await queuedEvents(t, t.users.admin, queue)).map((e) => e.exports.map((x: any) => [x.id, x.pending, x.failed_timestamp !== null]));
    assert.deepEqual(events, [
      [[first, true, false]],
      [[first, true, false], [second.body.id, true, false]],
      [[first, false, true], [second.body.id, true, false]],
      [[first, false, true], [second.body.id, false, false]],
    ]);
  });
});

describe("Zulip's weekly limit", () => {
  it('counts failed exports too: the sixth of the week is refused', async () => {
    // Two so far (one failed); three more pass, the sixth is refused.
    for (let i = 0; i < 3; i++) {
      const res = await t.api(t.users.owner, 'POST', '/export/realm');
      assert.equal(res.status, 200, res.text);
    }
    const refused = await t.api(t.users.owner, 'POST', '/export/realm');
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body, err('Exceeded rate limit.'));
    await until('the exports to end', async () => {
      const list = (await t.api(t.users.owner, 'GET', '/export/realm')).body.exports;
      return list.length === 5 && list.every((e: any) => !e.pending) ? true : undefined;
    });
  });
});
