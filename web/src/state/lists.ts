// Message lists, one per narrow the app has shown: the ids of a contiguous run of that narrow's messages
// (sorted), and whether the run reaches the oldest and the newest message. New messages join the lists
// they belong to only where the run reaches them; what the client cannot decide marks the list stale, and
// the app fetches it again when it is shown.
import { isMuted } from './muting';
import { matchesNarrow, type Narrow } from './narrow';
import type { State } from './store';
import type { Message } from './wire';

export interface MessageList {
  narrow: Narrow;
  /** Sorted message ids. */
  ids: number[];
  foundOldest: boolean;
  foundNewest: boolean;
  /** An event changed the narrow in a way the client cannot place: fetch the list again. */
  stale: boolean;
}

/** Whether the list's run of messages spans `id` (so inserting it keeps the run contiguous). */
export function listCoversId(list: MessageList, id: number): boolean {
  const first = list.ids[0];
  const last = list.ids[list.ids.length - 1];
  if (first === undefined) return list.foundOldest && list.foundNewest;
  return (list.foundOldest || id > first) && (list.foundNewest || id < last);
}

function insertSorted(ids: number[], id: number): number[] {
  if (ids.includes(id)) return ids;
  const next = [...ids, id];
  if (ids.length && ids[ids.length - 1] > id) next.sort((a, b) => a - b);
  return next;
}

function matches(s: State, m: Message, n: Narrow): boolean | null {
  return matchesNarrow(m, n, s.myId, (streamId, topic) => isMuted(s, streamId, topic));
}

/** A new message: appended to every list it belongs to whose run reaches the newest message. */
export function addToLists(s: State, m: Message): void {
  for (const [key, list] of s.lists) {
    if (list.stale) continue;
    const belongs = matches(s, m, list.narrow);
    if (belongs === null) s.lists.set(key, { ...list, stale: true });
    else if (belongs && listCoversId(list, m.id)) s.lists.set(key, { ...list, ids: insertSorted(list.ids, m.id) });
  }
}

/** Deleted messages leave every list. */
export function removeFromLists(s: State, ids: ReadonlySet<number>): void {
  for (const [key, list] of s.lists) {
    if (list.ids.some((id) => ids.has(id))) s.lists.set(key, { ...list, ids: list.ids.filter((id) => !ids.has(id)) });
  }
}

/** Moved messages (new topic or channel): out of the lists they left, into those they joined. */
export function relistMoved(s: State, ids: readonly number[], moved: readonly Message[]): void {
  const byId = new Map(moved.map((m) => [m.id, m]));
  for (const [key, list] of s.lists) {
    let next = list.ids;
    let stale = false;
    for (const id of ids) {
      const m = byId.get(id);
      if (!m) {
        // Moved, but not loaded here: a list that shows the old or new place may be missing it.
        if (list.narrow.kind !== 'dm') stale = true;
        continue;
      }
      const belongs = matches(s, m, list.narrow);
      if (belongs === null) stale = true;
      else if (belongs && !next.includes(id) && listCoversId(list, id)) next = insertSorted(next, id);
      else if (!belongs && next.includes(id)) next = next.filter((x) => x !== id);
    }
    if (stale) s.lists.set(key, { ...list, stale: true });
    else if (next !== list.ids) s.lists.set(key, { ...list, ids: next });
  }
}
