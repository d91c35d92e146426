// Unread messages as the client tracks them (Zulip's unread.ts): each unread message id with where it
// is (a channel's topic, or a direct-message conversation) and whether it mentions me. Counts are
// derived from these sets, so every way a message stops or starts being unread is one delete or add.
import { dmKey, sameTopic } from './narrow';
import type { UnreadMsgs } from './wire';

export interface Unread {
  /** Unread channel messages: id → channel and topic. */
  stream: Map<number, { streamId: number; topic: string }>;
  /** Unread direct messages: id → conversation key (dmKey). */
  dm: Map<number, string>;
  /** Unread messages that mention me (or everyone). */
  mentions: Set<number>;
}

/** From /register's unread_msgs. Group DM keys there include me; ours do not. */
export function unreadFromRegister(u: UnreadMsgs, myId: number): Unread {
  const out: Unread = { stream: new Map(), dm: new Map(), mentions: new Set(u.mentions) };
  for (const s of u.streams) for (const id of s.unread_message_ids) out.stream.set(id, { streamId: s.stream_id, topic: s.topic });
  for (const p of u.pms) {
    const other = p.other_user_id ?? p.sender_id ?? myId;
    for (const id of p.unread_message_ids) out.dm.set(id, String(other));
  }
  for (const h of u.huddles) {
    const key = dmKey(h.user_ids_string.split(',').map(Number).filter((id) => id !== myId));
    for (const id of h.unread_message_ids) out.dm.set(id, key);
  }
  return out;
}

/** Forgets message ids (read, or deleted). */
export function markRead(u: Unread, ids: Iterable<number>): void {
  for (const id of ids) {
    u.stream.delete(id);
    u.dm.delete(id);
    u.mentions.delete(id);
  }
}

export function isUnread(u: Unread, id: number): boolean {
  return u.stream.has(id) || u.dm.has(id);
}

/** The counts the screens show, computed in one pass. */
export interface UnreadCounts {
  /** channel id → count (every topic, muted ones included) */
  byStream: Map<number, number>;
  /** channel id → lower-case topic → count */
  byTopic: Map<number, Map<string, number>>;
  /** dmKey → count */
  byDm: Map<string, number>;
  /** Unread in the home view: channels and topics that are not muted, and every DM. */
  home: number;
  mentions: number;
  dms: number;
}

/** Counts, with `isMuted(streamId, topic)` deciding what the home view leaves out. */
export function unreadCounts(u: Unread, isMuted: (streamId: number, topic: string) => boolean): UnreadCounts {
  const byStream = new Map<number, number>();
  const byTopic = new Map<number, Map<string, number>>();
  const byDm = new Map<string, number>();
  let home = 0;
  for (const { streamId, topic } of u.stream.values()) {
    byStream.set(streamId, (byStream.get(streamId) ?? 0) + 1);
    let topics = byTopic.get(streamId);
    if (!topics) byTopic.set(streamId, (topics = new Map()));
    const key = topic.toLowerCase();
    topics.set(key, (topics.get(key) ?? 0) + 1);
    if (!isMuted(streamId, topic)) home++;
  }
  for (const key of u.dm.values()) byDm.set(key, (byDm.get(key) ?? 0) + 1);
  return { byStream, byTopic, byDm, home: home + u.dm.size, mentions: u.mentions.size, dms: u.dm.size };
}

/** Moves unread messages to another channel or topic (a message move). */
export function moveUnread(u: Unread, ids: readonly number[], streamId: number, topic: string): void {
  for (const id of ids) if (u.stream.has(id)) u.stream.set(id, { streamId, topic });
}

/** Drops every unread message of a channel (the user left it: Zulip keeps no unreads there). */
export function dropStream(u: Unread, streamId: number): void {
  for (const [id, where] of u.stream) {
    if (where.streamId === streamId) {
      u.stream.delete(id);
      u.mentions.delete(id);
    }
  }
}

/** Unread message ids of a topic (for "mark topic read" and tests). */
export function topicUnreadIds(u: Unread, streamId: number, topic: string): number[] {
  const out: number[] = [];
  for (const [id, where] of u.stream) if (where.streamId === streamId && sameTopic(where.topic, topic)) out.push(id);
  return out;
}
