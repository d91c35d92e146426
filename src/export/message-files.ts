// messages-NNNNNN.json: the history in id order, MESSAGE_CHUNK_SIZE messages to a file, each with
// its per-user rows (stored ones and the ones Parley's usermessage_cursor scheme leaves implied).
import { bool, directRecipient, secs, type Context, type Db, type Put, type Row } from './context';
import { MESSAGE_CHUNK_SIZE, messageFileName } from './zulip-format';

/** Parley's usermessage flag bits (schema.sql) to Zulip's bitfield: bits 7 and up move up two (Zulip keeps two retired flags there). */
export const zulipFlags = (parley: number): number => (parley & 0x7f) | ((parley & ~0x7f) << 2);

export async function writeMessages(db: Db, ctx: Context, put: Put): Promise<{ messages: number; usermessages: number; files: number }> {
  const page = db.prepare('SELECT * FROM message WHERE realm_id = ? AND id > ? ORDER BY id LIMIT ?');
  // Stored rows, and the rows the usermessage_cursor scheme leaves implied (schema.sql): flags 0.
  const userRows = db.prepare(
    `SELECT user_id, message_id, flags FROM usermessage WHERE message_id BETWEEN ? AND ?
     UNION ALL
     SELECT p.user_id, p.message_id, 0 FROM usermessage_pending p
     WHERE p.message_id BETWEEN ? AND ?
       AND NOT EXISTS (SELECT 1 FROM usermessage x WHERE x.user_id = p.user_id AND x.message_id = p.message_id)
     ORDER BY 2, 1`,
  );
  let after = 0;
  let file = 0;
  let messages = 0;
  let usermessages = 0;
  for (;;) {
    const rows = page.all(ctx.realmId, after, MESSAGE_CHUNK_SIZE) as Row[];
    if (rows.length === 0) break;
    const first = rows[0].id as number;
    const last = rows[rows.length - 1].id as number;
    const zm = rows.map((m) => zulipMessage(ctx, m));
    const zum: Row[] = [];
    for (const r of userRows.all(first, last, first, last) as { user_id: number; message_id: number; flags: number }[]) {
      // As Zulip's fetch_usermessages: only the rows of the organization's own (exported) users.
      if (!ctx.users.has(r.user_id) || ctx.crossRealm.has(r.user_id)) continue;
      zum.push({ id: ++usermessages, user_profile: r.user_id, message: r.message_id, flags_mask: zulipFlags(r.flags) });
    }
    file++;
    messages += rows.length;
    await put(messageFileName(file), Buffer.from(JSON.stringify({ zerver_message: zm, zerver_usermessage: zum }) + '\n'));
    after = last;
  }
  return { messages, usermessages, files: file };
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
