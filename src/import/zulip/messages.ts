// A messages-NNNNNN.json into Parley's tables: each message under its Zulip id, with its rendering
// (rendered again only when the export has none, or HTML not of the kind Zulip's Markdown writes), edit history and every per-user row with its flags.
// One file is one write (its thousand messages and their rows): the history streams through, a file
// at a time, and nothing of it stays in memory.
import { stmt } from '../../db/stmt';
import { directGroupFor } from '../../actions/messages';
import { insertMessageRow } from '../../lib/messages';
import { FLAG, topicKey } from '../../lib/narrow';
import { renderMessage } from '../../lib/render';
import { ImportError } from '../errors';
import { isSafeRenderedHtml } from '../rendered-html';
import { IMPORT_CLIENT } from '../write';
import { bit, described, rowsOf, secs, type Row, type ZulipImport } from './context';

/**
 * Zulip's UserMessage flag bits to Parley's: the first seven are the same; has_alert_word,
 * historical and is_private sit two bits lower in Parley (Zulip's retired force_expand and
 * force_collapse are gone); active_mobile_push_notification is dropped (no push is pending here).
 */
export const parleyFlags = (zulip: number): number => (zulip & 0x7f) | ((zulip >>> 2) & (FLAG.has_alert_word | FLAG.historical | FLAG.is_private));

/** The newest move (topic or channel change) in an edit history, Zulip's last_moved_time. */
function lastMoved(history: unknown[]): number | null {
  let newest: number | null = null;
  for (const h of history) {
    if (h === null || typeof h !== 'object') continue;
    const e = h as Row;
    if (('prev_topic' in e || 'prev_subject' in e || 'prev_stream' in e) && typeof e.timestamp === 'number') newest = Math.max(newest ?? 0, Math.floor(e.timestamp));
  }
  return newest;
}

/**
 * Zulip's image previews (9.0+) show a thumbnail, "/user_uploads/thumbnail/<path_id>/840x560.webp"; Parley
 * makes none and shows the file itself (src/lib/markdown.ts), so a preview points at the file.
 */
const THUMBNAIL = /\/user_uploads\/thumbnail\/([^"'\s<>]+?)\/\d+x\d+(?:-anim)?\.[a-z]+/g;

/** The links of `text` to files the import moved, moved with them; thumbnails to their files. */
function rewriteLinks(z: ZulipImport, text: string): string {
  if (!text.includes('/user_')) return text;
  if (text.includes('/user_uploads/thumbnail/')) text = text.replace(THUMBNAIL, '/user_uploads/$1');
  for (const [from, to] of z.linkChanges) if (text.includes(from)) text = text.split(from).join(to);
  return text;
}

const ROWS_PER_INSERT = 250;
const MANY_ROWS_SQL = `INSERT INTO usermessage (user_id, message_id, flags) VALUES ${Array.from({ length: ROWS_PER_INSERT }, () => '(?, ?, ?)').join(', ')}`;

/** Writes one message file. Returns the messages and per-user rows written. */
export function writeMessageFile(z: ZulipImport, name: string, data: Row): { messages: number; rows: number } {
  const { app, realmId } = z;
  /** Message id → whether it is a direct message (its rows carry is_private). */
  const direct = new Map<number, boolean>();
  rowsOf(data, 'zerver_message').forEach((m, i) => {
    const where = `${name}: zerver_message[${i}] (message ${String(m.id)})`;
    const sender = z.users.get(m.sender as number) ?? (m.sender as number);
    const r = z.recipients.get(m.recipient as number);
    if (!r) throw new ImportError(`${where}.recipient: ${String(m.recipient)} is not an id of zerver_recipient`);
    let streamId: number | null = null;
    let directGroupId: number | null = null;
    if ('stream' in r) streamId = r.stream;
    else {
      const members = 'user' in r ? [sender, r.user] : z.huddleMembers.get(r.huddle);
      if (!members || members.length === 0) throw new ImportError(`${where}.recipient: the group DM of recipient ${String(m.recipient)} has no members (no zerver_subscription to it)`);
      const key = [...new Set(members)].sort((a, b) => a - b).join(',');
      let id = z.directGroups.get(key);
      if (id === undefined) z.directGroups.set(key, (id = directGroupFor(app.db, realmId, members)));
      directGroupId = id;
    }
    let history: unknown[] | null = null;
    if (typeof m.edit_history === 'string') {
      try {
        history = JSON.parse(m.edit_history) as unknown[];
      } catch {
        history = null;
      }
      if (!Array.isArray(history)) throw new ImportError(`${where}.edit_history: not a JSON list`);
      // What GET /messages/{id}/history reads of each entry: an object with its time.
      history.forEach((e, k) => {
        if (e === null || typeof e !== 'object' || Array.isArray(e) || typeof (e as Row).timestamp !== 'number') {
          throw new ImportError(`${where}.edit_history[${k}]: not an edit (an object with a numeric timestamp)`);
        }
      });
    }
    const topic = streamId === null ? '' : String(m.subject);
    const content = rewriteLinks(z, m.content as string);
    // Zulip's rendering is kept, as Zulip's importer keeps it, but only HTML of the kind Zulip's
    // Markdown writes: clients put it in the page as it is (rendered-html.ts). Other HTML, and a
    // message without any, is rendered from its Markdown here.
    const given = typeof m.rendered_content === 'string' ? rewriteLinks(z, m.rendered_content) : null;
    const keep = given !== null && isSafeRenderedHtml(given);
    if (given !== null && !keep) z.rerendered++;
    const rendered = keep ? given : renderMessage(app, realmId, content).html;
    let editHistory = history ? (m.edit_history as string) : null;
    if (history) {
      let changed = false;
      for (const e of history as Row[]) {
        if (typeof e.prev_rendered_content !== 'string' || isSafeRenderedHtml(e.prev_rendered_content)) continue;
        e.prev_rendered_content = typeof e.prev_content === 'string' ? renderMessage(app, realmId, rewriteLinks(z, e.prev_content)).html : '';
        changed = true;
      }
      if (changed) {
        editHistory = JSON.stringify(history);
        z.rerendered++;
      }
    }
    described(where, () =>
      insertMessageRow(
        app.db,
        {
          realm_id: realmId,
          sender_id: sender,
          stream_id: streamId,
          direct_group_id: directGroupId,
          topic,
          topic_key: topicKey(topic),
          content,
          rendered_content: rendered,
          date_sent: secs(m.date_sent) as number,
          has_link: bit(m.has_link),
          has_image: bit(m.has_image),
          has_attachment: bit(m.has_attachment),
          client: z.clients.get(m.sending_client as number) ?? IMPORT_CLIENT,
        },
        { id: m.id as number, last_edit_time: secs(m.last_edit_time), last_moved_time: history ? lastMoved(history) : null, edit_history: editHistory },
      ),
    );
    direct.set(m.id as number, streamId === null);
  });
  const rows = rowsOf(data, 'zerver_usermessage');
  // The bulk of an import (20 rows a message for 20 people): ROWS_PER_INSERT rows to a statement (a
  // call per row cost a third of the import), no closure or string per row.
  const values = new Array<number>(ROWS_PER_INSERT * 3);
  const flagsOf = (um: Row) => parleyFlags(um.flags_mask as number) | (direct.get(um.message as number) ? FLAG.is_private : 0);
  const userOf = (um: Row) => z.users.get(um.user_profile as number) ?? (um.user_profile as number);
  let start = 0;
  try {
    for (; start + ROWS_PER_INSERT <= rows.length; start += ROWS_PER_INSERT) {
      for (let k = 0; k < ROWS_PER_INSERT; k++) {
        const um = rows[start + k];
        values[3 * k] = userOf(um);
        values[3 * k + 1] = um.message as number;
        values[3 * k + 2] = flagsOf(um);
      }
      stmt(app.db, MANY_ROWS_SQL).run(values);
    }
  } catch {
    // The failed statement changed nothing: its rows one by one name the culprit (below).
  }
  const one = stmt(app.db, 'INSERT INTO usermessage (user_id, message_id, flags) VALUES (?, ?, ?)');
  for (let i = start; i < rows.length; i++) {
    const um = rows[i];
    described(`${name}: zerver_usermessage[${i}]`, () => one.run(userOf(um), um.message, flagsOf(um)));
  }
  return { messages: direct.size, rows: rows.length };
}

/** Reactions (realm.json, but their messages are written by now), under Zulip's ids: the order clients show them in. */
export function writeReactions(z: ZulipImport, data: Row): number {
  const rows = rowsOf(data, 'zerver_reaction');
  rows.forEach((r, i) => {
    described(`realm.json: zerver_reaction[${i}]`, () =>
      stmt(z.app.db, 'INSERT INTO reaction (id, message_id, user_id, emoji_name, emoji_code, reaction_type) VALUES (?, ?, ?, ?, ?, ?)').run(
        r.id,
        r.message,
        z.users.get(r.user_profile as number) ?? r.user_profile,
        r.emoji_name,
        r.emoji_code,
        r.reaction_type,
      ),
    );
  });
  return rows.length;
}

/**
 * After the last message: each channel's first message, and a usermessage cursor at the newest
 * message for every subscriber. The import wrote every per-user row itself (the export lists them
 * all), so nothing may be implied for the history: the cursors were removed before the messages and
 * are created here past them (an INSERT: moving one would write implied rows, schema.sql).
 */
export function finishMessages(z: ZulipImport): void {
  const { app, realmId } = z;
  stmt(app.db, 'UPDATE stream SET first_message_id = (SELECT min(id) FROM message m WHERE m.stream_id = stream.id) WHERE realm_id = ?').run(realmId);
  stmt(app.db, 'INSERT OR IGNORE INTO usermessage_cursor (user_id, message_id) SELECT DISTINCT user_id, (SELECT coalesce(max(id), 0) FROM message) FROM subscription').run();
}
