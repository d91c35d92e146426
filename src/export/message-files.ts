// messages-NNNNNN.json: the history in id order, MESSAGE_CHUNK_SIZE messages to a file, each with
// its per-user rows (stored ones and the ones Parley's usermessage_cursor scheme leaves implied).
import { bool, clientId, directRecipient, secs, type Context, type Db, type Put, type Row } from './context';
import { keepMessage, keepUserMessages } from './filter';
import { putBytes, putInt } from '../lib/byte-writers';
import { MESSAGE_CHUNK_SIZE, messageFileName } from './zulip-format';

/** Parley's usermessage flag bits (schema.sql) to Zulip's bitfield: bits 7 and up move up two (Zulip keeps two retired flags there). */
export const zulipFlags = (parley: number): number => (parley & 0x7f) | ((parley & ~0x7f) << 2);

/**
 * The subscribers who have implied rows (schema.sql, usermessage_pending): each active user's active
 * subscriptions with the user's cursor; a channel message newer than the cursor is theirs with flags 0
 * unless usermessage stores the row. Computed here rather than through the view: the view's join
 * costs ~2 µs a row, most of an export's time (a channel message has a row per subscriber).
 */
function impliedSubscribers(db: Db, realmId: number): Map<number, { user: number; cursor: number }[]> {
  const byStream = new Map<number, { user: number; cursor: number }[]>();
  const rows = db
    .prepare(
      `SELECT s.stream_id, s.user_id, c.message_id AS cursor FROM subscription s
       JOIN usermessage_cursor c ON c.user_id = s.user_id
       JOIN user u ON u.id = s.user_id AND u.is_active = 1
       WHERE s.active = 1 AND u.realm_id = ? ORDER BY s.stream_id, s.user_id`,
    )
    .all(realmId) as { stream_id: number; user_id: number; cursor: number }[];
  for (const r of rows) {
    let list = byStream.get(r.stream_id);
    if (!list) byStream.set(r.stream_id, (list = []));
    list.push({ user: r.user_id, cursor: r.cursor });
  }
  return byStream;
}

export interface MessageFilesSummary {
  messages: number;
  usermessages: number;
  files: number;
  /** Rows per file, for stats.json: messages-000001 → {zerver_message, zerver_usermessage}. */
  perFile: Record<string, Record<string, number>>;
}

/** A growable buffer of ASCII: zerver_usermessage's rows are written as bytes, without an object or a string per row. */
class AsciiOut {
  buf = Buffer.allocUnsafe(1 << 21);
  len = 0;
  private room(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + n));
    this.buf.copy(bigger, 0, 0, this.len);
    this.buf = bigger;
  }
  bytes(b: Buffer): void {
    this.room(b.length);
    this.len = putBytes(this.buf, this.len, b);
  }
  /** A non-negative integer's decimal digits. */
  int(n: number): void {
    this.room(16);
    this.len = putInt(this.buf, this.len, n);
  }
}

/** One exported user's stored rows in the current file's id range: message ids ascending, and their flags. */
interface UserRows {
  user: number;
  /** `,"user_profile":USER,"message":` */
  prefix: Buffer;
  ids: number[];
  flags: number[];
  at: number;
}

export async function writeMessages(db: Db, ctx: Context, put: Put): Promise<MessageFilesSummary> {
  const page = db.prepare('SELECT * FROM message WHERE realm_id = ? AND id > ? ORDER BY id LIMIT ?');
  // A user's stored rows of the file's range, read along the primary key (user_id, message_id) as
  // two JSON arrays: 20,000 rows a file are most of an export's work, and a scan by message (the
  // usermessage_message index, then a lookup in the table for the flags) and one JS object per row
  // cost about 1.5 µs a row against 0.2 µs this way (bench/data-move.ts).
  const storedOf = db.prepare('SELECT json_group_array(message_id) AS ids, json_group_array(flags) AS flags FROM usermessage WHERE user_id = ? AND message_id BETWEEN ? AND ?');
  const implied = impliedSubscribers(db, ctx.realmId);
  // As Zulip's fetch_usermessages: only the rows of the organization's own (exported) users, in user order.
  const users: UserRows[] = [...ctx.users.keys()]
    .filter((u) => !ctx.crossRealm.has(u))
    .sort((a, b) => a - b)
    .map((user) => ({ user, prefix: Buffer.from(`,"user_profile":${user},"message":`), ids: [], flags: [], at: 0 }));
  const slotOf = new Map(users.map((u, i) => [u.user, i]));
  // Implied rows per channel: the exported subscribers' slots (ascending) and cursors.
  const impliedSlots = new Map<number, { slot: number; cursor: number }[]>();
  for (const [stream, subs] of implied) {
    const list = subs.filter((s) => slotOf.has(s.user)).map((s) => ({ slot: slotOf.get(s.user) as number, cursor: s.cursor }));
    impliedSlots.set(stream, list.sort((a, b) => a.slot - b.slot));
  }
  const flagText = new Map<number, Buffer>();
  const flagBytes = (flags: number): Buffer => {
    let b = flagText.get(flags);
    if (!b) flagText.set(flags, (b = Buffer.from(`,"flags_mask":${zulipFlags(flags)}}`)));
    return b;
  };
  const ROW_OPEN = Buffer.from('{"id":');
  const COMMA = Buffer.from(',');
  // The slots with a stored row for the current message, and their flags (reused for every message).
  const storedSlots = new Int32Array(users.length);
  const storedFlags = new Int32Array(users.length);
  const hasStored = new Int32Array(users.length).fill(-1);
  // The current message's rows, stored and implied merged in user order.
  const rowSlots = new Int32Array(users.length);
  const rowFlags = new Int32Array(users.length);
  let after = 0;
  let file = 0;
  let messages = 0;
  let usermessages = 0;
  const perFile: Record<string, Record<string, number>> = {};
  let pending: Promise<void> | null = null;
  for (;;) {
    const rows = page.all(ctx.realmId, after, MESSAGE_CHUNK_SIZE) as Row[];
    if (rows.length === 0) break;
    const first = rows[0].id as number;
    const last = rows[rows.length - 1].id as number;
    const zm: Row[] = [];
    const active: UserRows[] = [];
    for (const u of users) {
      const r = storedOf.get(u.user, first, last) as { ids: string; flags: string };
      if (r.ids === '[]') continue;
      u.ids = JSON.parse(r.ids) as number[];
      u.flags = JSON.parse(r.flags) as number[];
      u.at = 0;
      for (let i = 1; i < u.ids.length; i++) if (u.ids[i] <= u.ids[i - 1]) throw new Error(`usermessage rows of user ${u.user} out of order`);
      active.push(u);
    }
    const activeSlots = active.map((u) => slotOf.get(u.user) as number);
    const out = new AsciiOut();
    const fileStart = usermessages;
    const filter = ctx.filter;
    for (const m of rows) {
      const id = m.id as number;
      // The stored rows of this message, in user order.
      let n = 0;
      for (let k = 0; k < active.length; k++) {
        const u = active[k];
        if (u.at < u.ids.length && u.ids[u.at] === id) {
          const slot = activeSlots[k];
          storedSlots[n] = slot;
          storedFlags[n++] = u.flags[u.at++];
          hasStored[slot] = id;
        }
      }
      // Merged with the implied rows (subscribers whose cursor is older than the message, flags 0;
      // a stored row wins), in user order.
      let count = 0;
      const take = (slot: number, flags: number) => {
        rowSlots[count] = slot;
        rowFlags[count++] = flags;
      };
      const subs = m.stream_id !== null ? impliedSlots.get(m.stream_id as number) : undefined;
      let k = 0;
      if (subs) {
        for (const sub of subs) {
          if (sub.cursor >= id || hasStored[sub.slot] === id) continue;
          while (k < n && storedSlots[k] < sub.slot) take(storedSlots[k], storedFlags[k++]);
          take(sub.slot, 0);
        }
      }
      while (k < n) take(storedSlots[k], storedFlags[k++]);
      if (filter) {
        const holders: number[] = [];
        for (let i = 0; i < count; i++) holders.push(users[rowSlots[i]].user);
        if (!keepMessage(filter, m.stream_id, holders)) continue;
        filter.keptMessages.add(id);
      }
      zm.push(zulipMessage(ctx, m));
      for (let i = 0; i < count; i++) {
        const u = users[rowSlots[i]];
        if (filter && !keepUserMessages(filter, u.user)) continue;
        if (usermessages !== fileStart) out.bytes(COMMA);
        out.bytes(ROW_OPEN);
        out.int(++usermessages);
        out.bytes(u.prefix);
        out.int(id);
        out.bytes(flagBytes(rowFlags[i]));
      }
    }
    after = last;
    // A filtered export may leave a whole chunk out: file numbers stay contiguous, as Zulip's importer reads them.
    if (zm.length === 0) continue;
    file++;
    messages += zm.length;
    perFile[messageFileName(file).replace(/\.json$/, '')] = { zerver_message: zm.length, zerver_usermessage: usermessages - fileStart };
    // The same text as JSON.stringify({zerver_message, zerver_usermessage}) with {id, user_profile, message, flags_mask} rows.
    const text = Buffer.concat([Buffer.from(`{"zerver_message":${JSON.stringify(zm)},"zerver_usermessage":[`), out.buf.subarray(0, out.len), Buffer.from(']}\n')]);
    // The previous file is compressed (zlib's threads) while this one is built: wait for it only now.
    if (pending) await pending;
    pending = put(messageFileName(file), text);
  }
  if (pending) await pending;
  return { messages, usermessages, files: file, perFile };
}

function zulipMessage(ctx: Context, m: Row): Row {
  let recipient: number;
  if (m.stream_id !== null) {
    recipient = ctx.streamRecipient.get(m.stream_id) as number;
  } else {
    const members = ctx.directGroups.get(m.direct_group_id);
    if (!members) throw new Error(`message ${m.id} has no conversation`);
    recipient = directRecipient(ctx, members, m.sender_id);
  }
  return {
    id: m.id,
    sender: m.sender_id,
    recipient,
    realm: ctx.realmId,
    subject: m.topic,
    content: m.content,
    rendered_content: m.rendered_content,
    // Zulip's markdown version when rendered_content was made; Parley renders Zulip's way.
    rendered_content_version: 1,
    date_sent: secs(m.date_sent),
    last_edit_time: secs(m.last_edit_time),
    // Stored as Zulip stores it: a JSON list, newest first (user_id, timestamp, prev_content, ...).
    edit_history: m.edit_history,
    sending_client: clientId(ctx, m.client as string),
    has_attachment: bool(m.has_attachment),
    has_image: bool(m.has_image),
    has_link: bool(m.has_link),
    is_channel_message: m.stream_id !== null,
  };
}
