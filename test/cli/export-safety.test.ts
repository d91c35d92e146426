// `parley export` seen by an attacker and a careless operator (issue 18 review): what leaves the box
// (no credential of any kind: password hashes, API keys, session tokens, push tokens, invitation,
// email-change and set-password keys, resumable-upload ids), who may read the tarball, and where it
// may be written (never over the database or anything else in the data directory, never through a
// symlink, two exports to the same OUT both whole).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PASSWORD, startTestServer, type TestServer } from '../helpers/server';
import { makeTempDirs, runCli } from '../helpers/cli';
import { doCreatePasswordLink } from '../../src/actions/password-links';
import { readTarGz } from '../helpers/tarball';

const tmp = makeTempDirs('parley-export-safety-');
let t: TestServer;

const sha256 = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** Every credential the database holds (and the raw ones only the client saw), as the strings that must not appear. */
const secrets: Record<string, string> = {};

before(async () => {
  t = await startTestServer();
  const db = t.app.db;
  // A web session: its raw token is in the cookie, its hash in the table.
  const login = await fetch(`${t.url}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `username=${encodeURIComponent(t.users.hamlet.email)}&password=${encodeURIComponent(PASSWORD)}`,
  });
  assert.equal(login.status, 303);
  secrets.session_token = /parley_session=([^;]+)/.exec(login.headers.get('set-cookie') ?? '')![1];
  // Invitations: one to an address, one reusable link.
  const invite = await t.api(t.users.owner, 'POST', '/invites', { invitee_emails: 'newcomer@example.com', stream_ids: [] });
  assert.equal(invite.status, 200, invite.text);
  const multi = await t.api(t.users.owner, 'POST', '/invites/multiuse', { stream_ids: [] });
  assert.equal(multi.status, 200, multi.text);
  secrets.multiuse_link_key = /\/join\/([^/]+)\//.exec(multi.body.invite_link as string)![1];
  // A set-password link (what `parley import` prints).
  secrets.password_link_key = doCreatePasswordLink(t.app, t.users.othello.id);
  t.app.batch.commit();
  // Rows the API makes only with outside services configured (push, mail), written directly.
  const now = Math.floor(Date.now() / 1000);
  db.prepare('INSERT INTO legacy_push_token (user_id, kind, token, updated) VALUES (?, ?, ?, ?)').run(t.users.hamlet.id, 'fcm', 'legacy-push-token-' + 'f'.repeat(40), now);
  const device = db.prepare('INSERT INTO client_device (user_id, created) VALUES (?, ?)').run(t.users.hamlet.id, now).lastInsertRowid;
  db.prepare(
    'INSERT INTO push_device (device_id, user_id, push_key_id, push_key, token_kind, token_id, encrypted_push_registration, updated, registered_token_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  ).run(device, t.users.hamlet.id, 7, Buffer.concat([Buffer.from([0x31]), crypto.randomBytes(32)]), 'fcm', 'e2ee-token-id-0123456789', 'encrypted-registration-0123456789', now, 'registered-token-id-0123456789');
  db.prepare('INSERT INTO email_change (user_id, new_email, confirmation_key, created, expires) VALUES (?, ?, ?, ?, ?)').run(
    t.users.othello.id,
    'othello-new@example.com',
    'emailchangekey0123456789abcdef',
    now,
    now + 86400,
  );
  db.prepare('INSERT INTO tus_upload (id, realm_id, user_id, length, file_name, created, expires) VALUES (?, ?, ?, ?, ?, ?, ?)').run(
    'tusuploadid0123456789abcdef',
    t.app.realmId(),
    t.users.hamlet.id,
    10,
    'partial.bin',
    now,
    now + 86400,
  );
  // Everything stored in a credential column, whatever table it is in.
  const columns: [string, string][] = [
    ['user', 'password_hash'],
    ['user', 'api_key'],
    ['session', 'token_hash'],
    ['invitation', 'confirmation_key'],
    ['password_link', 'key_hash'],
    ['email_change', 'confirmation_key'],
    ['legacy_push_token', 'token'],
    ['push_device', "hex(push_key)"],
    ['push_device', 'token_id'],
    ['push_device', 'encrypted_push_registration'],
    ['push_device', 'registered_token_id'],
    ['tus_upload', 'id'],
  ];
  for (const [table, column] of columns) {
    const values = db.prepare(`SELECT ${column} AS v FROM ${table} WHERE ${column} IS NOT NULL`).pluck().all() as string[];
    assert.ok(values.length > 0, `the test has no ${table}.${column} to look for`);
    values.forEach((v, i) => (secrets[`${table}.${column}[${i}]`] = String(v)));
  }
  secrets.push_key_base64 = (db.prepare('SELECT push_key FROM push_device').pluck().get() as Buffer).toString('base64');
});

after(async () => {
  await t.close();
  tmp.cleanup();
});

const exportTo = (out: string) => runCli(['export', '--data-dir', t.dataDir, out], { timeoutMs: 60_000 });

describe('parley export: what leaves the box', () => {
  it('carries no credential of any kind, in any file of the tarball, and is readable by its owner only', async () => {
    const out = path.join(tmp.make(), 'org.tar.gz');
    const r = await exportTo(out);
    assert.equal(r.code, 0, r.stderr);
    // It holds private messages: not for other accounts of the machine, whatever the umask.
    assert.equal(fs.statSync(out).mode & 0o777, 0o600);
    const files = await readTarGz(fs.readFileSync(out));
    assert.ok(files.size > 5);
    for (const [name, bytes] of files) {
      const text = bytes.toString('latin1');
      for (const [what, value] of Object.entries(secrets)) {
        assert.ok(!text.includes(value), `${what} is in ${name}`);
      }
      // Nor any bcrypt hash at all.
      assert.doesNotMatch(text, /\$2[aby]\$\d\d\$/, name);
    }
  });
});

describe('parley export: where it writes', () => {
  it("refuses to write into the data directory (over the database, its WAL, the uploads), and leaves them as they were", async () => {
    const db = path.join(t.dataDir, 'parley.db');
    const before = sha256(db);
    fs.mkdirSync(path.join(t.dataDir, 'uploads'), { recursive: true });
    const uploadsBefore = fs.readdirSync(path.join(t.dataDir, 'uploads')).sort();
    for (const out of [db, path.join(t.dataDir, 'export.tar.gz'), path.join(t.dataDir, 'uploads', 'export.tar.gz')]) {
      const r = await exportTo(out);
      assert.deepEqual(r, {
        code: 1,
        signal: null,
        stdout: '',
        stderr: `parley: cannot write ${out}: it is inside the data directory ${t.dataDir} (write the export somewhere else)\n`,
      });
    }
    assert.equal(sha256(db), before);
    assert.deepEqual(fs.readdirSync(path.join(t.dataDir, 'uploads')).sort(), uploadsBefore);
    assert.deepEqual(fs.readdirSync(t.dataDir).filter((f) => f.startsWith('.') || f.endsWith('.tar.gz')), []);
    // The server never noticed.
    assert.equal((await t.api(t.users.hamlet, 'GET', '/users/me')).status, 200);
  });

  it('refuses the data directory reached through a symlink too', async () => {
    const link = path.join(tmp.make(), 'data-link');
    fs.symlinkSync(t.dataDir, link);
    const out = path.join(link, 'parley.db');
    const r = await exportTo(out);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, `parley: cannot write ${out}: it is inside the data directory ${t.dataDir} (write the export somewhere else)\n`);
  });

  it('refuses a directory at OUT', async () => {
    const out = tmp.make();
    const r = await exportTo(out);
    assert.deepEqual(r, { code: 1, signal: null, stdout: '', stderr: `parley: cannot write ${out}: it is a directory\n` });
  });

  it('never writes through a symlink at OUT: the link is replaced, what it pointed to is left alone', async () => {
    const dir = tmp.make();
    const elsewhere = path.join(tmp.make(), 'precious.txt');
    fs.writeFileSync(elsewhere, 'precious');
    const out = path.join(dir, 'org.tar.gz');
    fs.symlinkSync(elsewhere, out);
    const r = await exportTo(out);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(fs.readFileSync(elsewhere, 'utf8'), 'precious');
    assert.ok(fs.lstatSync(out).isFile());
    assert.ok((await readTarGz(fs.readFileSync(out))).has('org/realm.json'));
  });

  it('two exports to the same OUT at once: both finish, OUT is one whole tarball, no temporary file is left', async () => {
    const dir = tmp.make();
    const out = path.join(dir, 'org.tar.gz');
    fs.writeFileSync(out, 'an older file at OUT');
    const [a, b] = await Promise.all([exportTo(out), exportTo(out)]);
    assert.deepEqual([a.code, b.code], [0, 0], a.stderr + b.stderr);
    assert.deepEqual(fs.readdirSync(dir), ['org.tar.gz']);
    const files = await readTarGz(fs.readFileSync(out));
    assert.ok(files.has('org/realm.json') && files.has('org/stats.json'));
    assert.equal(fs.statSync(out).mode & 0o777, 0o600);
  });
});
