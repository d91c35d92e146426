// The store: everything the app knows, built from POST /register's answer and kept current by applying
// each event from GET /events (Zulip's server_events_dispatch). Pure TypeScript without the DOM, so
// node:test runs it, and the verify-action tests compare it with a fresh /register (snapshot.ts).
//
// Records are replaced, never changed in place (a message, a subscription, a list's ids), so screens can
// tell what changed by identity; the maps that hold them are changed in place and `version` counts changes.
import { addToLists, listCoversId, type MessageList, relistMoved, removeFromLists } from './lists';
import { dmKey, dmParticipants, type Narrow, type NarrowContext } from './narrow';
import { topicKey, VISIBILITY } from './muting';
import { dropStream, isUnread, markRead, moveUnread, type Unread, unreadFromRegister } from './unread';
import type { Message, Reaction, RegisterResponse, ServerEvent, Stream, Subscription, User, UserSettings } from './wire';

export type { MessageList } from './lists';
export { isMuted, topicPolicy, VISIBILITY } from './muting';

/** What the app asks of POST /register (the verify-action tests ask the same). */
export const REGISTER_PARAMS = {
  apply_markdown: true,
  client_gravatar: false,
  slim_presence: true,
  include_subscribers: false,
  client_capabilities: {
    notification_settings_null: true,
    bulk_message_deletion: true,
    user_avatar_url_field_optional: false,
    stream_typing_notifications: true,
    user_settings_object: true,
    empty_topic_name: true,
    archived_channels: true,
    linkifier_url_template: true,
  },
} as const;

/** A message shown before the server has it (local echo), until its event arrives or the send fails. */
export interface LocalEcho {
  localId: string;
  to: { type: 'stream'; streamId: number; topic: string } | { type: 'private'; userIds: number[] };
  content: string;
  timestamp: number;
  status: 'sending' | 'failed';
  error?: string;
  /** The id the server gave it (the send succeeded; its event has not come yet). */
  serverId?: number;
}

export interface RealmInfo {
  name: string;
  url: string;
  emptyTopicName: string;
  maxMessageLength: number;
  maxTopicLength: number;
  typingStartedWaitMs: number;
  typingStoppedWaitMs: number;
  typingExpiryMs: number;
  longpollTimeoutSeconds: number;
}

export interface State {
  queueId: string;
  lastEventId: number;
  myId: number;
  realm: RealmInfo;
  settings: UserSettings;
  users: Map<number, User>;
  /** Every channel the user can see, subscribed or not. */
  streams: Map<number, Stream>;
  subs: Map<number, Subscription>;
  /** `${stream_id}\0${topic lower-cased}` → visibility policy (1 muted, 2 unmuted, 3 followed). */
  userTopics: Map<string, number>;
  unread: Unread;
  starred: Set<number>;
  /** Direct-message conversations: dmKey → newest message id. */
  recentDms: Map<string, number>;
  mutedUsers: Set<number>;
  maxMessageId: number;
  // Not part of /register: filled as the app fetches and as events arrive.
  messages: Map<number, Message>;
  lists: Map<string, MessageList>;
  /** channel id → lower-case topic → its name and newest message id (GET /users/me/{id}/topics). */
  topics: Map<number, Map<string, { name: string; maxId: number }>>;
  outbox: LocalEcho[];
  /** Conversation key (typingKey) → user id → when their "typing" expires (ms). */
  typing: Map<string, Map<number, number>>;
}


/** The state /register describes. */
export function stateFromRegister(r: RegisterResponse): State {
  const users = new Map<number, User>();
  for (const u of [...(r.cross_realm_bots ?? []), ...(r.realm_non_active_users ?? []), ...r.realm_users]) users.set(u.user_id, u);
  const streams = new Map<number, Stream>();
  for (const s of [...r.never_subscribed, ...r.unsubscribed, ...r.subscriptions]) streams.set(s.stream_id, streamOf(s));
  return {
    queueId: r.queue_id,
    lastEventId: r.last_event_id,
    myId: r.user_id,
    realm: {
      name: r.realm_name,
      url: r.realm_url ?? r.realm_uri ?? '',
      emptyTopicName: r.realm_empty_topic_display_name ?? 'general chat',
      maxMessageLength: r.max_message_length,
      maxTopicLength: r.max_topic_length,
      typingStartedWaitMs: r.server_typing_started_wait_period_milliseconds ?? 10_000,
      typingStoppedWaitMs: r.server_typing_stopped_wait_period_milliseconds ?? 5_000,
      typingExpiryMs: r.server_typing_started_expiry_period_milliseconds ?? 15_000,
      longpollTimeoutSeconds: r.event_queue_longpoll_timeout_seconds ?? 90,
    },
    settings: { ...r.user_settings },
    users,
    streams,
    subs: new Map(r.subscriptions.map((s) => [s.stream_id, s])),
    userTopics: new Map(r.user_topics.map((t) => [topicKey(t.stream_id, t.topic_name), t.visibility_policy])),
    unread: unreadFromRegister(r.unread_msgs, r.user_id),
    starred: new Set(r.starred_messages),
    recentDms: new Map(r.recent_private_conversations.map((c) => [dmKey(c.user_ids.length ? c.user_ids : [r.user_id]), c.max_message_id])),
    mutedUsers: new Set(r.muted_users.map((m) => m.id)),
    maxMessageId: r.max_message_id,
    messages: new Map(),
    lists: new Map(),
    topics: new Map(),
    outbox: [],
    typing: new Map(),
  };
}

/** The channel fields of a subscription (or a stream object as it is). */
function streamOf(s: Stream): Stream {
  const { stream_id, name, description, rendered_description, invite_only, is_archived } = s;
  return { stream_id, name, description, rendered_description, invite_only, is_archived };
}

// --- questions the screens ask -------------------------------------------------------------------------

/** Names and ids for narrow code (slugs, titles, parsing old links). */
export function narrowContext(s: State): NarrowContext {
  return {
    myId: s.myId,
    streamName: (id) => s.streams.get(id)?.name,
    streamIdByName: (name) => {
      const lower = name.toLowerCase();
      for (const st of s.streams.values()) if (st.name.toLowerCase() === lower) return st.stream_id;
      return undefined;
    },
    userName: (id) => s.users.get(id)?.full_name,
    userIdByEmail: (email) => {
      for (const u of s.users.values()) if (u.email.toLowerCase() === email) return u.user_id;
      return undefined;
    },
    emptyTopicName: s.realm.emptyTopicName,
  };
}

export const MENTION_FLAGS = ['mentioned', 'wildcard_mentioned', 'stream_wildcard_mentioned', 'topic_wildcard_mentioned'];
export const isMention = (flags: readonly string[]) => flags.some((f) => MENTION_FLAGS.includes(f));

/** The typing key of a channel topic or a DM conversation (other participants). */
export const typingKey = (to: { type: 'stream'; streamId: number; topic: string } | { type: 'private'; userIds: number[] }): string =>
  to.type === 'stream' ? `stream:${to.streamId}:${to.topic.toLowerCase()}` : `dm:${dmKey(to.userIds)}`;

// --- messages --------------------------------------------------------------------------------------------

/** Records a message the client has learnt of (fetched or new): its unread state, its conversation. */
function rememberMessage(s: State, m: Message, isNew: boolean): void {
  s.messages.set(m.id, m);
  if (m.id > s.maxMessageId) s.maxMessageId = m.id;
  const read = m.flags.includes('read');
  if (m.type === 'stream') {
    const streamId = m.stream_id as number;
    // Unreads only in channels one is subscribed to (Zulip's invariant); fetched ones only if new to us.
    if (!read && s.subs.has(streamId) && (isNew || !s.unread.stream.has(m.id))) s.unread.stream.set(m.id, { streamId, topic: m.subject });
    const topics = s.topics.get(streamId);
    if (topics) {
      const key = m.subject.toLowerCase();
      const known = topics.get(key);
      if (!known || known.maxId < m.id) topics.set(key, { name: known && isNew === false ? known.name : m.subject, maxId: m.id });
    }
  } else {
    const key = dmKey(dmParticipants(m, s.myId));
    if (!read) s.unread.dm.set(m.id, key);
    if (isNew || s.recentDms.has(key)) {
      if ((s.recentDms.get(key) ?? 0) < m.id) s.recentDms.set(key, m.id);
    }
  }
  // Mentions count only among the unread messages the store tracks (not in channels one left).
  if (!read && isMention(m.flags) && isUnread(s.unread, m.id)) s.unread.mentions.add(m.id);
  if (m.flags.includes('starred')) s.starred.add(m.id);
}

/** A page of GET /messages for a narrow's list. `direction` says which end the page extends. */
export function addFetched(
  s: State,
  key: string,
  narrow: Narrow,
  page: { messages: Message[]; found_oldest: boolean; found_newest: boolean },
  direction: 'initial' | 'older' | 'newer',
): void {
  for (const m of page.messages) rememberMessage(s, m, false);
  const old = s.lists.get(key);
  const ids = new Set(old && !old.stale ? old.ids : []);
  for (const m of page.messages) ids.add(m.id);
  const list: MessageList = {
    narrow,
    ids: [...ids].sort((a, b) => a - b),
    foundOldest: direction === 'newer' ? (old?.foundOldest ?? false) : page.found_oldest,
    foundNewest: direction === 'older' ? (old?.foundNewest ?? false) : page.found_newest,
    stale: false,
  };
  s.lists.set(key, list);
}

function replaceMessage(s: State, m: Message): void {
  s.messages.set(m.id, m);
}

// --- events ----------------------------------------------------------------------------------------------

type Ev = ServerEvent & Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Applies one event (Zulip's dispatch_normal_event); `now` (ms) is for typing expiry. */
export function applyEvent(s: State, e: Ev, now: number): void {
  if (typeof e.id === 'number' && e.id > s.lastEventId) s.lastEventId = e.id;
  switch (e.type) {
    case 'message': {
      const m: Message = { ...(e.message as Message), flags: (e.flags as string[] | undefined) ?? (e.message.flags as string[] | undefined) ?? [] };
      rememberMessage(s, m, true);
      addToLists(s, m);
      if (e.local_message_id) s.outbox = s.outbox.filter((x) => x.localId !== e.local_message_id);
      // A message from someone ends their typing in that conversation.
      const to = m.type === 'stream' ? typingKey({ type: 'stream', streamId: m.stream_id as number, topic: m.subject }) : typingKey({ type: 'private', userIds: dmParticipants(m, s.myId) });
      clearTyping(s, to, m.sender_id);
      return;
    }
    case 'update_message':
      return updateMessage(s, e);
    case 'delete_message': {
      const ids: number[] = e.message_ids ?? [e.message_id];
      const gone = new Set(ids);
      for (const id of ids) s.messages.delete(id);
      markRead(s.unread, ids);
      for (const id of ids) s.starred.delete(id);
      removeFromLists(s, gone);
      for (const [key, maxId] of [...s.recentDms]) if (gone.has(maxId)) recomputeRecentDm(s, key);
      if (e.message_type === 'stream' && typeof e.stream_id === 'number') s.topics.delete(e.stream_id); // newest ids unknown: fetched again
      return;
    }
    case 'reaction': {
      const m = s.messages.get(e.message_id);
      if (!m) return;
      const same = (r: Reaction) => r.user_id === e.user_id && r.emoji_code === e.emoji_code && r.reaction_type === e.reaction_type;
      const reactions =
        e.op === 'add'
          ? m.reactions.some(same)
            ? m.reactions
            : [...m.reactions, { emoji_name: e.emoji_name, emoji_code: e.emoji_code, reaction_type: e.reaction_type, user_id: e.user_id }]
          : m.reactions.filter((r) => !same(r));
      replaceMessage(s, { ...m, reactions });
      return;
    }
    case 'update_message_flags':
      return updateFlags(s, e);
    case 'subscription':
      return updateSubscriptions(s, e);
    case 'stream':
      return updateStreams(s, e);
    case 'realm_user': {
      const p = e.person as Partial<User> & { user_id: number };
      if (e.op === 'add') s.users.set(p.user_id, p as User);
      else if (e.op === 'remove') s.users.delete(p.user_id);
      else if (e.op === 'update') {
        const u = s.users.get(p.user_id);
        // An email change comes as new_email (Zulip's realm_user update).
        const { new_email, ...changes } = p as typeof p & { new_email?: string };
        if (typeof new_email === 'string') changes.email = new_email;
        if (u) s.users.set(p.user_id, { ...u, ...changes });
        renameInMessages(s, p.user_id, changes);
      }
      return;
    }
    case 'realm':
      if (e.op === 'update' && e.property === 'name') s.realm = { ...s.realm, name: e.value };
      else if (e.op === 'update_dict' && e.data && typeof e.data.name === 'string') s.realm = { ...s.realm, name: e.data.name };
      return;
    case 'user_settings':
      if (e.op === 'update') s.settings = { ...s.settings, [e.property]: e.value };
      return;
    case 'user_topic': {
      const key = topicKey(e.stream_id, e.topic_name);
      if (e.visibility_policy === VISIBILITY.inherit) s.userTopics.delete(key);
      else s.userTopics.set(key, e.visibility_policy);
      staleHome(s);
      return;
    }
    case 'muted_users':
      s.mutedUsers = new Set((e.muted_users as { id: number }[]).map((m) => m.id));
      return;
    case 'typing': {
      const sender: number = e.sender.user_id;
      if (sender === s.myId) return;
      const key =
        e.message_type === 'stream'
          ? typingKey({ type: 'stream', streamId: e.stream_id, topic: e.topic })
          : typingKey({ type: 'private', userIds: (e.recipients as { user_id: number }[]).map((r) => r.user_id).filter((id) => id !== s.myId) });
      if (e.op === 'start') {
        const typists = new Map(s.typing.get(key));
        typists.set(sender, now + s.realm.typingExpiryMs);
        s.typing = new Map(s.typing).set(key, typists);
      } else clearTyping(s, key, sender);
      return;
    }
    default:
      return; // heartbeat, presence and the rest this client does not show
  }
}

/** A user's new name, email or avatar in the cached messages they sent or take part in (as GET /messages has them). */
function renameInMessages(s: State, userId: number, changes: Partial<User>): void {
  const { full_name, email, avatar_url } = changes;
  if (full_name === undefined && email === undefined && avatar_url === undefined) return;
  for (const m of s.messages.values()) {
    let next: Message | undefined;
    if (m.sender_id === userId) {
      next = { ...m };
      if (full_name !== undefined) next.sender_full_name = full_name;
      if (email !== undefined) next.sender_email = email;
      if (avatar_url !== undefined) next.avatar_url = avatar_url;
    }
    if (Array.isArray(m.display_recipient) && (full_name !== undefined || email !== undefined) && m.display_recipient.some((r) => r.id === userId)) {
      next ??= { ...m };
      next.display_recipient = m.display_recipient.map((r) =>
        r.id === userId ? { ...r, ...(full_name !== undefined ? { full_name } : {}), ...(email !== undefined ? { email } : {}) } : r,
      );
    }
    if (next) replaceMessage(s, next);
  }
}

function clearTyping(s: State, key: string, userId: number): void {
  const typists = s.typing.get(key);
  if (!typists?.has(userId)) return;
  const rest = new Map(typists);
  rest.delete(userId);
  s.typing = new Map(s.typing);
  if (rest.size) s.typing.set(key, rest);
  else s.typing.delete(key);
}

/** Drops typing notices whose time ran out; true if any did. */
export function expireTyping(s: State, now: number): boolean {
  let changed = false;
  for (const [key, typists] of s.typing) {
    for (const [id, until] of typists) {
      if (until <= now) {
        clearTyping(s, key, id);
        changed = true;
      }
    }
  }
  return changed;
}

/**
 * A conversation whose newest message was deleted: its newest remaining message, from what the store
 * knows (a loaded list that reaches the newest message decides; else the newest cached or unread one).
 * A conversation known to be empty leaves the list, as /register would leave it out.
 */
function recomputeRecentDm(s: State, key: string): void {
  for (const list of s.lists.values()) {
    if (list.narrow.kind !== 'dm' || list.stale || !list.foundNewest || dmKey(list.narrow.userIds) !== key) continue;
    const last = list.ids[list.ids.length - 1];
    if (last !== undefined) s.recentDms.set(key, last);
    else if (list.foundOldest) s.recentDms.delete(key);
    else break; // an empty window: not decided by this list
    return;
  }
  let best = 0;
  for (const m of s.messages.values()) if (m.id > best && m.type === 'private' && dmKey(dmParticipants(m, s.myId)) === key) best = m.id;
  for (const [id, k] of s.unread.dm) if (id > best && k === key) best = id;
  // Nothing known: keep the old id for the order (the next /register corrects it).
  if (best > 0) s.recentDms.set(key, best);
}

/** Marks stale the lists of a kind whose run spans a message the store does not hold. */
function staleCovering(s: State, kind: Narrow['kind'], id: number): void {
  for (const [key, list] of s.lists) if (list.narrow.kind === kind && !list.stale && listCoversId(list, id)) s.lists.set(key, { ...list, stale: true });
}

/** The home view leaves out muted topics: after a mute change its list is fetched again. */
function staleHome(s: State): void {
  for (const [key, list] of s.lists) if (list.narrow.kind === 'home') s.lists.set(key, { ...list, stale: true });
}

export const RESOLVED_TOPIC_PREFIX = '✔ ';

/** The flags of a message one has no row for (Zulip's messages in a channel one is not subscribed to). */
const HISTORICAL_FLAGS = ['read', 'historical'];

/** Whether a topic change only marks the topic resolved or unresolved (Zulip does not count that as a move). */
export function resolveToggled(topic: string, prev: string): boolean {
  const resolved = (x: string) => x.startsWith(RESOLVED_TOPIC_PREFIX);
  if (resolved(prev) && !resolved(topic)) return prev.slice(RESOLVED_TOPIC_PREFIX.length) === topic;
  if (resolved(topic) && !resolved(prev)) {
    const rest = topic.slice(RESOLVED_TOPIC_PREFIX.length);
    // Resolving may have truncated a long topic to fit ("...").
    return rest === prev || (rest.endsWith('...') && prev.startsWith(rest.slice(0, -3)));
  }
  return false;
}

function updateMessage(s: State, e: Ev): void {
  const ids: number[] = e.message_ids ?? [e.message_id];
  const edited = s.messages.get(e.message_id);
  if (edited && e.rendered_content !== undefined) {
    const m: Message = { ...edited, content: e.rendered_content };
    if (!e.rendering_only) m.last_edit_timestamp = e.edit_timestamp;
    if (e.is_me_message !== undefined) m.is_me_message = e.is_me_message;
    replaceMessage(s, m);
  }
  // The editor's mentions change my flags on the edited message.
  if (Array.isArray(e.flags)) {
    const m = s.messages.get(e.message_id);
    if (m) replaceMessage(s, { ...m, flags: e.flags });
    const unread = !e.flags.includes('read') && (s.unread.stream.has(e.message_id) || s.unread.dm.has(e.message_id));
    if (unread && isMention(e.flags)) s.unread.mentions.add(e.message_id);
    else s.unread.mentions.delete(e.message_id);
  }
  const newStream: number | undefined = e.new_stream_id;
  const newTopic: string | undefined = e.subject;
  if (newStream === undefined && newTopic === undefined) {
    // New content or mentions can put the message in or out of lists (mentions, searches).
    const m = s.messages.get(e.message_id);
    if (m) relistMoved(s, [m.id], [m]);
    else if (Array.isArray(e.flags)) staleCovering(s, 'mentioned', e.message_id);
    return;
  }
  // A move sets last_moved_timestamp, unless it only resolved or unresolved the topic.
  const isMove = newStream !== undefined || (newTopic !== undefined && !resolveToggled(newTopic, e.orig_subject ?? ''));
  const moved: Message[] = [];
  for (const id of ids) {
    const m = s.messages.get(id);
    if (!m) continue;
    const next: Message = { ...m };
    if (newTopic !== undefined) next.subject = newTopic;
    if (newStream !== undefined) {
      next.stream_id = newStream;
      next.display_recipient = s.streams.get(newStream)?.name ?? next.display_recipient;
    }
    if (isMove && !e.rendering_only && typeof e.edit_timestamp === 'number') next.last_moved_timestamp = e.edit_timestamp;
    // Moved to a channel I am not subscribed to, but still may read (else a delete comes instead): the
    // server drops my rows, so my flags go (as for any message of a channel one is not in).
    if (newStream !== undefined && !s.subs.has(newStream)) {
      next.flags = [...HISTORICAL_FLAGS];
      s.starred.delete(id);
    }
    replaceMessage(s, next);
    moved.push(next);
  }
  const streamId: number = newStream ?? e.stream_id;
  const topic: string = newTopic ?? e.orig_subject;
  moveUnread(s.unread, ids, streamId, topic);
  if (newStream !== undefined && !s.subs.has(newStream)) dropStream(s.unread, newStream);
  // Topic lists: the old topic's newest id is unknown now; both channels are fetched again when shown.
  s.topics.delete(e.stream_id);
  if (newStream !== undefined) s.topics.delete(newStream);
  relistMoved(s, ids, moved);
}

function updateFlags(s: State, e: Ev): void {
  const ids: number[] = e.messages ?? [];
  const flag: string = e.flag;
  if (flag === 'read') {
    if (e.op === 'add') {
      if (e.all) {
        s.unread.stream.clear();
        s.unread.dm.clear();
        s.unread.mentions.clear();
      } else markRead(s.unread, ids);
    } else {
      const details = (e.message_details ?? {}) as Record<string, { type: string; stream_id?: number; topic?: string; user_ids?: number[]; mentioned?: boolean }>;
      for (const id of ids) {
        const d = details[id];
        if (!d) continue;
        if (d.type === 'stream') {
          if (s.subs.has(d.stream_id as number)) s.unread.stream.set(id, { streamId: d.stream_id as number, topic: d.topic as string });
        } else s.unread.dm.set(id, dmKey(d.user_ids?.length ? d.user_ids : [s.myId]));
        if (d.mentioned) s.unread.mentions.add(id);
      }
    }
  }
  if (flag === 'starred') {
    for (const id of ids) {
      if (e.op === 'add') s.starred.add(id);
      else s.starred.delete(id);
    }
  }
  const all = e.all && e.op === 'add';
  for (const m of s.messages.values()) {
    if (!all && !ids.includes(m.id)) continue;
    const has = m.flags.includes(flag);
    if (e.op === 'add' && !has) replaceMessage(s, { ...m, flags: [...m.flags, flag] });
    else if (e.op === 'remove' && has) replaceMessage(s, { ...m, flags: m.flags.filter((f) => f !== flag) });
  }
  if (flag === 'starred') {
    for (const [key, list] of s.lists) {
      if (list.narrow.kind !== 'starred') continue;
      let next = list.ids;
      let stale = false;
      if (e.op === 'remove') next = next.filter((id) => !ids.includes(id));
      else {
        for (const id of ids) {
          if (next.includes(id) || !listCoversId(list, id)) continue;
          // A message starred elsewhere that this client has not loaded: the list cannot show it.
          if (s.messages.has(id)) next = [...next, id].sort((a, b) => a - b);
          else stale = true;
        }
      }
      if (stale) s.lists.set(key, { ...list, stale: true });
      else if (next !== list.ids) s.lists.set(key, { ...list, ids: next });
    }
  }
  // Searches on the flag (is:unread, is:starred) cannot be decided here.
  const operand = flag === 'read' ? 'unread' : flag;
  for (const [key, list] of s.lists) {
    if (list.narrow.kind === 'terms' && !list.stale && list.narrow.terms.some((x) => x.operator === 'is' && x.operand === operand)) s.lists.set(key, { ...list, stale: true });
  }
}

function updateSubscriptions(s: State, e: Ev): void {
  switch (e.op) {
    case 'add':
      for (const sub of e.subscriptions as Subscription[]) {
        s.subs.set(sub.stream_id, sub);
        s.streams.set(sub.stream_id, streamOf(sub));
      }
      staleHome(s);
      return;
    case 'remove':
      for (const { stream_id } of e.subscriptions as { stream_id: number }[]) {
        s.subs.delete(stream_id);
        dropStream(s.unread, stream_id);
      }
      staleHome(s);
      return;
    case 'update': {
      const sub = s.subs.get(e.stream_id);
      if (!sub) return;
      const next: Subscription = { ...sub, [e.property]: e.value };
      // The two spellings of muting stay in step (in_home_view is the old one).
      if (e.property === 'in_home_view') next.is_muted = !e.value;
      if (e.property === 'is_muted') next.in_home_view = !e.value;
      s.subs.set(sub.stream_id, next);
      if (e.property === 'in_home_view' || e.property === 'is_muted') staleHome(s);
      return;
    }
    default:
      return; // peer_add / peer_remove: subscriber lists are not kept by this client
  }
}

function updateStreams(s: State, e: Ev): void {
  switch (e.op) {
    case 'create':
      for (const st of e.streams as Stream[]) s.streams.set(st.stream_id, streamOf(st));
      return;
    case 'delete': {
      const ids: number[] = e.stream_ids ?? (e.streams as Stream[]).map((st) => st.stream_id);
      for (const id of ids) {
        s.streams.delete(id);
        s.subs.delete(id);
        dropStream(s.unread, id);
      }
      return;
    }
    case 'update': {
      const changes: Record<string, unknown> = { [e.property]: e.value };
      if (e.property === 'description' && e.rendered_description !== undefined) changes.rendered_description = e.rendered_description;
      if (e.property === 'invite_only' && e.history_public_to_subscribers !== undefined) changes.history_public_to_subscribers = e.history_public_to_subscribers;
      const st = s.streams.get(e.stream_id);
      if (st) s.streams.set(e.stream_id, { ...st, ...changes });
      const sub = s.subs.get(e.stream_id);
      if (sub) s.subs.set(e.stream_id, { ...sub, ...changes });
      // A channel message's display_recipient is its channel's name.
      if (e.property === 'name') {
        for (const m of s.messages.values()) if (m.type === 'stream' && m.stream_id === e.stream_id) replaceMessage(s, { ...m, display_recipient: e.value });
      }
      return;
    }
    default:
      return;
  }
}

// --- the observable store -----------------------------------------------------------------------------------

/** State plus change notification: screens subscribe; every change bumps `version`. */
export class Store {
  version = 0;
  private listeners = new Set<() => void>();

  constructor(public state: State) {}

  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Runs `change` on the state and tells every listener. */
  update(change: (s: State) => void): void {
    change(this.state);
    this.changed();
  }

  /** Replaces the whole state (a new registration), keeping what the new one cannot know. */
  replace(next: State): void {
    next.outbox = this.state.outbox;
    this.state = next;
    this.changed();
  }

  changed(): void {
    this.version++;
    for (const fn of this.listeners) fn();
  }
}
