// Import of a Zulip export (issue 18, item 2): an organization of 20 people and 10 channels, everyone
// subscribed to every channel, holding N messages (so 20·N per-user rows) in Zulip's format (the
// test fixture's realm.json grown to that size; messages written as Zulip's exporter writes them,
// 1,000 to a file), imported by `parley import` in a child process whose peak RSS (VmHWM) is read
// when it ends. Goals: ≥ 10,000 messages/s, peak RSS under 300 MB.
//   node --import tsx bench/import-zulip.ts [messages=1000000] [--keep]
// The tarball is cached in the temp directory between runs (generating it is not measured).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';
import { IDS, REALM_ID, TOP, zulipExport } from '../test/import/zulip-fixture';

const USERS = 20;
const CHANNELS = 10;
const CHUNK = 1000;
const FIRST_USER = 100;
const FIRST_STREAM = 200;
const STREAM_RECIPIENT = 300;
const T0 = 1_700_000_000;

/** realm.json of the fixture, with 20 people and 10 channels everyone is subscribed to. */
function realmJson(): Record<string, any> {
  const realm = (zulipExport()['realm.json'] as Record<string, any>);
  const proto = realm.zerver_userprofile.find((u: { id: number }) => u.id === IDS.othello);
  const users = Array.from({ length: USERS }, (_, i) => ({ ...proto, id: FIRST_USER + i, email: `user${i}@zulip.example`, delivery_email: `user${i}@zulip.example`, full_name: `User ${i}` }));
  users[0].role = 100;
  const streamProto = realm.zerver_stream[0];
  const streams = Array.from({ length: CHANNELS }, (_, i) => ({ ...streamProto, id: FIRST_STREAM + i, name: `channel ${i}`, creator: FIRST_USER }));
  let sub = 0;
  let member = 1000;
  return {
    ...realm,
    zerver_realm: [{ ...realm.zerver_realm[0], new_stream_announcements_stream: FIRST_STREAM, zulip_update_announcements_stream: FIRST_STREAM }],
    zerver_userprofile: users,
    zerver_userprofile_crossrealm: [],
    zerver_stream: streams,
    zerver_defaultstream: [],
    zerver_huddle: [],
    zerver_recipient: [...users.map((u) => ({ id: u.id, type: 1, type_id: u.id })), ...streams.map((s, i) => ({ id: STREAM_RECIPIENT + i, type: 2, type_id: s.id }))],
    zerver_subscription: [
      ...users.map((u) => ({ id: ++sub, user_profile: u.id, recipient: u.id, active: true, is_user_active: true, is_muted: false, color: '#c2c2c2' })),
      ...streams.flatMap((_, c) => users.map((u) => ({ id: ++sub, user_profile: u.id, recipient: STREAM_RECIPIENT + c, active: true, is_user_active: true, is_muted: false, color: '#76ce90' }))),
    ],
    zerver_usergroupmembership: [
      { id: ++member, user_group: 26, user_profile: FIRST_USER },
      ...users.slice(1).map((u) => ({ id: ++member, user_group: 22, user_profile: u.id })),
    ],
    zerver_alertword: [],
    zerver_usertopic: [],
    zerver_customprofilefieldvalue: [],
    zerver_realmemoji: [],
    zerver_reaction: [],
    zerver_namedusergroup: realm.zerver_namedusergroup.map((g: Record<string, unknown>) => ({ ...g, creator: null })),
  };
}

/** messages-NNNNNN.json number `n` (1-based): CHUNK messages and their 20 per-user rows each. */
function messageFile(n: number, total: number): string {
  const first = (n - 1) * CHUNK + 1;
  const last = Math.min(total, n * CHUNK);
  const messages: string[] = [];
  const rows: string[] = [];
  for (let id = first; id <= last; id++) {
    const sender = FIRST_USER + (id % USERS);
    const channel = id % CHANNELS;
    const content = `message ${id} about **topic ${id % 50}** and more words here`;
    messages.push(
      JSON.stringify({
        id,
        sender,
        recipient: STREAM_RECIPIENT + channel,
        realm: REALM_ID,
        subject: `topic ${id % 50}`,
        content,
        rendered_content: `<p>message ${id} about <strong>topic ${id % 50}</strong> and more words here</p>`,
        rendered_content_version: 1,
        date_sent: T0 + id / 10,
        last_edit_time: null,
        edit_history: null,
        sending_client: 1,
        has_attachment: false,
        has_image: false,
        has_link: false,
        is_channel_message: true,
        type: 1,
      }),
    );
    // The newest 1 % unread for all but the sender; everything else read.
    const unread = id > total * 0.99;
    for (let u = 0; u < USERS; u++) {
      const user = FIRST_USER + u;
      rows.push(`{"id":${(id - 1) * USERS + u + 1},"user_profile":${user},"message":${id},"flags_mask":${unread && user !== sender ? 0 : 1}}`);
    }
  }
  return `{"zerver_message":[${messages.join(',')}],"zerver_usermessage":[${rows.join(',')}]}`;
}

async function writeTarball(file: string, total: number): Promise<void> {
  const pack = tar.pack();
  const out = pipeline(pack as unknown as NodeJS.ReadableStream, zlib.createGzip({ level: 1 }), fs.createWriteStream(file + '.partial'));
  const add = (name: string, body: string) =>
    new Promise<void>((resolve, reject) => {
      const buf = Buffer.from(body);
      pack.entry({ name: `${TOP}/${name}`, size: buf.length }, buf, (err) => (err ? reject(err) : resolve()));
    });
  const fixture = zulipExport();
  await add('realm.json', JSON.stringify(realmJson()));
  await add('attachment.json', JSON.stringify({ zerver_attachment: [] }));
  for (const folder of ['uploads', 'avatars', 'emoji', 'realm_icons']) await add(`${folder}/records.json`, '[]');
  await add('migration_status.json', JSON.stringify(fixture['migration_status.json']));
  for (let n = 1; (n - 1) * CHUNK < total; n++) await add(`messages-${String(n).padStart(6, '0')}.json`, messageFile(n, total));
  pack.finalize();
  await out;
  fs.renameSync(file + '.partial', file);
}

async function main(): Promise<void> {
  const total = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 1_000_000);
  const tarball = path.join(os.tmpdir(), `parley-bench-zulip-${total}.tar.gz`);
  if (!fs.existsSync(tarball)) {
    const t = Date.now();
    await writeTarball(tarball, total);
    console.log(`generated ${tarball} (${(fs.statSync(tarball).size / 1e6).toFixed(0)} MB) in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-import-'));
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, '..', 'src', 'main.ts'), 'import', '--data-dir', dataDir, tarball], {
    env: { ...process.env, PARLEY_CONFIG: '/dev/null' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let peakKb = 0;
  // VmHWM is the process's own high-water mark: read it until the process is gone.
  const poll = setInterval(() => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) peakKb = Math.max(peakKb, Number(m[1]));
    } catch {
      /* exited */
    }
  }, 100);
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearInterval(poll);
  const secs = Number(process.hrtime.bigint() - started) / 1e9;
  if (code !== 0) throw new Error(`import failed (${code})`);
  const summary = JSON.parse(stdout.split('\n')[0]);
  console.log(
    JSON.stringify({
      messages: summary.imported.messages,
      usermessages: summary.imported.usermessages,
      seconds: Number(secs.toFixed(1)),
      messages_per_second: Math.round(summary.imported.messages / secs),
      peak_rss_mb: Math.round(peakKb / 1024),
      db_mb: Math.round(fs.statSync(path.join(dataDir, 'parley.db')).size / 1e6),
      load_average: os.loadavg().map((x) => Number(x.toFixed(2))),
    }),
  );
  if (!process.argv.includes('--keep')) fs.rmSync(dataDir, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
