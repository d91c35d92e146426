// The configuration file through the real command line: `parley serve` with a file, the environment
// and flags (flag > env > file > default, seen on the wire: realm_url, max_file_upload_size_mib and the
// per-user rate limit), DATA_DIR/parley.conf found without --config, other commands finding the data
// directory in the file, and a bad file or variable stopping the start (exit 2, the whole message).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { apiCall, initDataDir, makeTempDirs, runCli, startServe, type Credentials } from '../helpers/cli';

const tmp = makeTempDirs();
after(() => tmp.cleanup());
const SLOW = { timeoutMs: 60_000 };

/** What the server shows of three settings: realm_url, max_file_upload_size_mib, and the statuses of
 * register then two GET /users/me (the third authenticated request is refused at a 2/60 user limit). */
async function observe(args: string[], env: Record<string, string>, creds: Credentials) {
  const server = await startServe(['--port', '0', ...args], { env, ...SLOW });
  try {
    const auth = { email: creds.email, apiKey: creds.api_key };
    const settings = await apiCall(server.url, null, 'GET', '/server_settings');
    const register = await apiCall(server.url, auth, 'POST', '/register', { fetch_event_types: '["realm"]' });
    const me1 = await apiCall(server.url, auth, 'GET', '/users/me');
    const me2 = await apiCall(server.url, auth, 'GET', '/users/me');
    return {
      realm_url: settings.body.realm_url as string,
      max_file_upload_size_mib: register.body.max_file_upload_size_mib as number,
      statuses: [register.status, me1.status, me2.status],
      listening: server.url,
    };
  } finally {
    await server.stop();
  }
}

describe('parley serve with a configuration file', () => {
  let dataDir: string;
  let creds: Credentials;
  let file: string;
  before(async () => {
    dataDir = tmp.make();
    creds = await initDataDir(dataDir, SLOW);
    file = path.join(tmp.make(), 'parley.toml');
    fs.writeFileSync(
      file,
      [
        '# settings of every kind, all overridden below one layer at a time',
        `data_dir = ${JSON.stringify(dataDir)}`,
        'external_url = "https://file.example.com"',
        'max_file_upload_size_mib = 7',
        'rate_limits = true',
        'rate_limit_user = "2/60"',
        '',
      ].join('\n'),
    );
  });

  it('uses the defaults without a file', async () => {
    const seen = await observe(['--data-dir', dataDir, '--rate-limit-user', '2/60'], {}, creds);
    assert.deepEqual(seen, { realm_url: seen.listening, max_file_upload_size_mib: 100, statuses: [200, 200, 429], listening: seen.listening });
  });

  it('takes the file over the defaults', async () => {
    const seen = await observe(['--config', file], {}, creds);
    assert.deepEqual({ ...seen, listening: null }, { realm_url: 'https://file.example.com', max_file_upload_size_mib: 7, statuses: [200, 200, 429], listening: null });
  });

  it('takes the environment over the file', async () => {
    const env = { PARLEY_EXTERNAL_URL: 'https://env.example.com', PARLEY_MAX_FILE_UPLOAD_SIZE_MIB: '8', PARLEY_RATE_LIMITS: 'off' };
    const seen = await observe(['--config', file], env, creds);
    assert.deepEqual({ ...seen, listening: null }, { realm_url: 'https://env.example.com', max_file_upload_size_mib: 8, statuses: [200, 200, 200], listening: null });
  });

  it('takes the flags over the environment (and PARLEY_CONFIG names the file)', async () => {
    const env = { PARLEY_CONFIG: file, PARLEY_EXTERNAL_URL: 'https://env.example.com', PARLEY_MAX_FILE_UPLOAD_SIZE_MIB: '8', PARLEY_RATE_LIMITS: 'off' };
    const seen = await observe(['--external-url', 'https://flag.example.com/', '--max-file-upload-size-mib', '9', '--rate-limits'], env, creds);
    assert.deepEqual({ ...seen, listening: null }, { realm_url: 'https://flag.example.com', max_file_upload_size_mib: 9, statuses: [200, 200, 429], listening: null });
  });

  it('reads DATA_DIR/parley.conf when nothing names a file', async () => {
    const own = tmp.make();
    const ownCreds = await initDataDir(own, SLOW);
    fs.writeFileSync(path.join(own, 'parley.conf'), 'external_url = "https://conf.example.com"\nmax_file_upload_size_mib = 5\n');
    // PARLEY_CONFIG empty counts as unset: the lookup runs (the helpers' default is /dev/null).
    const seen = await observe(['--data-dir', own], { PARLEY_CONFIG: '' }, ownCreds);
    assert.deepEqual({ ...seen, listening: null }, { realm_url: 'https://conf.example.com', max_file_upload_size_mib: 5, statuses: [200, 200, 200], listening: null });
  });

  it('lets the other commands find the data directory in the file', async () => {
    const out = path.join(tmp.make(), 'backup.db');
    const r = await runCli(['backup', '--config', file, out], SLOW);
    assert.deepEqual(r, { code: 0, signal: null, stdout: `backup written to ${out}\n`, stderr: '' });
  });
});

describe('a bad configuration stops the start', () => {
  it('exits 2 with the file, the line and the key, and no usage text', async () => {
    const dir = tmp.make();
    const cases: [string, string][] = [
      ['port = 0\nhost = "127.0.0.1"\nport_number = 1\n', 'line 3: unknown key "port_number" (the settings are listed in the README and in parley serve --help)'],
      ['data_dir = ":memory:"\nheartbeat_seconds = "50"\n', 'line 2: heartbeat_seconds must be an integer from 1 to 86400, got "50"'],
      ['data_dir = ":memory:"\nweb_public_streams = "on"\n', 'line 2: web_public_streams must be true or false, got "on"'],
      ['data_dir = ":memory:"\n[server]\n', 'line 2: unknown key "server" (the settings are listed in the README and in parley serve --help)'],
      ['port = 0\nhost = 127.0.0.1\n', 'line 2, column 13: not valid TOML: illegal character in numeric literal'],
    ];
    const files = cases.map(([text], i) => {
      const f = path.join(dir, `bad-${i}.toml`);
      fs.writeFileSync(f, text);
      return f;
    });
    const results = await Promise.all(files.map((f) => runCli(['serve', '--config', f], SLOW)));
    cases.forEach(([, want], i) => {
      assert.deepEqual(results[i], { code: 2, signal: null, stdout: '', stderr: `parley: ${files[i]}, ${want}\n` }, files[i]);
    });
  });

  it('exits 2 for a named file that is missing and for a bad environment variable', async () => {
    const missing = path.join(tmp.make(), 'missing.toml');
    const [a, b, c] = await Promise.all([
      runCli(['serve', '--config', missing], SLOW),
      runCli(['backup', '--config', missing, 'out.db'], SLOW),
      runCli(['serve', '--data-dir', ':memory:'], { env: { PARLEY_PORT: 'ninety' }, ...SLOW }),
    ]);
    assert.deepEqual(a, { code: 2, signal: null, stdout: '', stderr: `parley: cannot read the configuration file ${missing}: no such file\n` });
    assert.deepEqual(b, { code: 2, signal: null, stdout: '', stderr: `parley: cannot read the configuration file ${missing}: no such file\n` });
    assert.deepEqual(c, { code: 2, signal: null, stdout: '', stderr: 'parley: PARLEY_PORT must be an integer from 0 to 65535, got "ninety"\n' });
  });

  it('exits 2 at once for a FIFO, an endless device or a symbolic link loop named as the file', async () => {
    // Finding: reading a FIFO blocked the start forever with no message (no writer ever comes), and
    // /dev/zero (size 0 to stat) was read until memory ran out. Nothing may start either way.
    const dir = tmp.make();
    const fifo = path.join(dir, 'parley.toml');
    execFileSync('mkfifo', [fifo]);
    const loop = path.join(dir, 'loop.toml');
    fs.symlinkSync(loop, loop);
    const quick = { timeoutMs: 20_000 };
    const [a, b, c] = await Promise.all([
      runCli(['serve', '--data-dir', ':memory:', '--config', fifo], quick),
      runCli(['serve', '--data-dir', ':memory:', '--config', '/dev/zero'], quick),
      runCli(['serve', '--data-dir', ':memory:'], { env: { PARLEY_CONFIG: loop }, ...quick }),
    ]);
    assert.deepEqual(a, { code: 2, signal: null, stdout: '', stderr: `parley: cannot read the configuration file ${fifo}: not a regular file\n` });
    assert.deepEqual(b, { code: 2, signal: null, stdout: '', stderr: 'parley: /dev/zero: too large for a configuration file (more than 1048576 bytes)\n' });
    assert.deepEqual(c, { code: 2, signal: null, stdout: '', stderr: `parley: cannot read the configuration file ${loop}: a loop of symbolic links\n` });
  });
});
