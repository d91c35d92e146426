// `parley deactivate-realm` / `reactivate-realm` on a stopped server, seen end to end through `serve`.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { apiCall, initDataDir, makeTempDirs, runCli, startServe } from '../helpers/cli';

const tmp = makeTempDirs();
after(() => tmp.cleanup());

async function usersMe(dataDir: string, auth: { email: string; apiKey: string }) {
  const server = await startServe(['--data-dir', dataDir, '--port', '0']);
  try {
    return await apiCall(server.url, auth, 'GET', '/users/me');
  } finally {
    assert.equal((await server.stop()).code, 0);
  }
}

describe('parley deactivate-realm / reactivate-realm', () => {
  it('makes every request 401 REALM_DEACTIVATED, and reactivation restores access', async () => {
    const dataDir = tmp.make();
    const creds = await initDataDir(dataDir);
    const auth = { email: creds.email, apiKey: creds.api_key };

    assert.deepEqual(await runCli(['deactivate-realm', '--data-dir', dataDir]), {
      code: 0,
      signal: null,
      stdout: 'organization deactivated\n',
      stderr: '',
    });
    const refused = await usersMe(dataDir, auth);
    assert.equal(refused.status, 401);
    assert.deepEqual(refused.body, { result: 'error', msg: 'This organization has been deactivated', code: 'REALM_DEACTIVATED' });

    assert.deepEqual(await runCli(['reactivate-realm', '--data-dir', dataDir]), {
      code: 0,
      signal: null,
      stdout: 'organization reactivated\n',
      stderr: '',
    });
    const me = await usersMe(dataDir, auth);
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body.user_id, creds.user_id);
  });
});
