// How a run of messages is laid out (Zulip's build_message_groups): a new group, under a recipient
// header, wherever the conversation (channel and topic, or DM participants) changes; inside a group, a
// date divider where the day changes, and the sender's name and picture only where the sender changes
// (or on a new day).
import { dmKey, dmParticipants } from '../state/narrow';
import type { Message } from '../state/wire';
import { sameDay } from './format';

export type GroupItem = { kind: 'date'; timestamp: number } | { kind: 'message'; message: Message; showSender: boolean };

export interface Group {
  /** The conversation (conversationKey). */
  key: string;
  /** The first message: the header reads its channel and topic, or its participants. */
  first: Message;
  /** Whether the header shows the date (the day differs from the previous group's last message). */
  showDate: boolean;
  items: GroupItem[];
}

/** "s:12:lunch" or "d:4,5": messages with the same key are one conversation. */
export function conversationKey(m: Message, myId: number): string {
  return m.type === 'stream' ? `s:${m.stream_id}:${m.subject.toLowerCase()}` : `d:${dmKey(dmParticipants(m, myId))}`;
}

export function buildGroups(messages: readonly Message[], myId: number): Group[] {
  const groups: Group[] = [];
  let current: Group | null = null;
  let prev: Message | null = null;
  for (const m of messages) {
    const key = conversationKey(m, myId);
    if (!current || !prev || current.key !== key) {
      current = { key, first: m, showDate: !prev || !sameDay(prev.timestamp, m.timestamp), items: [{ kind: 'message', message: m, showSender: true }] };
      groups.push(current);
    } else {
      const newDay = !sameDay(prev.timestamp, m.timestamp);
      if (newDay) current.items.push({ kind: 'date', timestamp: m.timestamp });
      const showSender = newDay || prev.sender_id !== m.sender_id || Boolean(prev.is_me_message);
      current.items.push({ kind: 'message', message: m, showSender });
    }
    prev = m;
  }
  return groups;
}
