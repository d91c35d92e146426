// Drafts synchronised between a user's clients (Zulip's zerver/lib/drafts.py): validation, writes and
// `drafts` events to the user's own queues.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors, JsonableError } from '../http/errors';
import { accessStreamById } from '../lib/streams';
import { findUserById, type UserRow } from '../lib/users';

export interface DraftInput {
  type: '' | 'stream' | 'private';
  to: number[];
  topic: string;
  content: string;
  timestamp?: number;
}

export interface Draft {
  id: number;
  type: string;
  to: number[];
  topic: string;
  content: string;
  timestamp: number;
}

interface DraftRow {
  id: number;
  type: string;
  to_json: string;
  topic: string;
  content: string;
  timestamp: number;
}

/** Zulip's MAX_TOPIC_NAME_LENGTH: draft topics are truncated, not refused. */
const MAX_TOPIC_LENGTH = 60;

function toDraft(r: DraftRow): Draft {
  let to: number[] = [];
  try {
    const parsed = JSON.parse(r.to_json);
    if (Array.isArray(parsed)) to = parsed.filter((x): x is number => typeof x === 'number');
  } catch {
    // stored by us; never malformed
  }
  return { id: r.id, type: r.type, to, topic: r.topic, content: r.content, timestamp: r.timestamp };
}

/** The user's drafts, most recently edited first (GET /drafts). */
export function listDrafts(app: App, user: UserRow): Draft[] {
  return (
    stmt(app.db, 'SELECT id, type, "to" AS to_json, topic, content, timestamp FROM draft WHERE user_id = ? ORDER BY timestamp DESC, id DESC').all(
      user.id,
    ) as DraftRow[]
  ).map(toDraft);
}

function truncateTopic(topic: string): string {
  const chars = [...topic];
  return chars.length > MAX_TOPIC_LENGTH ? chars.slice(0, MAX_TOPIC_LENGTH - 3).join('') + '...' : topic;
}

/** Zulip's further_validated_draft_dict: the stored form of a draft. */
function checkDraft(app: App, user: UserRow, d: DraftInput): Omit<Draft, 'id'> {
  if (d.content.trim() === '') throw errors.badRequest('Content must not be empty');
  const timestamp = d.timestamp ?? app.clock.nowMs() / 1000;
  if (timestamp < 0) throw errors.badRequest('Timestamp must not be negative.');
  let topic = '';
  let to: number[] = [];
  if (d.type === 'stream') {
    topic = truncateTopic(d.topic);
    if (topic.includes('\0')) throw errors.badRequest('Topic must not contain null bytes');
    if (d.to.length !== 1) throw errors.badRequest('Must specify exactly 1 channel ID for channel messages');
    accessStreamById(app.db, user, d.to[0]);
    to = [d.to[0]];
  } else if (d.type === 'private' && d.to.length > 0) {
    const ids = [...new Set(d.to)].sort((a, b) => a - b);
    for (const id of ids) {
      const u = findUserById(app.db, user.realm_id, id);
      if (!u) throw errors.badRequest('Invalid user ID {id}', { id });
    }
    to = ids;
  }
  return { type: d.type, to, topic, content: d.content, timestamp: Math.floor(timestamp) };
}

function checkSyncEnabled(user: UserRow): void {
  if (!user.enable_drafts_synchronization) throw errors.badRequest('User has disabled synchronizing drafts.');
}

/** POST /drafts: creates the drafts in order; returns their ids. */
export function doCreateDrafts(app: App, user: UserRow, drafts: DraftInput[]): number[] {
  checkSyncEnabled(user);
  return app.batch.write(() => {
    const created: Draft[] = [];
    for (const d of drafts) {
      const clean = checkDraft(app, user, d);
      const id = Number(
        stmt(app.db, 'INSERT INTO draft (user_id, type, "to", topic, content, timestamp) VALUES (?, ?, ?, ?, ?, ?)').run(
          user.id,
          clean.type,
          JSON.stringify(clean.to),
          clean.topic,
          clean.content,
          clean.timestamp,
        ).lastInsertRowid,
      );
      created.push({ id, ...clean });
    }
    if (created.length > 0) app.batch.onCommit(() => app.events.send({ type: 'drafts', op: 'add', drafts: created }, [user.id]));
    return created.map((d) => d.id);
  });
}

function draftNotFound(): JsonableError {
  return new JsonableError('Draft does not exist', { status: 404 });
}

/** PATCH /drafts/{id}: replaces the draft. */
export function doEditDraft(app: App, user: UserRow, id: number, d: DraftInput): void {
  checkSyncEnabled(user);
  app.batch.write(() => {
    const exists = stmt(app.db, 'SELECT 1 FROM draft WHERE id = ? AND user_id = ?').get(id, user.id);
    if (!exists) throw draftNotFound();
    const clean = checkDraft(app, user, d);
    stmt(app.db, 'UPDATE draft SET type = ?, "to" = ?, topic = ?, content = ?, timestamp = ? WHERE id = ?').run(
      clean.type,
      JSON.stringify(clean.to),
      clean.topic,
      clean.content,
      clean.timestamp,
      id,
    );
    app.batch.onCommit(() => app.events.send({ type: 'drafts', op: 'update', draft: { id, ...clean } }, [user.id]));
  });
}

/** DELETE /drafts/{id}. */
export function doDeleteDraft(app: App, user: UserRow, id: number): void {
  checkSyncEnabled(user);
  app.batch.write(() => {
    const res = stmt(app.db, 'DELETE FROM draft WHERE id = ? AND user_id = ?').run(id, user.id);
    if (res.changes === 0) throw draftNotFound();
    app.batch.onCommit(() => app.events.send({ type: 'drafts', op: 'remove', draft_id: id }, [user.id]));
  });
}
