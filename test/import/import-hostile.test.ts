// `parley import` against an attacker's archive and a careless operator (issue 18 review), beyond
// import-bad-input.test.ts: control characters in entry names (which reach the operator's terminal),
// symbolic links in the zip, JSON nested very deep, a message of megabytes, two imports at once into
// one data directory, and a data directory that is a symbolic link.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { makeTempDirs, runCli } from '../helpers/cli';
import { makeExportZip, makeZip, type ZipFileSpec } from '../helpers/zip';
import { slackExport } from './slack-fixture';
import { sanitizeName } from '../../src/uploads/store';
import { openZip } from '../../src/import/zip';

const tmp = makeTempDirs('parley-import-hostile-');
after(() => tmp.cleanup());

const spec = (files: Record<string, unknown>): ZipFileSpec[] =>
  Object.entries(files).map(([name, v]) => ({ name, data: typeof v === 'string' || Buffer.isBuffer(v) ? (v as string) : JSON.stringify(v) }));

function writeZip(zip: Buffer): { dir: string; file: string; dataDir: string } {
  const dir = tmp.make();
  const file = path.join(dir, 'export.zip');
  fs.writeFileSync(file, zip);
  return { dir, file, dataDir: path.join(dir, 'data') };
}

const importInto = (dataDir: string, file: string) => runCli(['import', '--from', 'slack', '--data-dir', dataDir, file], { timeoutMs: 90_000 });

async function refuses(zip: Buffer, message: (file: string) => string) {
  const { file, dataDir } = writeZip(zip);
  const r = await importInto(dataDir, file);
  assert.deepEqual(
    { code: r.code, stdout: r.stdout, stderr: r.stderr, left: fs.existsSync(dataDir) ? fs.readdirSync(dataDir) : [] },
    { code: 1, stdout: '', stderr: `parley: import failed, nothing was written: ${message(file)}\n`, left: [] },
  );
}

/** Every path under `dir`, with what it is. */
function walk(dir: string, out: [string, string][] = []): [string, string][] {
  for (const name of fs.readdirSync(dir)) {
    const full = path.join(dir, name);
    const st = fs.lstatSync(full);
    out.push([full, st.isSymbolicLink() ? 'symlink' : st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other']);
    if (st.isDirectory()) walk(full, out);
  }
  return out;
}

describe('parley import --from slack: hostile entry names and contents', () => {
  for (const name of ['general/\u001b[2J\u001b]0;owned\u0007.json', 'general/2024-01-04\r.json', 'general/tab\there.json', 'general/del\u007f.json', 'general/c1\u009b31m.json']) {
    it(`refuses a control character in an entry name (it would reach the terminal raw): ${JSON.stringify(name)}`, async () => {
      const files = spec(slackExport());
      files.push({ name, data: 'not json' });
      await refuses(makeZip(files), (f) => `${f}: unsafe entry name ${JSON.stringify(name)} (a control character)`);
    });
  }

  it('refuses an entry that appears twice (which copy would be read?) and a NUL in a name', async () => {
    const twice = [...spec(slackExport()), { name: 'users.json', data: '[]' }];
    await refuses(makeZip(twice), (f) => `${f}: entry "users.json" appears twice`);
    const nul = [...spec(slackExport()), { name: 'general/x\u0000.json', data: '[]' }];
    await refuses(makeZip(nul), (f) => `${f}: unsafe entry name "general/x\\u0000.json" (a NUL character)`);
  });

  it('stops at the limits on entries and on the bytes they claim in all (many small entries; a bomb spread over many files)', async () => {
    const { file } = writeZip(makeZip(Array.from({ length: 11 }, (_, i) => ({ name: `f${i}.json`, data: 'x'.repeat(100) }))));
    await assert.rejects(openZip(file, { maxEntries: 10, maxEntryBytes: 1000, maxTotalBytes: 10_000 }), { message: `${file} lists more than 10 entries` });
    await assert.rejects(openZip(file, { maxEntries: 100, maxEntryBytes: 1000, maxTotalBytes: 1000 }), { message: `${file}: its entries claim more than 1000 bytes in all` });
    const zip = await openZip(file, { maxEntries: 11, maxEntryBytes: 100, maxTotalBytes: 1100 });
    assert.equal(zip.entries.size, 11);
    zip.close();
  });

  it("stores a symbolic link of the zip as a plain file holding the link's text: nothing outside the archive is read, no link is made", async () => {
    const files = spec(slackExport()).map((e) => (e.name === '__uploads/F001/report.txt' ? { ...e, data: '/etc/passwd', unixMode: 0o120777 } : e));
    const { file, dataDir } = writeZip(makeZip(files));
    const r = await importInto(dataDir, file);
    assert.equal(r.code, 0, r.stderr);
    const stored = walk(path.join(dataDir, 'uploads'));
    assert.deepEqual(stored.filter(([, kind]) => kind !== 'dir' && kind !== 'file'), []);
    const report = stored.filter(([p, kind]) => kind === 'file' && p.endsWith('/report.txt'));
    assert.equal(report.length, 1);
    assert.equal(fs.readFileSync(report[0][0], 'utf8'), '/etc/passwd');
  });

  it('refuses JSON nested very deep with a message naming where, not a crash', async () => {
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    const users = JSON.stringify(slackExport()['users.json']).replace('"id":"U001"', `"id":${deep}`);
    const files = spec(slackExport()).map((e) => (e.name === 'users.json' ? { ...e, data: users } : e));
    await refuses(makeZip(files), () => 'users.json[0].id must be a string');
    const day = `[{"type":"message","user":"U001","ts":"1704153600.000100","text":"x","blocks":${deep}}]`;
    const withDay = spec(slackExport()).map((e) => (e.name === 'general/2024-01-03.json' ? { ...e, data: day } : e));
    await refuses(makeZip(withDay), () => 'general/2024-01-03.json[0].blocks[0] must be an object');
  });

  it("keeps an uploaded file's name as an upload's is kept (sanitized and bounded), whatever name the export gives it", async () => {
    const fixture = slackExport();
    const evil = '\u202eevil\u0007\n../../' + 'x'.repeat(100_000) + '.txt';
    const day = fixture['general/2024-01-02.json'] as { files?: { id: string; name?: string }[] }[];
    const f001 = day.flatMap((m) => m.files ?? []).find((f) => f.id === 'F001')!;
    f001.name = evil;
    const { file, dataDir } = writeZip(makeExportZip(fixture));
    const r = await importInto(dataDir, file);
    assert.equal(r.code, 0, r.stderr);
    const db = new Database(path.join(dataDir, 'parley.db'), { readonly: true });
    try {
      const rows = db.prepare('SELECT path_id, file_name FROM attachment').all() as { path_id: string; file_name: string }[];
      assert.equal(rows.length, 1);
      const name = sanitizeName(evil);
      assert.deepEqual(rows, [{ path_id: rows[0].path_id, file_name: name }]);
      assert.ok(rows[0].path_id.endsWith('/' + encodeURIComponent(name)));
      assert.ok(encodeURIComponent(name).length <= 200);
    } finally {
      db.close();
    }
  });

  it("never renders an export's link to a file as a script: a javascript: URL stays text", async () => {
    const fixture = slackExport();
    const day = fixture['general/2024-01-02.json'] as { files?: { id: string; url_private?: string }[] }[];
    const f002 = day.flatMap((m) => m.files ?? []).find((f) => f.id === 'F002')!;
    f002.url_private = 'javascript:alert(document.cookie)//';
    const { file, dataDir } = writeZip(makeExportZip(fixture));
    const r = await importInto(dataDir, file);
    assert.equal(r.code, 0, r.stderr);
    const db = new Database(path.join(dataDir, 'parley.db'), { readonly: true });
    try {
      const rows = db.prepare("SELECT content, rendered_content FROM message WHERE content LIKE '%javascript:%'").all() as { content: string; rendered_content: string }[];
      assert.equal(rows.length, 1);
      assert.doesNotMatch(rows[0].rendered_content, /href="javascript:/i);
    } finally {
      db.close();
    }
  });

  it("cuts a message of megabytes to Zulip's 10,000 characters, as sending one does", async () => {
    const fixture = slackExport();
    const huge = 'spam <@U002> *bold* <https://example.com|x> '.repeat(100_000);
    fixture['general/2024-01-03.json'] = [{ type: 'message', user: 'U001', ts: '1704240000.000100', text: huge }];
    const { file, dataDir } = writeZip(makeExportZip(fixture));
    const r = await importInto(dataDir, file);
    assert.equal(r.code, 0, r.stderr);
    const db = new Database(path.join(dataDir, 'parley.db'), { readonly: true });
    try {
      const longest = db.prepare('SELECT content FROM message ORDER BY length(content) DESC LIMIT 1').pluck().get() as string;
      assert.equal([...longest].length, 10_000);
      assert.ok(longest.endsWith('\n[message truncated]'));
      assert.ok(longest.startsWith('spam @**Bob Builder** **bold** [x](https://example.com)'), longest.slice(0, 100));
    } finally {
      db.close();
    }
  });
});

describe('parley import: the data directory, under a careless operator', () => {
  it('refuses to start while another import is writing into the same data directory, and leaves its work alone', async () => {
    const { file, dataDir } = writeZip(makeExportZip(slackExport()));
    // What a running import holds: its lock (this test's own process stands in for it: alive) and its staging directory.
    fs.mkdirSync(path.join(dataDir, '.parley-import-0123456789ab'), { recursive: true });
    fs.writeFileSync(path.join(dataDir, '.parley-import-0123456789ab', 'parley.db'), 'being written');
    fs.writeFileSync(path.join(dataDir, '.parley-import.lock'), `${process.pid}\n`);
    const r = await importInto(dataDir, file);
    assert.deepEqual(
      { code: r.code, stdout: r.stdout, stderr: r.stderr },
      { code: 1, stdout: '', stderr: `parley: import failed, nothing was written: another import (process ${process.pid}) is writing into ${dataDir}: wait for it to finish\n` },
    );
    assert.deepEqual(fs.readdirSync(dataDir).sort(), ['.parley-import-0123456789ab', '.parley-import.lock']);
    assert.equal(fs.readFileSync(path.join(dataDir, '.parley-import-0123456789ab', 'parley.db'), 'utf8'), 'being written');
  });

  it("takes over the lock of an import that died (its process is gone), removes what it left, and imports", async () => {
    const { file, dataDir } = writeZip(makeExportZip(slackExport()));
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    fs.mkdirSync(path.join(dataDir, '.parley-import-0123456789ab'), { recursive: true });
    fs.writeFileSync(path.join(dataDir, '.parley-import.lock'), `${gone}\n`);
    const r = await importInto(dataDir, file);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(fs.readdirSync(dataDir).sort(), ['parley.db', 'uploads']);
  });

  it('two imports started at once into one data directory: one imports, the other refuses, and the database is whole', async () => {
    const { file, dataDir } = writeZip(makeExportZip(slackExport()));
    const results = await Promise.all([importInto(dataDir, file), importInto(dataDir, file)]);
    assert.deepEqual(results.map((r) => r.code).sort(), [0, 1], results.map((r) => r.stderr).join('\n'));
    const loser = results.find((r) => r.code === 1)!;
    assert.match(loser.stderr, /^parley: import failed, nothing was written: (another import \(process \d+\) is writing into .*: wait for it to finish|.* already holds a database \(parley\.db\): .*)\n$/);
    assert.deepEqual(fs.readdirSync(dataDir).sort(), ['parley.db', 'uploads']);
    const db = new Database(path.join(dataDir, 'parley.db'), { readonly: true });
    try {
      assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
      assert.ok((db.prepare('SELECT count(*) FROM message').pluck().get() as number) > 5);
    } finally {
      db.close();
    }
  });

  it('refuses, before any work, an uploads folder that is a symbolic link (the import renames its files into place), and leaves it alone', async () => {
    const { dir, file, dataDir } = writeZip(makeExportZip(slackExport()));
    const elsewhere = path.join(dir, 'big-disk-uploads');
    fs.mkdirSync(elsewhere);
    fs.mkdirSync(dataDir);
    fs.symlinkSync(elsewhere, path.join(dataDir, 'uploads'));
    const r = await importInto(dataDir, file);
    assert.deepEqual(
      { code: r.code, stdout: r.stdout, stderr: r.stderr },
      {
        code: 1,
        stdout: '',
        stderr: `parley: import failed, nothing was written: ${path.join(dataDir, 'uploads')} is a symbolic link: an import moves its files into place by renaming, so it must be a plain directory (move the uploads and link them after the import)\n`,
      },
    );
    assert.deepEqual(fs.readdirSync(dataDir), ['uploads']);
    assert.ok(fs.lstatSync(path.join(dataDir, 'uploads')).isSymbolicLink());
    assert.deepEqual(fs.readdirSync(elsewhere), []);
  });

  it('imports into a data directory that is a symbolic link: everything lands where it points', async () => {
    const { dir, file } = writeZip(makeExportZip(slackExport()));
    const real = path.join(dir, 'real-data');
    fs.mkdirSync(real);
    const link = path.join(dir, 'data-link');
    fs.symlinkSync(real, link);
    const r = await importInto(link, file);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(fs.lstatSync(link).isSymbolicLink());
    assert.deepEqual(fs.readdirSync(real).sort(), ['parley.db', 'uploads']);
  });
});
