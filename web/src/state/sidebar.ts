// What the left sidebar lists, in Zulip's orders (stream_list_sort.ts, topic_list_data.ts,
// pm_list_data.ts): pure functions of the state, so the order is tested without a browser.
import { collator, dmKey, dmTitle, sameTopic } from './narrow';
import { isMuted, topicPolicy, VISIBILITY } from './muting';
import type { State } from './store';
import { narrowContext } from './store';
import { unreadCounts, type UnreadCounts } from './unread';
import type { Subscription } from './wire';

export interface ChannelSection {
  id: 'pinned' | 'channels';
  title: string;
  channels: Subscription[];
}

/**
 * Subscribed channels in sections: pinned first, then the rest ("Other" when there are pinned ones);
 * in each, channels that are not muted first, then muted ones, each part by name (Intl.Collator).
 */
export function channelSections(s: State): ChannelSection[] {
  const subs = [...s.subs.values()].filter((sub) => !sub.is_archived);
  const byName = (a: Subscription, b: Subscription) => collator.compare(a.name, b.name);
  const order = (list: Subscription[]) => [...list.filter((x) => !x.is_muted).sort(byName), ...list.filter((x) => x.is_muted).sort(byName)];
  const pinned = order(subs.filter((x) => x.pin_to_top));
  const rest = order(subs.filter((x) => !x.pin_to_top));
  const sections: ChannelSection[] = [];
  if (pinned.length) sections.push({ id: 'pinned', title: 'Pinned channels', channels: pinned });
  sections.push({ id: 'channels', title: pinned.length ? 'Other channels' : 'Channels', channels: rest });
  return sections;
}

export interface TopicItem {
  name: string;
  maxId: number;
  unread: number;
  muted: boolean;
  followed: boolean;
}

/** How many topics show under a channel before "more topics" (Zulip: 6, up to 10 with unreads). */
export const MAX_TOPICS = 6;
export const MAX_TOPICS_WITH_UNREAD = 10;

/**
 * The topics under the selected channel, newest first: the newest few, then those with unread
 * messages, and always the open one; muted topics only when open. `more` counts unread ones left out.
 */
export function topicItems(s: State, streamId: number, counts: UnreadCounts, openTopic: string | undefined, all = false): { topics: TopicItem[]; more: number; hidden: number } {
  const known = new Map(s.topics.get(streamId));
  // Topics with unread messages that the topic list has not seen yet (Zulip's get_missing_topics).
  for (const [id, where] of s.unread.stream) {
    if (where.streamId !== streamId) continue;
    const key = where.topic.toLowerCase();
    const t = known.get(key);
    if (!t || t.maxId < id) known.set(key, { name: t?.name ?? where.topic, maxId: id });
  }
  const unreadByTopic = counts.byTopic.get(streamId);
  let items: TopicItem[] = [...known.values()]
    .sort((a, b) => b.maxId - a.maxId)
    .map((t) => ({
      name: t.name,
      maxId: t.maxId,
      unread: unreadByTopic?.get(t.name.toLowerCase()) ?? 0,
      muted: isMuted(s, streamId, t.name),
      followed: topicPolicy(s, streamId, t.name) === VISIBILITY.followed,
    }));
  if (openTopic !== undefined && !items.some((t) => sameTopic(t.name, openTopic))) {
    items.unshift({ name: openTopic, maxId: -1, unread: 0, muted: isMuted(s, streamId, openTopic), followed: false });
  }
  if (all) return { topics: items, more: 0, hidden: 0 };
  const chosen: TopicItem[] = [];
  let more = 0;
  let hidden = 0;
  for (const t of items) {
    const open = openTopic !== undefined && sameTopic(t.name, openTopic);
    if (open) chosen.push(t);
    else if (t.muted) {
      more += t.unread;
      hidden++;
    } else if (chosen.length < MAX_TOPICS) chosen.push(t);
    else if (t.unread > 0 && chosen.length < MAX_TOPICS_WITH_UNREAD) chosen.push(t);
    else {
      more += t.unread;
      hidden++;
    }
  }
  items = chosen;
  return { topics: items, more, hidden };
}

export interface DmItem {
  key: string;
  userIds: number[];
  label: string;
  maxId: number;
  unread: number;
  group: boolean;
}

/** Direct-message conversations, newest first, with unread counts; all of a muted user's alone are hidden. */
export function dmItems(s: State, counts: UnreadCounts): DmItem[] {
  const ctx = narrowContext(s);
  const items: DmItem[] = [];
  const keys = new Map(s.recentDms);
  // A conversation with unread messages is listed even if /register's recent list missed it.
  for (const [id, key] of s.unread.dm) if ((keys.get(key) ?? 0) < id) keys.set(key, id);
  for (const [key, maxId] of keys) {
    const userIds = key.split(',').map(Number);
    if (userIds.every((id) => s.mutedUsers.has(id))) continue;
    items.push({
      key,
      userIds,
      label: userIds.length === 1 && userIds[0] === s.myId ? (s.users.get(s.myId)?.full_name ?? 'You') : dmTitle(userIds, ctx),
      maxId,
      unread: counts.byDm.get(key) ?? 0,
      group: userIds.length > 1,
    });
  }
  return items.sort((a, b) => b.maxId - a.maxId);
}

/** The unread counts of the state (computed once per state change by the caller). */
export function counts(s: State): UnreadCounts {
  return unreadCounts(s.unread, (streamId, topic) => isMuted(s, streamId, topic));
}

export { dmKey };
