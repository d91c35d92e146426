// What bad input gets from `parley import`: a clear message naming what is wrong, exit code 1, and a
// data directory left exactly as it was (no database, no uploads, no staging directory).
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { initDataDir, makeTempDirs, runCli } from '../helpers/cli';
import { makeExportZip, makeZip, type ZipFileSpec } from '../helpers/zip';
import { slackExport } from './slack-fixture';

const tmp = makeTempDirs('parley-import-bad-');
after(() => tmp.cleanup());

/** Imports `zip` into a fresh data dir; returns the result and what the data dir holds afterwards. */
async function importZip(zip: Buffer | string, args: string[] = ['--from', 'slack']) {
  const dir = tmp.make();
  const file = path.join(dir, 'export.zip');
  fs.writeFileSync(file, zip);
  const dataDir = path.join(dir, 'data');
  const r = await runCli(['import', ...args, '--data-dir', dataDir, file], { timeoutMs: 60_000 });
  return { ...r, file, left: fs.existsSync(dataDir) ? fs.readdirSync(dataDir) : [] };
}

/** The fixture export with `change` applied to its files. */
function exportWith(change: (files: Record<string, unknown>) => void): Buffer {
  const files = slackExport();
  change(files);
  return makeExportZip(files);
}

async function refuses(zip: Buffer | string, message: (file: string) => string, args?: string[]) {
  const r = await importZip(zip, args);
  assert.deepEqual(
    { code: r.code, stdout: r.stdout, stderr: r.stderr, left: r.left },
    { code: 1, stdout: '', stderr: `parley: import failed, nothing was written: ${message(r.file)}\n`, left: [] },
  );
}

const spec = (files: Record<string, unknown>): ZipFileSpec[] =>
  Object.entries(files).map(([name, v]) => ({ name, data: typeof v === 'string' || Buffer.isBuffer(v) ? (v as string) : JSON.stringify(v) }));

describe('parley import: the data directory', () => {
  it('refuses a data directory that holds a database, and leaves it untouched', async () => {
    const dir = tmp.make();
    const dataDir = path.join(dir, 'data');
    await initDataDir(dataDir);
    const before = fs.readFileSync(path.join(dataDir, 'parley.db'));
    const file = path.join(dir, 'export.zip');
    fs.writeFileSync(file, makeExportZip(slackExport()));
    const r = await runCli(['import', '--from', 'slack', '--data-dir', dataDir, file]);
    assert.deepEqual(
      { code: r.code, stdout: r.stdout, stderr: r.stderr },
      {
        code: 1,
        stdout: '',
        stderr: `parley: import failed, nothing was written: ${dataDir} already holds a database (parley.db): an import goes into an empty data directory, on a stopped server\n`,
      },
    );
    assert.deepEqual(fs.readFileSync(path.join(dataDir, 'parley.db')), before);
  });

  it('refuses a data directory whose uploads folder is not empty', async () => {
    const dir = tmp.make();
    const dataDir = path.join(dir, 'data');
    fs.mkdirSync(path.join(dataDir, 'uploads'), { recursive: true });
    fs.writeFileSync(path.join(dataDir, 'uploads', 'x'), 'x');
    const file = path.join(dir, 'export.zip');
    fs.writeFileSync(file, makeExportZip(slackExport()));
    const r = await runCli(['import', '--from', 'slack', '--data-dir', dataDir, file]);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, `parley: import failed, nothing was written: ${path.join(dataDir, 'uploads')} is not empty: an import goes into an empty data directory\n`);
    assert.deepEqual(fs.readdirSync(dataDir), ['uploads']);
  });

  it('imports into an existing empty directory that holds only a configuration file', async () => {
    const dir = tmp.make();
    const dataDir = path.join(dir, 'data');
    fs.mkdirSync(path.join(dataDir, 'uploads'), { recursive: true });
    const file = path.join(dir, 'export.zip');
    fs.writeFileSync(file, makeExportZip(slackExport()));
    const r = await runCli(['import', '--from', 'slack', '--data-dir', dataDir, file], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(fs.readdirSync(dataDir).sort(), ['parley.db', 'uploads']);
  });

  it('removes what an import that crashed left behind (its staging directory) and imports', async () => {
    const dir = tmp.make();
    const dataDir = path.join(dir, 'data');
    fs.mkdirSync(path.join(dataDir, '.parley-import-0123456789ab', 'uploads'), { recursive: true });
    fs.writeFileSync(path.join(dataDir, '.parley-import-0123456789ab', 'parley.db'), 'half a database');
    const file = path.join(dir, 'export.zip');
    fs.writeFileSync(file, makeExportZip(slackExport()));
    const r = await runCli(['import', '--from', 'slack', '--data-dir', dataDir, file], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(fs.readdirSync(dataDir).sort(), ['parley.db', 'uploads']);
  });

  it('answers usage errors with the usage', async () => {
    const r = await runCli(['import', '--from', 'hipchat', '--data-dir', tmp.make(), 'x.zip']);
    assert.equal(r.code, 2);
    assert.equal(r.stderr, "parley: --from must be one of slack, zulip, not 'hipchat'\nusage: parley import [--from slack|zulip] --data-dir DIR|--config FILE [--realm-name NAME] [--external-url URL] EXPORT_FILE\n");
    const none = await runCli(['import', '--from', 'slack', '--data-dir', tmp.make()]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /^parley: import needs exactly one EXPORT_FILE\n/);
  });

  it('refuses a .zip given as a Zulip export (the default format)', async () => {
    await refuses(makeExportZip(slackExport()), (file) => `${file} is not a readable .tar.gz archive (incorrect header check)`, []);
  });
});

describe('parley import --from slack: names Parley cannot store', () => {
  it('leaves out the characters that would break mentions, and says so', async () => {
    const r = await importZip(
      exportWith((x) => {
        const users = x['users.json'] as Record<string, unknown>[];
        users[2].real_name = 'Cleo *the* "Great" @home|12';
        users[4].real_name = '@@';
      }),
    );
    assert.equal(r.code, 0, r.stderr);
    const accounts = r.stdout.trim().split('\n').slice(1).map((l) => JSON.parse(l) as { user_id: number; full_name: string });
    assert.deepEqual(accounts.slice(2, 5).map((a) => a.full_name), ['Cleo the Great home', 'dan', 'gina']);
    assert.ok(r.stderr.includes('parley: warning: users.json: the name of U003 ("Cleo *the* \\"Great\\" @home|12") is imported as "Cleo the Great home"\n'), r.stderr);
    assert.ok(r.stderr.includes('parley: warning: users.json: the name of U005 ("@@") is imported as "gina"\n'), r.stderr);
  });
});

describe('parley import --from slack: hostile and broken archives', () => {
  it('refuses a file that is not a zip archive', async () => {
    await refuses('just some text, not a zip', (f) => `${f} is not a readable .zip archive (End of central directory record signature not found. Either not a zip file, or file is truncated.)`);
  });

  it('refuses a truncated archive', async () => {
    const zip = makeExportZip(slackExport());
    await refuses(zip.subarray(0, zip.length - 30), (f) => `${f} is not a readable .zip archive (End of central directory record signature not found. Either not a zip file, or file is truncated.)`);
  });

  for (const [name, reason] of [
    ['../escape.json', 'a ".." segment that leaves the archive'],
    ['general/../../escape.json', 'a ".." segment that leaves the archive'],
    ['/etc/passwd.json', 'an absolute path'],
    ['C:/windows.json', 'an absolute path'],
    ['general\\..\\escape.json', 'a backslash'],
    ['general//2024-01-02.json', 'an empty or "." segment'],
  ] as const) {
    it(`refuses path traversal in entry names: ${name}`, async () => {
      const files = spec(slackExport());
      files.push({ name, data: '[]' });
      await refuses(makeZip(files), (f) => `${f}: unsafe entry name ${JSON.stringify(name)} (${reason})`);
    });
  }

  it('refuses an entry name that is not UTF-8', async () => {
    const zip = makeZip([...spec(slackExport()), { name: 'caf\u00e9.json', data: '[]' }]);
    // Latin-1 é (0xE9) where the name's UTF-8 bytes (0xC3 0xA9) were: the same length, so the archive stays consistent.
    const at = zip.indexOf(Buffer.from('café.json', 'utf8'));
    const bad = Buffer.from(zip);
    for (let i = at; i >= 0; i = bad.indexOf(Buffer.from('café.json', 'utf8'), i + 1)) bad.set([0x63, 0x61, 0x66, 0xe9, 0x2e], i);
    await refuses(bad, (f) => `${f}: an entry's name is not valid UTF-8`);
  });

  it('refuses a file that claims to be huge, before reading it', async () => {
    const files = spec(slackExport()).map((e) => (e.name === 'users.json' ? { ...e, claimSize: 0xfffffff0 } : e));
    await refuses(makeZip(files), (f) => `${f}: entry "users.json" claims 4294967280 bytes, more than the 268435456 allowed for it`);
  });

  it('refuses a file that holds more than it claims (a zip bomb)', async () => {
    const files = spec(slackExport()).map((e) => (e.name === 'channels.json' ? { ...e, claimSize: 10 } : e));
    await refuses(makeZip(files), (f) => `${f}: entry "channels.json" is damaged (too many bytes in the stream. expected 10. got at least 511)`);
  });

  it('refuses an archive that is not a Slack export', async () => {
    await refuses(makeExportZip({ 'readme.txt': 'hello' }), (f) => `${f} is not a Slack export: unexpected entry "readme.txt"`);
    await refuses(makeExportZip({ 'a/b/c.json': [] }), (f) => `${f} is not a Slack export: unexpected entry "a/b/c.json"`);
    await refuses(makeExportZip({ 'channels.json': [] }), (f) => `${f} is not a Slack export: it has no users.json`);
  });

  it('refuses JSON that does not parse, naming the file', async () => {
    await refuses(exportWith((x) => (x['channels.json'] = '[{"id": ')), () => 'channels.json is not valid JSON (Unexpected end of JSON input)');
    await refuses(exportWith((x) => (x['general/2024-01-03.json'] = Buffer.from([0x5b, 0xff, 0x5d]))), () => 'general/2024-01-03.json is not valid UTF-8');
  });

  it('refuses JSON of the wrong shape, naming where', async () => {
    await refuses(exportWith((x) => (x['users.json'] = { users: [] })), () => 'users.json must be a list');
    await refuses(
      exportWith((x) => ((x['users.json'] as Record<string, unknown>[])[1].name = 42)),
      () => 'users.json[1].name must be a string',
    );
    await refuses(
      exportWith((x) => ((x['channels.json'] as Record<string, unknown>[])[0].members = 'U001')),
      () => 'channels.json[0].members must be a list',
    );
    await refuses(
      exportWith((x) => ((x['general/2024-01-02.json'] as Record<string, unknown>[])[2].ts = 'yesterday')),
      () => 'general/2024-01-02.json[2].ts must be a number',
    );
    await refuses(exportWith((x) => (x['random/2024-01-02.json'] = [42])), () => 'random/2024-01-02.json[0] must be an object');
    await refuses(
      exportWith((x) => ((x['D001/2024-01-02.json'] as Record<string, unknown>[])[1].reactions = [{ name: 'heart', users: 'U002' }])),
      () => 'D001/2024-01-02.json[1].reactions[0].users must be a list',
    );
  });

  it('refuses ids that point nowhere, naming them', async () => {
    await refuses(
      exportWith((x) => (x['channels.json'] as { members: string[] }[])[1].members.push('U999')),
      () => 'channels.json: "random" (C002) lists member U999, who is not in users.json',
    );
    await refuses(
      exportWith((x) => ((x['mpims.json'] as { members: string[] }[])[0].members = ['U001', 'UXXX'])),
      () => 'mpims.json: "mpdm-ada--bob--cleo-1" (G002) lists member UXXX, who is not in users.json',
    );
    await refuses(
      exportWith((x) => ((x['random/2024-01-02.json'] as Record<string, unknown>[])[0].user = 'U404')),
      () => 'random/2024-01-02.json[0] is sent by U404, who is not in users.json',
    );
    await refuses(
      exportWith((x) => (x['users.json'] as Record<string, unknown>[]).push({ id: 'U001', name: 'again', deleted: false, profile: { email: 'again@example.com' } })),
      () => 'users.json lists user U001 twice',
    );
  });

  it('leaves nothing when the import fails after it has started writing', async () => {
    // A file's contents fail while being copied, after users, channels and the first messages exist.
    const files = spec(slackExport()).map((e) => (e.name === '__uploads/F001/report.txt' ? { ...e, claimSize: 5 } : e));
    await refuses(makeZip(files), (f) => `${f}: entry "__uploads/F001/report.txt" is damaged (too many bytes in the stream. expected 5. got at least 11)`);
    // A person without an address, found after the organization and its first people exist.
    await refuses(
      exportWith((x) => ((x['users.json'] as Record<string, unknown>[])[2].profile = {})),
      () => 'users.json: user U003 (cleo) has no email address (profile.email)',
    );
    await refuses(
      exportWith((x) => Object.assign((x['users.json'] as Record<string, unknown>[])[0], { is_primary_owner: false, is_owner: false })),
      () => 'users.json has no primary owner (is_primary_owner) to own the organization',
    );
  });
});
