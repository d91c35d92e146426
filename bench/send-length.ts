// What a send's length costs (issue 17): flat (the mix's text without markup, 127 characters on
// average) against plain (one short line), stage by stage, in process. Run by hand:
//   node --import tsx bench/send-length.ts          (N=2000 per round, 5 rounds, interleaved)
// Each line is CPU µs per message (median of the rounds; the contents alternate within a round):
//  - the whole send (doSendMessage, 16 per commit, as bench/send-inprocess.ts), then the same on a
//    second database whose message_fts is a view that ignores inserts: the full-text index's share;
//  - each stage that reads the content alone, on the same contents: the form body's decoding,
//    normalizeContent, renderMessage, the message row's INSERT (16 per commit, with its commit), the
//    message_fts INSERT alike (and with columnsize=0), and the message event: formatMessages and JSON.stringify of the event
//    (what each listening queue's copy costs; with no queue the send does not serialise it).
// The reply ({"result","msg","id"}) and the request log line do not grow with the content.
import fs from 'node:fs';
import os from 'node:os';
import { doSendMessage, normalizeContent } from '../src/actions/messages';
import { formatMessages, type MessageRow } from '../src/lib/messages';
import { renderMessage } from '../src/lib/render';
import { parseUrlencodedBody } from '../src/http/urlencoded';
import { topicKey } from '../src/lib/narrow';
import { sendContent, type ContentKind } from './send-content';
import { benchApp } from './send-inprocess';

const N = Number(process.env.N ?? 2000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const KINDS: ContentKind[] = ['plain', 'flat', 'mix'];

const a = benchApp();
const b = benchApp();
// b: message_fts is a view whose inserts do nothing (nothing in a send reads it).
b.app.db.exec(`DROP TABLE message_fts;
  CREATE VIEW message_fts(rowid, topic, content) AS SELECT 0, '', '';
  CREATE TRIGGER message_fts_ignore INSTEAD OF INSERT ON message_fts BEGIN SELECT 1; END;`);

let next = 0;
const contents = (kind: ContentKind) => Array.from({ length: N }, () => sendContent(kind, next++, a.mix));

function sends(x: typeof a, cs: string[]): void {
  for (let i = 0; i < cs.length; i += 16) {
    for (let j = i; j < Math.min(cs.length, i + 16); j++) {
      doSendMessage(x.app, x.ownerRow, { to: { kind: 'channel', streamId: x.stream.id, topic: `topic ${j % 4}` }, content: cs[j] });
    }
    x.app.batch.commit();
  }
}

/** Rows as a send stores them (rendered beforehand), for the insert stages. */
function rowsOf(cs: string[]): MessageRow[] {
  return cs.map((content, i) => ({
    id: 0,
    realm_id: a.ownerRow.realm_id,
    sender_id: a.ownerRow.id,
    stream_id: a.stream.id,
    direct_group_id: null,
    topic: `topic ${i % 4}`,
    topic_key: topicKey(`topic ${i % 4}`),
    content,
    rendered_content: renderMessage(a.app, a.ownerRow.realm_id, content, a.ownerRow).html,
    date_sent: 1_800_000_000,
    last_edit_time: null,
    last_edit_time_x: undefined,
    last_moved_time: null,
    edit_history: null,
    has_link: 0,
    has_image: 0,
    has_attachment: 0,
    client: 'API',
  })) as unknown as MessageRow[];
}

const db = a.app.db;
const insMessage = db.prepare(
  `INSERT INTO message (realm_id, sender_id, stream_id, direct_group_id, topic, topic_key, content, rendered_content, date_sent, has_link, has_image, has_attachment, client)
   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
);
const insFts = db.prepare('INSERT INTO message_fts (rowid, topic, content) VALUES (?, ?, ?)');
// The same index without its per-row column sizes (columnsize=0: only bm25 ranking reads them, and
// Parley never ranks), on b's database: what that option would save per message.
b.app.db.exec(`CREATE VIRTUAL TABLE fts_columnsize0 USING fts5(topic, content, content='message', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2', columnsize=0)`);
const insFts0 = b.app.db.prepare('INSERT INTO fts_columnsize0 (rowid, topic, content) VALUES (?, ?, ?)');
let ftsRowid = 1e9;

const STAGES: Record<string, (cs: string[], rows: MessageRow[], bodies: Buffer[]) => void> = {
  'send (in process, 16 per commit)': (cs) => sends(a, cs),
  'send, message_fts not written': (cs) => sends(b, cs),
  'form body decoding': (_cs, _r, bodies) => {
    for (const body of bodies) parseUrlencodedBody(body);
  },
  normalizeContent: (cs) => {
    for (const c of cs) normalizeContent(c);
  },
  renderMessage: (cs) => {
    for (const c of cs) renderMessage(a.app, a.ownerRow.realm_id, c, a.ownerRow);
  },
  'message INSERT + commit': (_cs, rows) => {
    for (let i = 0; i < rows.length; i += 16) {
      db.transaction(() => {
        for (const r of rows.slice(i, i + 16)) {
          insMessage.run(r.realm_id, r.sender_id, r.stream_id, r.direct_group_id, r.topic, r.topic_key, r.content, r.rendered_content, r.date_sent, 0, 0, 0, r.client);
        }
      })();
    }
  },
  'message_fts INSERT + commit': (_cs, rows) => {
    for (let i = 0; i < rows.length; i += 16) {
      db.transaction(() => {
        for (const r of rows.slice(i, i + 16)) insFts.run(ftsRowid++, r.topic, r.content);
      })();
    }
  },
  'message_fts INSERT + commit, columnsize=0': (_cs, rows) => {
    for (let i = 0; i < rows.length; i += 16) {
      b.app.db.transaction(() => {
        for (const r of rows.slice(i, i + 16)) insFts0.run(ftsRowid++, r.topic, r.content);
      })();
    }
  },
  'event: formatMessages': (_cs, rows) => {
    for (const r of rows) formatMessages(db, [r], { applyMarkdown: true, clientGravatar: false, fresh: true, freshSubmessages: [] });
  },
  'event: JSON.stringify (per queue)': (_cs, rows) => {
    const fresh = { applyMarkdown: true, clientGravatar: false, fresh: true, freshSubmessages: [] };
    const events = rows.map((r) => ({ type: 'message', message: formatMessages(db, [r], fresh)[0], flags_by_user: {}, raw_content: r.content }));
    const c0 = process.cpuUsage();
    for (const e of events) JSON.stringify(e);
    stringifyUs += cpuUs(process.cpuUsage(c0));
  },
};
let stringifyUs = 0;
const cpuUs = (u: NodeJS.CpuUsage) => u.user + u.system;

const times = new Map<string, Map<ContentKind, number[]>>(Object.keys(STAGES).map((s) => [s, new Map(KINDS.map((k) => [k, []]))]));
const bytes = new Map<ContentKind, { content: number; rendered: number }>();
for (let round = 0; round < ROUNDS + 1; round++) {
  for (const [name, fn] of Object.entries(STAGES)) {
    for (const kind of round % 2 ? [...KINDS].reverse() : KINDS) {
      const cs = contents(kind);
      const rows = rowsOf(cs);
      const bodies = cs.map((c, i) => Buffer.from(new URLSearchParams({ type: 'stream', to: String(a.stream.id), topic: `topic ${i % 4}`, content: c }).toString()));
      if (!bytes.has(kind)) bytes.set(kind, { content: cs.reduce((s, c) => s + Buffer.byteLength(c), 0) / N, rendered: rows.reduce((s, r) => s + Buffer.byteLength(r.rendered_content), 0) / N });
      stringifyUs = 0;
      const c0 = process.cpuUsage();
      fn(cs, rows, bodies);
      const us = name.startsWith('event: JSON') ? stringifyUs : cpuUs(process.cpuUsage(c0));
      // Round 0 warms up.
      if (round > 0) (times.get(name)?.get(kind) as number[]).push(us / N);
    }
  }
}
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] as number;
console.log(`CPU µs per message, median of ${ROUNDS} rounds of ${N} (load average ${os.loadavg()[0].toFixed(2)}):`);
console.log(`  ${'stage'.padEnd(44)}${KINDS.map((k) => k.padStart(9)).join('')}${'flat−plain'.padStart(12)}`);
for (const [name, byKind] of times) {
  const m = KINDS.map((k) => median(byKind.get(k) as number[]));
  console.log(`  ${name.padEnd(44)}${m.map((x) => x.toFixed(1).padStart(9)).join('')}${(m[1] - m[0]).toFixed(1).padStart(12)}`);
}
console.log(`  ${'bytes: content, rendered_content'.padEnd(44)}${KINDS.map((k) => `${bytes.get(k)?.content.toFixed(0)},${bytes.get(k)?.rendered.toFixed(0)}`.padStart(9)).join('')}`);
for (const x of [a, b]) {
  x.app.close();
  fs.rmSync(x.dir, { recursive: true, force: true });
}
