// Muting as Zulip decides it (is_row_muted): topics by their visibility policy, channels by is_muted.
import type { State } from './store';

export const VISIBILITY = { inherit: 0, muted: 1, unmuted: 2, followed: 3 } as const;

/** The user_topics key: channel and lower-cased topic (topics compare case-insensitively). */
export const topicKey = (streamId: number, topic: string) => `${streamId}\u0000${topic.toLowerCase()}`;

export function topicPolicy(s: State, streamId: number, topic: string): number {
  return s.userTopics.get(topicKey(streamId, topic)) ?? VISIBILITY.inherit;
}

/** A muted topic, or a topic of a muted channel unless the topic is unmuted or followed. */
export function isMuted(s: State, streamId: number, topic: string): boolean {
  const policy = topicPolicy(s, streamId, topic);
  if (s.subs.get(streamId)?.is_muted) return policy !== VISIBILITY.unmuted && policy !== VISIBILITY.followed;
  return policy === VISIBILITY.muted;
}
