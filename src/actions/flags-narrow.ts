// POST /messages/flags/narrow: set or clear a flag on a window of a narrow, clamped to 5000 messages.
import type { App } from '../app';
import { errors } from '../http/errors';
import { messageWindow, type Anchor } from '../lib/fetch';
import { narrowToSql, type NarrowTerm } from '../lib/narrow';
import type { UserRow } from '../lib/users';
import { editableFlag, flagOperation, updateFlags } from './flags';

export { parseAnchor } from '../lib/fetch';

const MAX_MESSAGES_PER_UPDATE = 5000;

export interface FlagsNarrowRequest {
  anchor: Anchor;
  includeAnchor: boolean;
  numBefore: number;
  numAfter: number;
  narrow: NarrowTerm[];
  op: string;
  flag: string;
}

/**
 * Applies the flag; the response keys are those of Zulip's update_message_flags_for_narrow, and so is
 * the order of the checks: the range, the narrow, then the flag and the operation.
 */
export function doUpdateFlagsForNarrow(app: App, user: UserRow, req: FlagsNarrowRequest): Record<string, unknown> {
  if (!req.includeAnchor && req.numBefore > 0 && req.numAfter > 0) {
    throw errors.badRequest('The anchor can only be excluded at an end of the range');
  }
  // Zulip's clamping: at most 5000 in all, and num_before keeps at least 2500 when both are large.
  const numBefore = Math.min(req.numBefore, Math.max(MAX_MESSAGES_PER_UPDATE - req.numAfter, MAX_MESSAGES_PER_UPDATE / 2));
  const numAfter = Math.min(req.numAfter, MAX_MESSAGES_PER_UPDATE - numBefore);
  return app.batch.write(() => {
    const n = narrowToSql(app.db, user, req.narrow);
    const w = messageWindow(app, user, n, req.anchor, req.includeAnchor, numBefore, numAfter);
    editableFlag(req.flag);
    const op = flagOperation(req.op);
    const processed = w.rows.map((r) => r.id);
    const { changed, ignoredChannels } = updateFlags(app, user, processed, req.flag, op);
    const out: Record<string, unknown> = {
      processed_count: processed.length,
      updated_count: changed.length,
      first_processed_id: processed.length ? processed[0] : null,
      last_processed_id: processed.length ? processed[processed.length - 1] : null,
      found_oldest: w.foundOldest,
      found_newest: w.foundNewest,
    };
    // Only when marking unread: the channels the user left, whose messages were skipped.
    if (ignoredChannels !== undefined) out.ignored_because_not_subscribed_channels = ignoredChannels;
    return out;
  });
}
