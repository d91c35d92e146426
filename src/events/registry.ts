// Every event queue of the process, and delivery into them. The registry listens to the EventBus
// (actions send after their transaction commits) and appends each event to the queues of its
// recipients, filtered by each queue's event_types and narrow and adapted to its client_capabilities
// the way Zulip's Tornado does (zerver/tornado/event_queue.py). See src/events/bus.ts for the
// conventions an action uses to send per-user data (flags) and delivery hints.
//
// Bounds, chosen here (Zulip has neither):
// - at most `maxQueuesPerUser` queues per user: registering one more evicts the user's least recently
//   connected queue without a parked poll (a leaky script cannot lock out the user's other clients for
//   the queues' lifespan); only when every queue has a poll parked does registration fail with Zulip's
//   "Could not allocate event queue".
// - at most `maxBacklog` unacknowledged events per queue: a queue that overflows is discarded, so its
//   next poll answers BAD_EVENT_QUEUE_ID and the client re-registers and reloads its state. Dropping
//   the oldest events instead would silently leave the client's state wrong.
import crypto from 'node:crypto';
import type { App } from '../app';
import type { Config } from '../config';
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';
import { watchedCache } from '../db/watch';
import { errors } from '../http/errors';
import type { Clock } from '../lib/clock';
import { ROLE } from '../lib/roles';
import { isGuest, type UserRow } from '../lib/users';
import type { EventBus, ParleyEvent } from './bus';
import { checkNarrowForEvents } from './narrow-match';
import { EventQueue, openJson, type ClientCapabilities, type OpenJson, type QueueSpec, type WireEvent } from './queue';
import { DISPLAY_SETTINGS_LEGACY, NOTIFICATION_SETTINGS_LEGACY } from './state';

export interface RegistryDeps {
  db: Db;
  events: EventBus;
  clock: Clock;
  config: Config;
}

export interface RegistryLimits {
  maxQueuesPerUser: number;
  maxBacklog: number;
  /** How often idle queues are collected (they also expire lazily when polled). */
  gcIntervalMs: number;
}

export const DEFAULT_LIMITS: RegistryLimits = { maxQueuesPerUser: 50, maxBacklog: 10_000, gcIntervalMs: 60_000 };

/** Longest lifespan a client may ask for (queue_lifespan_secs), as in Zulip: 7 days. */
export const MAX_QUEUE_LIFESPAN_SECONDS = 7 * 24 * 3600;

/**
 * Zulip's named idle timeouts for POST /register's idle_queue_timeout (FL 481): "mobile" is
 * MOBILE_EVENT_QUEUE_TIMEOUT_SECS, 12 hours, so a phone's queue outlives the app's time in the
 * background (the server default is 10 minutes).
 */
export const NAMED_QUEUE_TIMEOUTS: Readonly<Record<string, number>> = { mobile: 12 * 3600 };

/** What a client asks for when it registers a queue (POST /register, or GET /events without queue_id). */
export interface NewQueueRequest {
  eventTypes: readonly string[] | undefined;
  narrow: readonly { operator: string; operand: string | number; negated?: boolean }[];
  allPublicStreams: boolean | undefined;
  applyMarkdown: boolean;
  clientGravatar: boolean;
  slimPresence: boolean;
  capabilities: ClientCapabilities;
  /** 0: the server's default lifespan. */
  lifespanSeconds: number;
}

/**
 * Allocates a queue for `user` as Zulip's do_events_register does: a bot's default narrow and
 * all_public_streams apply when the client gives none, the narrow is checked, and guests may not
 * follow all public channels.
 */
export function allocateQueue(app: App, user: UserRow, req: NewQueueRequest): EventQueue {
  let narrowInput = req.narrow;
  const defaultStreamId = user.default_events_register_stream_id;
  if (narrowInput.length === 0 && typeof defaultStreamId === 'number') {
    const s = stmt(app.db, 'SELECT name FROM stream WHERE id = ?').get(defaultStreamId) as { name: string } | undefined;
    if (s) narrowInput = [{ operator: 'stream', operand: s.name }];
  }
  const narrow = checkNarrowForEvents(narrowInput);
  const allPublicStreams = req.allPublicStreams ?? user.default_all_public_streams === 1;
  if (allPublicStreams && isGuest(user)) throw errors.badRequest('User not authorized for this query');
  return app.queues.allocate({
    userId: user.id,
    realmId: user.realm_id,
    eventTypes: req.eventTypes ?? null,
    narrow,
    allPublicStreams,
    applyMarkdown: req.applyMarkdown,
    clientGravatar: req.clientGravatar,
    slimPresence: req.slimPresence,
    capabilities: req.capabilities,
    lifespanSeconds: req.lifespanSeconds,
  });
}

/**
 * Users of the realm who may not follow public channels they are not subscribed to: guests (Zulip's
 * can_access_public_streams) and deactivated users. A queue with a narrow observes every public
 * channel (as Zulip's realm_clients_all_streams, whose narrow queues were never checked either): a
 * guest registering any narrow got every public channel's messages live, though GET /messages gave
 * it none of them. Checked at delivery, so a member made a guest stops receiving them at once.
 */
function publicChannelOutsiders(db: Db, realmId: number): ReadonlySet<number> {
  return watchedCache<number, ReadonlySet<number>>(db, 'publicChannelOutsiders', ['user']).get(
    realmId,
    () => new Set((stmt(db, 'SELECT id FROM user WHERE realm_id = ? AND (role = ? OR is_active = 0)').all(realmId, ROLE.GUEST) as { id: number }[]).map((r) => r.id)),
  );
}

/** Keys of bus events that steer delivery and never reach clients (see bus.ts). */
const INTERNAL_KEYS = [
  'flags_by_user',
  'raw_content',
  'public_stream_realm_id',
  'sender_queue_id',
  'local_message_id',
  'sender_email_hidden',
  'legacy_realm_emoji',
  'for_archiving',
  'for_unarchiving',
] as const;

export class QueueRegistry {
  private readonly queues = new Map<string, EventQueue>();
  private readonly byUser = new Map<number, Set<EventQueue>>();
  /** Per realm: queues that also see public-channel messages they did not receive (all_public_streams or a narrow). */
  private readonly observers = new Map<number, Set<EventQueue>>();
  private readonly limits: RegistryLimits;
  private unlisten: (() => void) | null = null;
  private gcTimer: NodeJS.Timeout | null = null;
  private closed = false;
  /** server_generation: when this registry (the process's queue store) started, UNIX seconds. */
  readonly generation: number;

  constructor(
    private readonly deps: RegistryDeps,
    limits: Partial<RegistryLimits> = {},
  ) {
    this.limits = { ...DEFAULT_LIMITS, ...limits };
    this.generation = Math.floor(deps.clock.nowMs() / 1000);
  }

  /** Subscribes to the event bus and starts the idle-queue collector. */
  start(): void {
    if (this.unlisten) return;
    this.unlisten = this.deps.events.listen((event, userIds) => this.deliver(event, userIds));
    const lifespanMs = this.deps.config.queueLifespanSeconds * 1000;
    this.gcTimer = setInterval(() => this.gc(), Math.max(1000, Math.min(this.limits.gcIntervalMs, lifespanMs)));
    this.gcTimer.unref();
  }

  /** Stops delivery and timers and releases every parked poll (empty reply), so the server can stop. */
  stop(): void {
    this.closed = true;
    this.unlisten?.();
    this.unlisten = null;
    if (this.gcTimer) clearInterval(this.gcTimer);
    this.gcTimer = null;
    for (const q of [...this.queues.values()]) this.remove(q);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Number of live queues (tests, benchmarks). */
  get size(): number {
    return this.queues.size;
  }

  /** Number of GET /events polls waiting now (metrics; walks the queues). */
  parkedCount(): number {
    let n = 0;
    for (const q of this.queues.values()) if (q.parked) n++;
    return n;
  }

  /** Milliseconds a poll waits before its heartbeat: the configured interval plus up to 10% jitter (at most 5 s), so parked polls do not all wake together. */
  heartbeatMs(): number {
    const base = this.deps.config.heartbeatSeconds * 1000;
    return base + Math.floor(Math.random() * Math.min(5000, base / 10));
  }

  /** Creates a queue for `spec.userId` (see the bounds above). */
  allocate(spec: QueueSpec): EventQueue {
    if (this.closed) throw errors.badRequest('Could not allocate event queue');
    const mine = this.byUser.get(spec.userId);
    if (mine && mine.size >= this.limits.maxQueuesPerUser) {
      let victim: EventQueue | null = null;
      for (const q of mine) if (!q.parked && (!victim || q.lastConnectedMs < victim.lastConnectedMs)) victim = q;
      if (!victim) throw errors.badRequest('Could not allocate event queue');
      this.remove(victim);
    }
    const lifespan = this.lifespanFor(spec.lifespanSeconds);
    const queue = new EventQueue(crypto.randomUUID(), { ...spec, lifespanSeconds: lifespan }, this.deps.clock.nowMs());
    this.queues.set(queue.id, queue);
    let set = this.byUser.get(spec.userId);
    if (!set) this.byUser.set(spec.userId, (set = new Set()));
    set.add(queue);
    if (queue.allPublicStreams || queue.narrow.length > 0) {
      let obs = this.observers.get(queue.realmId);
      if (!obs) this.observers.set(queue.realmId, (obs = new Set()));
      obs.add(queue);
    }
    return queue;
  }

  /** The idle lifespan a queue gets for a requested one (0: the server's default), capped at 7 days. */
  lifespanFor(requestedSeconds: number): number {
    return Math.min(requestedSeconds > 0 ? requestedSeconds : this.deps.config.queueLifespanSeconds, MAX_QUEUE_LIFESPAN_SECONDS);
  }

  /** The queue `queueId` of `userId`; BAD_EVENT_QUEUE_ID for an unknown, expired or foreign one. */
  access(userId: number, queueId: string): EventQueue {
    const q = this.queues.get(queueId);
    if (!q || q.userId !== userId) throw errors.badEventQueueId(queueId);
    if (q.expired(this.deps.clock.nowMs())) {
      this.remove(q);
      throw errors.badEventQueueId(queueId);
    }
    return q;
  }

  /** Deletes a queue; a parked poll on it is answered with what the queue holds. */
  remove(q: EventQueue): void {
    if (this.queues.get(q.id) !== q) return;
    this.queues.delete(q.id);
    const mine = this.byUser.get(q.userId);
    mine?.delete(q);
    if (mine && mine.size === 0) this.byUser.delete(q.userId);
    const obs = this.observers.get(q.realmId);
    obs?.delete(q);
    if (obs && obs.size === 0) this.observers.delete(q.realmId);
    q.finishPoll();
  }

  /** Collects queues idle for longer than their lifespan. */
  gc(nowMs: number = this.deps.clock.nowMs()): number {
    let n = 0;
    for (const q of [...this.queues.values()]) {
      if (q.expired(nowMs)) {
        this.remove(q);
        n++;
      }
    }
    return n;
  }

  /** Appends `event` to the queues of `userIds` (and public-channel observers), adapted per queue. */
  deliver(event: ParleyEvent, userIds: readonly number[]): void {
    if (this.closed) return;
    let adapter: Adapter | null = null;
    // A user's queues are all targets or none, so an observer was reached already exactly when its user is a recipient.
    const recipients = new Set(userIds);
    for (const uid of recipients) {
      const set = this.byUser.get(uid);
      if (set === undefined) continue;
      adapter ??= new Adapter(this.deps.db, event);
      for (const q of set) this.pushTo(adapter, q, uid);
    }
    if (event.type === 'message' && typeof event.public_stream_realm_id === 'number') {
      const obs = this.observers.get(event.public_stream_realm_id);
      if (obs === undefined) return;
      const outsiders = publicChannelOutsiders(this.deps.db, event.public_stream_realm_id);
      for (const q of obs) {
        if (recipients.has(q.userId) || outsiders.has(q.userId)) continue;
        adapter ??= new Adapter(this.deps.db, event);
        this.pushTo(adapter, q, null);
      }
    }
  }

  /** One queue's share of a delivery (`uid`: the recipient it is delivered for; null for an observer). */
  private pushTo(adapter: Adapter, q: EventQueue, uid: number | null): void {
    adapter.pushTo(q, uid);
    if (q.size > this.limits.maxBacklog) {
      console.warn(`parley: event queue ${q.id} of user ${q.userId} passed ${this.limits.maxBacklog} unacknowledged events; discarded`);
      this.remove(q);
    }
  }
}

/**
 * Turns one bus event into what each queue receives (0..n events), caching what queues share: the
 * stripped event, message payload variants, the realm's empty-topic name, and the serialised form of
 * each of those, so that a fan-out to many queues serialises each variant once. Mirrors Zulip's
 * process_notification and ClientDescriptor.accepts_event.
 */
class Adapter {
  private readonly base: WireEvent;
  private readonly flagsByUser: Record<string, string[]> | undefined;
  /** Message payload variants by realm and apply_markdown / client_gravatar / empty_topic_name. */
  private readonly messageVariants = new Map<number, MessageVariant>();
  /** The serialised form (openJson) of each adapted event object queues share. */
  private readonly serialised = new Map<WireEvent, OpenJson>();
  /** `,"flags":[...]` per flags array (recipients with the same flags usually share one array). */
  private readonly flagsJson = new Map<readonly string[], string>();
  /** Whether message events can be built by concatenation (no key of theirs collides with flags / local_message_id). */
  private readonly messageConcat: boolean;
  private emptyTopicNames = new Map<number, string>();
  /** The legacy realm_emoji/update event, shared by the queues that get it (one serialisation). */
  private legacyEmoji: WireEvent | null = null;

  constructor(
    private readonly db: Db,
    private readonly event: ParleyEvent,
  ) {
    const base: WireEvent = { ...event };
    for (const k of INTERNAL_KEYS) delete base[k];
    this.base = base;
    this.flagsByUser = event.flags_by_user as Record<string, string[]> | undefined;
    this.messageConcat = !Object.hasOwn(base, 'flags') && !Object.hasOwn(base, 'local_message_id');
  }

  /** Appends to `q` what it receives of the event (`uid`: the recipient it is delivered for; null for an observer). */
  pushTo(q: EventQueue, uid: number | null): void {
    if (this.base.type === 'message' && this.messageConcat) {
      const e = this.messageJson(q, uid);
      if (e !== null) q.push(e);
      return;
    }
    for (const e of this.forQueue(q, uid)) q.push(this.serialise(e));
  }

  private serialise(e: WireEvent): OpenJson {
    let json = this.serialised.get(e);
    if (json === undefined) this.serialised.set(e, (json = openJson(e)));
    return json;
  }

  /**
   * The message event for `q`, serialised: the variant's shared JSON, then the recipient's flags and
   * (for the sender's queue) local_message_id, exactly as JSON.stringify of message() would give.
   */
  private messageJson(q: EventQueue, uid: number | null): OpenJson | null {
    if (!q.wants('message')) return null;
    const flags = (uid !== null && this.flagsByUser?.[uid]) || NO_FLAGS;
    const variant = this.variantFor(q);
    if (q.narrow.length > 0 && !q.narrowMatches(variant.message, flags)) return null;
    variant.json ??= openJson({ ...this.base, message: variant.message });
    let flagsJson = this.flagsJson.get(flags);
    if (flagsJson === undefined) this.flagsJson.set(flags, (flagsJson = `,"flags":${JSON.stringify(flags)}`));
    const local = this.event.local_message_id;
    if (local !== undefined && this.event.sender_queue_id === q.id) {
      const tail = JSON.stringify({ local_message_id: local });
      // An undefined-valued key vanishes from JSON, as it would from JSON.stringify of the object.
      return tail === '{}' ? variant.json + flagsJson : `${variant.json}${flagsJson},${tail.slice(1, -1)}`;
    }
    return variant.json + flagsJson;
  }

  forQueue(q: EventQueue, uid: number | null): WireEvent[] {
    let e = this.base;
    if (this.flagsByUser !== undefined && e.type !== 'message') {
      e = { ...e, flags: (uid !== null && this.flagsByUser[uid]) || [] };
    }
    switch (e.type) {
      case 'message':
        return this.message(q, uid);
      case 'presence':
        return accepts(q, e) ? [presenceFor(q, e)] : [];
      case 'user_settings':
        return this.userSettings(q, e, uid);
      case 'delete_message': {
        if (!accepts(q, e)) return [];
        const fixed = this.fixTopics(q, e, ['topic']);
        if (q.capabilities.bulk_message_deletion) return [fixed];
        // zulip-compat: clients without bulk_message_deletion get one event per message.
        const { message_ids, ...rest } = fixed;
        return ((message_ids as number[]) ?? []).map((id) => ({ ...rest, message_id: id }));
      }
      case 'update_message':
        return accepts(q, e) ? [this.fixTopics(q, e, ['subject', 'orig_subject'])] : [];
      case 'user_topic':
        return accepts(q, e) ? [this.fixTopics(q, e, ['topic_name'])] : [];
      case 'typing':
        return accepts(q, e) ? [this.fixTopics(q, e, ['topic'])] : [];
      case 'update_message_flags':
        if (!accepts(q, e)) return [];
        return [e.op === 'remove' && e.flag === 'read' ? this.fixMessageDetails(q, e) : e];
      case 'realm_user': {
        if (e.op === 'add' && 'inaccessible_user' in e) {
          const { inaccessible_user, ...rest } = e;
          if (inaccessible_user && q.capabilities.user_list_incomplete) return [];
          return accepts(q, rest) ? [rest] : [];
        }
        return accepts(q, e) ? [e] : [];
      }
      case 'stream': {
        // Archiving: clients with archived_channels get the is_archived update, the others the
        // delete (or, unarchiving, the create) the action marks (bus.ts).
        if (e.op === 'update' && e.property === 'is_archived' && !q.capabilities.archived_channels) return [];
        if ((this.event.for_archiving || this.event.for_unarchiving) && q.capabilities.archived_channels) return [];
        return accepts(q, e) ? [e] : [];
      }
      case 'realm_emoji': {
        const all = this.event.legacy_realm_emoji;
        if (all === undefined || q.capabilities.individual_emoji_changes) return accepts(q, e) ? [e] : [];
        // zulip-compat: clients without individual_emoji_changes (FL 491) get every emoji after each change.
        this.legacyEmoji ??= { type: 'realm_emoji', op: 'update', realm_emoji: all };
        return accepts(q, this.legacyEmoji) ? [this.legacyEmoji] : [];
      }
      case 'user_group': {
        const data = e.data as Record<string, unknown> | undefined;
        if (e.op === 'update' && data && 'name' in data && 'deactivated' in e) {
          // zulip-compat: renaming a deactivated group is only news to clients that keep deactivated groups.
          const { deactivated, ...rest } = e;
          if (deactivated && !q.capabilities.include_deactivated_groups) return [];
          return accepts(q, rest) ? [rest] : [];
        }
        return accepts(q, e) ? [e] : [];
      }
      default:
        return accepts(q, e) ? [e] : [];
    }
  }

  private message(q: EventQueue, uid: number | null): WireEvent[] {
    if (!q.wants('message')) return [];
    const flags = (uid !== null && this.flagsByUser?.[uid]) || [];
    const message = this.variantFor(q).message;
    if (!q.narrowMatches(message, flags)) return [];
    const out: WireEvent = { ...this.base, message, flags };
    const local = this.event.local_message_id;
    if (local !== undefined && this.event.sender_queue_id === q.id) out.local_message_id = local;
    return [out];
  }

  /** The message payload for the queue's apply_markdown / client_gravatar / empty_topic_name. */
  private variantFor(q: EventQueue): MessageVariant {
    const key = q.realmId * 8 + (q.applyMarkdown ? 4 : 0) + (q.clientGravatar ? 2 : 0) + (q.capabilities.empty_topic_name ? 1 : 0);
    let variant = this.messageVariants.get(key);
    if (variant) return variant;
    const wide = (this.base.message ?? {}) as WireEvent;
    const m: WireEvent = { ...wide };
    const raw = this.event.raw_content;
    if (!q.applyMarkdown && typeof raw === 'string') {
      m.content = raw;
      m.content_type = 'text/x-markdown';
    }
    // A hidden address cannot be hashed by the client: its Gravatar URL is sent as is (bus.ts).
    if (q.clientGravatar && !this.event.sender_email_hidden && typeof m.avatar_url === 'string' && m.avatar_url.includes('secure.gravatar.com/')) {
      m.avatar_url = null;
    }
    if (!q.capabilities.empty_topic_name && m.type === 'stream' && m.subject === '') m.subject = this.emptyTopicName(q.realmId);
    this.messageVariants.set(key, (variant = { message: m, json: null }));
    return variant;
  }

  private userSettings(q: EventQueue, e: WireEvent, uid: number | null): WireEvent[] {
    const out: WireEvent[] = [];
    if (accepts(q, e)) out.push(e);
    if (q.capabilities.user_settings_object || e.op !== 'update' || uid === null) return out;
    // zulip-compat: clients without user_settings_object also get the pre-feature-level-89 events.
    const property = String(e.property);
    let legacy: WireEvent | null = null;
    if ((NOTIFICATION_SETTINGS_LEGACY as readonly string[]).includes(property)) {
      legacy = { type: 'update_global_notifications', user: this.emailOf(uid), notification_name: property, setting: e.value };
    } else if ((DISPLAY_SETTINGS_LEGACY as readonly string[]).includes(property) || property === 'timezone') {
      legacy = { type: 'update_display_settings', user: this.emailOf(uid), setting_name: property, setting: e.value };
      if ('language_name' in e) legacy.language_name = e.language_name;
    }
    if (legacy && accepts(q, legacy)) out.push(legacy);
    return out;
  }

  private fixTopics(q: EventQueue, e: WireEvent, keys: readonly string[]): WireEvent {
    if (q.capabilities.empty_topic_name) return e;
    let out = e;
    for (const k of keys) {
      if (out[k] === '') {
        if (out === e) out = { ...e };
        out[k] = this.emptyTopicName(q.realmId);
      }
    }
    return out;
  }

  private fixMessageDetails(q: EventQueue, e: WireEvent): WireEvent {
    const details = e.message_details as Record<string, Record<string, unknown>> | undefined;
    if (q.capabilities.empty_topic_name || !details) return e;
    let copy: Record<string, Record<string, unknown>> | null = null;
    for (const [id, d] of Object.entries(details)) {
      if (d.type === 'stream' && d.topic === '') {
        copy ??= { ...details };
        copy[id] = { ...d, topic: this.emptyTopicName(q.realmId) };
      }
    }
    return copy ? { ...e, message_details: copy } : e;
  }

  private emptyTopicName(realmId: number): string {
    let name = this.emptyTopicNames.get(realmId);
    if (name === undefined) {
      const row = stmt(this.db, 'SELECT empty_topic_display_name AS n FROM realm WHERE id = ?').get(realmId) as { n: string } | undefined;
      name = row?.n ?? 'general chat';
      this.emptyTopicNames.set(realmId, name);
    }
    return name;
  }

  private emailOf(userId: number): string {
    const row = stmt(this.db, 'SELECT email FROM user WHERE id = ?').get(userId) as { email: string } | undefined;
    return row?.email ?? '';
  }
}

interface MessageVariant {
  message: WireEvent;
  /** The event with this payload (without flags), serialised on first use. */
  json: OpenJson | null;
}

const NO_FLAGS: readonly string[] = [];

/** Zulip's ClientDescriptor.accepts_event, less the message narrow (checked by the caller). */
function accepts(q: EventQueue, e: WireEvent): boolean {
  const type = String(e.type);
  if (!q.wants(type)) return false;
  // A client that asked for user_topic gets it instead of the legacy muted_topics.
  if (type === 'muted_topics' && q.eventTypes?.has('user_topic')) return false;
  if (type === 'typing' && 'stream_id' in e) return q.capabilities.stream_typing_notifications;
  if (q.capabilities.user_settings_object && (type === 'update_display_settings' || type === 'update_global_notifications')) return false;
  if (type === 'user_group') {
    if (e.op === 'remove') return !q.capabilities.include_deactivated_groups;
    const data = e.data as Record<string, unknown> | undefined;
    if (e.op === 'update' && data && 'deactivated' in data) return q.capabilities.include_deactivated_groups;
  }
  // Linkifiers use URL templates; clients that cannot read them get none (Zulip FL 176).
  if (type === 'realm_linkifiers' && !q.capabilities.linkifier_url_template) return false;
  return true;
}

/** The presence event in the queue's format: modern (simplified_presence_events), slim, or legacy. */
function presenceFor(q: EventQueue, e: WireEvent): WireEvent {
  if (q.capabilities.simplified_presence_events) {
    return e.presences !== undefined ? { type: 'presence', presences: e.presences } : e;
  }
  if (e.user_id === undefined) return e;
  const out: WireEvent = { type: 'presence', user_id: e.user_id };
  if (!q.slimPresence) out.email = e.email;
  out.server_timestamp = e.server_timestamp;
  out.presence = e.presence;
  return out;
}
