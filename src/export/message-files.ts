// messages-NNNNNN.json: the history in id order, MESSAGE_CHUNK_SIZE messages to a file, each with
// its per-user rows (stored ones and the ones Parley's usermessage_cursor scheme leaves implied).
import { bool, directRecipient, secs, type Context, type Db, type Put, type Row } from './context';
import { keepMessage, keepUserMessages } from './filter';
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

export async function writeMessages(db: Db, ctx: Context, put: Put): Promise<MessageFilesSummary> {
  const page = db.prepare('SELECT * FROM message WHERE realm_id = ? AND id > ? ORDER BY id LIMIT ?');
  const storedRows = db.prepare('SELECT message_id, user_id, flags FROM usermessage WHERE message_id BETWEEN ? AND ?');
  const implied = impliedSubscribers(db, ctx.realmId);
  let after = 0;
  let file = 0;
  let messages = 0;
  let usermessages = 0;
  const perFile: Record<string, Record<string, number>> = {};
  for (;;) {
    const rows = page.all(ctx.realmId, after, MESSAGE_CHUNK_SIZE) as Row[];
    if (rows.length === 0) break;
    const first = rows[0].id as number;
    const last = rows[rows.length - 1].id as number;
    const zm: Row[] = [];
    const stored = new Map<number, Map<number, number>>();
    for (const r of storedRows.all(first, last) as { message_id: number; user_id: number; flags: number }[]) {
      let users = stored.get(r.message_id);
      if (!users) stored.set(r.message_id, (users = new Map()));
      users.set(r.user_id, r.flags);
    }
    const zum: Row[] = [];
    for (const m of rows) {
      const own = stored.get(m.id);
      const mine: [number, number][] = own ? [...own] : [];
      if (m.stream_id !== null) {
        for (const sub of implied.get(m.stream_id) ?? []) if (sub.cursor < m.id && !own?.has(sub.user)) mine.push([sub.user, 0]);
      }
      mine.sort((a, b) => a[0] - b[0]);
      const filter = ctx.filter;
      if (filter) {
        if (!keepMessage(filter, m.stream_id, mine.map(([user]) => user))) continue;
        filter.keptMessages.add(m.id);
      }
      zm.push(zulipMessage(ctx, m));
      for (const [user, flags] of mine) {
        // As Zulip's fetch_usermessages: only the rows of the organization's own (exported) users.
        if (!ctx.users.has(user) || ctx.crossRealm.has(user)) continue;
        if (filter && !keepUserMessages(filter, user)) continue;
        zum.push({ id: ++usermessages, user_profile: user, message: m.id, flags_mask: zulipFlags(flags) });
      }
    }
    after = last;
    // A filtered export may leave a whole chunk out: file numbers stay contiguous, as Zulip's importer reads them.
    if (zm.length === 0) continue;
    file++;
    messages += zm.length;
    perFile[messageFileName(file).replace(/\.json$/, '')] = { zerver_message: zm.length, zerver_usermessage: zum.length };
    await put(messageFileName(file), Buffer.from(JSON.stringify({ zerver_message: zm, zerver_usermessage: zum }) + '\n'));
  }
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
    sending_client: ctx.clients.get(m.client) as number,
    has_attachment: bool(m.has_attachment),
    has_image: bool(m.has_image),
    has_link: bool(m.has_link),
    is_channel_message: m.stream_id !== null,
  };
}
