// Message retention: deletes messages older than their channel's retention (or the organization's,
// for channels that inherit it and for direct messages). Runs on a timer, in bounded batches.
// As Zulip's zerver/lib/retention.py, the deletion is silent: no delete_message events and no
// first_message_id updates (clients find the messages gone when they next fetch).
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { nowSeconds } from '../lib/clock';
import type { MessageRow } from '../lib/messages';
import { getRealmById } from '../lib/realm';
import { removeMessageRows } from './messages';
import { deleteOldUnclaimedAttachments } from './uploads';
import { promoteNewFullMembers } from './user-groups';

const BATCH = 1000;

/** Deletes one batch per expired scope; returns how many messages it deleted. */
export function runRetentionOnce(app: App): number {
  const realmId = app.realmId();
  const realm = getRealmById(app.db, realmId);
  if (!realm) return 0;
  const now = nowSeconds(app.clock);
  let deleted = 0;
  const expire = (sql: string, ...args: unknown[]) => {
    app.batch.write(() => {
      const rows = stmt(app.db, sql).all(...args) as MessageRow[];
      removeMessageRows(app, rows);
      deleted += rows.length;
    });
  };
  // Channels with their own retention (-1 is unlimited).
  const streams = stmt(app.db, 'SELECT id, message_retention_days AS days FROM stream WHERE realm_id = ? AND message_retention_days > 0').all(realmId) as {
    id: number;
    days: number;
  }[];
  for (const s of streams) expire('SELECT * FROM message WHERE stream_id = ? AND date_sent < ? ORDER BY id LIMIT ?', s.id, now - s.days * 86400, BATCH);
  const realmDays = realm.message_retention_days;
  if (realmDays !== null && realmDays > 0) {
    const cutoff = now - realmDays * 86400;
    expire(
      `SELECT m.* FROM message m JOIN stream s ON s.id = m.stream_id
       WHERE s.realm_id = ? AND s.message_retention_days IS NULL AND m.date_sent < ? ORDER BY m.id LIMIT ?`,
      realmId,
      cutoff,
      BATCH,
    );
    expire('SELECT * FROM message WHERE realm_id = ? AND direct_group_id IS NOT NULL AND date_sent < ? ORDER BY id LIMIT ?', realmId, cutoff, BATCH);
  }
  return deleted;
}

/**
 * Starts the periodic retention job (every `intervalMs`, default an hour), which also removes old
 * unclaimed uploads and promotes new full members; stops on shutdown.
 */
export function startRetentionJob(app: App, intervalMs = 3_600_000): void {
  const tick = () => {
    let more = false;
    try {
      more = runRetentionOnce(app) > 0;
      // Uploads no message claims (Zulip runs this daily; here with retention, after it).
      if (deleteOldUnclaimedAttachments(app) > 0) more = true;
      // Zulip's daily promote_new_full_members: accounts past the waiting period join role:fullmembers.
      promoteNewFullMembers(app);
    } catch (err) {
      console.error('parley: retention job failed', err);
    }
    // Keep going while batches come back, yielding to requests between rounds.
    timer = setTimeout(tick, more ? 1000 : intervalMs);
    timer.unref();
  };
  let timer = setTimeout(tick, 5000);
  timer.unref();
  app.onShutdown(() => clearTimeout(timer));
}
