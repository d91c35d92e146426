// A plain, order-independent picture of what the store holds from /register, for Zulip-style
// verify_action tests: register, act, apply the events, register again, and compare the two pictures.
// Anything the store keeps must appear here, or a missed event could go unnoticed.
import type { State } from './store';

const byNumber = (a: number, b: number) => a - b;
const byKey = (a: [string, ...unknown[]], b: [string, ...unknown[]]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

export function snapshot(s: State) {
  return {
    myId: s.myId,
    realm: { name: s.realm.name, url: s.realm.url, emptyTopicName: s.realm.emptyTopicName },
    // Every setting: the store keeps the whole object and applies each update to it.
    settings: Object.fromEntries(Object.entries(s.settings).sort(byKey)),
    users: [...s.users.values()]
      .map((u) => ({
        user_id: u.user_id,
        full_name: u.full_name,
        email: u.email,
        is_active: u.is_active,
        is_bot: u.is_bot,
        role: u.role,
        is_guest: u.is_guest ?? false,
        avatar_url: u.avatar_url,
        timezone: u.timezone ?? '',
      }))
      .sort((a, b) => a.user_id - b.user_id),
    streams: [...s.streams.values()]
      .map((st) => ({
        stream_id: st.stream_id,
        name: st.name,
        description: st.description,
        rendered_description: st.rendered_description,
        invite_only: st.invite_only,
        is_archived: st.is_archived ?? false,
      }))
      .sort((a, b) => a.stream_id - b.stream_id),
    subscriptions: [...s.subs.values()]
      .map((sub) => ({
        stream_id: sub.stream_id,
        name: sub.name,
        description: sub.description,
        rendered_description: sub.rendered_description,
        invite_only: sub.invite_only,
        color: sub.color,
        is_muted: sub.is_muted,
        in_home_view: sub.in_home_view ?? !sub.is_muted,
        pin_to_top: sub.pin_to_top,
      }))
      .sort((a, b) => a.stream_id - b.stream_id),
    unread: {
      stream: [...s.unread.stream].map(([id, w]) => [id, w.streamId, w.topic.toLowerCase()]).sort((a, b) => (a[0] as number) - (b[0] as number)),
      dm: [...s.unread.dm].sort((a, b) => a[0] - b[0]),
      mentions: [...s.unread.mentions].sort(byNumber),
    },
    starred: [...s.starred].sort(byNumber),
    userTopics: [...s.userTopics].sort(byKey),
    recentDms: [...s.recentDms].sort(byKey),
    mutedUsers: [...s.mutedUsers].sort(byNumber),
  };
}
