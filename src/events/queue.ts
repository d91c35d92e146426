// One client's event queue: what it asked for at registration, the events not yet acknowledged, and at
// most one parked long-poll. Queues live in memory only (a restart answers BAD_EVENT_QUEUE_ID and the
// client registers again, as after Zulip's queue garbage collection).
//
// Events are stored already serialised, as their JSON without the closing brace (`{"type":"x"`): a poll
// appends `,"id":N}` (Zulip adds the id last), so a reply is string concatenation and one serialised
// event (or message payload) serves every recipient queue that gets the same variant of it.
import { buildNarrowPredicate, type NarrowPredicate, type NarrowTerm } from './narrow-match';

/** The client_capabilities of POST /register, each defaulting to false. */
export interface ClientCapabilities {
  notification_settings_null: boolean;
  bulk_message_deletion: boolean;
  user_avatar_url_field_optional: boolean;
  stream_typing_notifications: boolean;
  user_settings_object: boolean;
  linkifier_url_template: boolean;
  user_list_incomplete: boolean;
  include_deactivated_groups: boolean;
  archived_channels: boolean;
  empty_topic_name: boolean;
  simplified_presence_events: boolean;
  individual_emoji_changes: boolean;
}

export const CAPABILITY_NAMES = [
  'notification_settings_null',
  'bulk_message_deletion',
  'user_avatar_url_field_optional',
  'stream_typing_notifications',
  'user_settings_object',
  'linkifier_url_template',
  'user_list_incomplete',
  'include_deactivated_groups',
  'archived_channels',
  'empty_topic_name',
  'simplified_presence_events',
  'individual_emoji_changes',
] as const satisfies readonly (keyof ClientCapabilities)[];

/** Capabilities read from an object holding some of them (missing ones are false; other keys ignored). */
export function capabilities(given: object = {}): ClientCapabilities {
  const out = {} as ClientCapabilities;
  for (const name of CAPABILITY_NAMES) out[name] = (given as Record<string, unknown>)[name] === true;
  return out;
}

/** Everything a queue is registered with. */
export interface QueueSpec {
  userId: number;
  realmId: number;
  /** null: every event type. */
  eventTypes: readonly string[] | null;
  narrow: readonly NarrowTerm[];
  allPublicStreams: boolean;
  applyMarkdown: boolean;
  clientGravatar: boolean;
  slimPresence: boolean;
  capabilities: ClientCapabilities;
  /** Idle time before the queue is collected. */
  lifespanSeconds: number;
}

export type WireEvent = Record<string, unknown>;

/** An event as a queue stores it: its JSON without the closing brace (see openJson). */
export type OpenJson = string;

/**
 * `event` as stored in a queue: JSON.stringify(event) without its closing brace, so that appending
 * `,"id":N}` gives JSON.stringify({ ...event, id: N }) byte for byte. (An event carrying its own
 * top-level `id`, which no action sends, loses it: the queue's id wins either way.)
 */
export function openJson(event: WireEvent): OpenJson {
  if (Object.hasOwn(event, 'id')) {
    const { id: _id, ...rest } = event;
    event = rest;
  }
  return JSON.stringify(event).slice(0, -1);
}

/** Receives the queue's unacknowledged events as a JSON array (`[...]`, ids included). */
export type PollAnswer = (eventsJson: string) => void;

const HEARTBEAT = openJson({ type: 'heartbeat' });

export class EventQueue {
  readonly userId: number;
  readonly realmId: number;
  readonly eventTypes: ReadonlySet<string> | null;
  readonly narrow: readonly NarrowTerm[];
  readonly narrowMatches: NarrowPredicate;
  readonly allPublicStreams: boolean;
  readonly applyMarkdown: boolean;
  readonly clientGravatar: boolean;
  readonly slimPresence: boolean;
  readonly capabilities: ClientCapabilities;
  readonly lifespanMs: number;
  /** Ids of unacknowledged events, parallel to `events`; both start at `head`. */
  private ids: number[] = [];
  private events: OpenJson[] = [];
  private head = 0;
  private nextEventId = 0;
  /** The newest acknowledged id (-1 before any). */
  newestPrunedId = -1;
  /** Last time a client was connected (a poll started or ended), clock milliseconds. */
  lastConnectedMs: number;
  /** The parked poll, if any, and its heartbeat timer. */
  private waiter: PollAnswer | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    readonly id: string,
    spec: QueueSpec,
    nowMs: number,
  ) {
    this.userId = spec.userId;
    this.realmId = spec.realmId;
    this.eventTypes = spec.eventTypes === null ? null : new Set(spec.eventTypes);
    this.narrow = spec.narrow;
    this.narrowMatches = buildNarrowPredicate(spec.narrow);
    this.allPublicStreams = spec.allPublicStreams;
    this.applyMarkdown = spec.applyMarkdown;
    this.clientGravatar = spec.clientGravatar;
    this.slimPresence = spec.slimPresence;
    this.capabilities = spec.capabilities;
    this.lifespanMs = spec.lifespanSeconds * 1000;
    this.lastConnectedMs = nowMs;
  }

  /** Whether the queue's event_types let `type` through. */
  wants(type: string): boolean {
    return this.eventTypes === null || this.eventTypes.has(type);
  }

  /** Unacknowledged events. */
  get size(): number {
    return this.ids.length - this.head;
  }

  /** Whether a poll is waiting on the queue. */
  get parked(): boolean {
    return this.waiter !== null;
  }

  /** Appends an event (serialised by openJson, without id) and wakes the parked poll. */
  push(event: OpenJson): void {
    this.ids.push(this.nextEventId++);
    this.events.push(event);
    this.finishPoll();
  }

  /**
   * Acknowledges events up to `lastEventId` (Zulip's prune), with Zulip's two errors for an id the
   * queue cannot account for.
   */
  acknowledge(lastEventId: number): 'ok' | 'pruned' | 'unknown' {
    if (lastEventId < this.newestPrunedId) return 'pruned';
    while (this.head < this.ids.length && this.ids[this.head] <= lastEventId) {
      this.newestPrunedId = this.ids[this.head];
      this.head++;
    }
    // Compact once the dropped prefix dominates, so acknowledging stays O(1) amortised.
    if (this.head > 64 && this.head * 2 > this.ids.length) {
      this.ids = this.ids.slice(this.head);
      this.events = this.events.slice(this.head);
      this.head = 0;
    }
    return lastEventId === this.newestPrunedId ? 'ok' : 'unknown';
  }

  /** The unacknowledged events as the client receives them: a JSON array, each event with its id last (as Zulip adds it). */
  contentsJson(): string {
    const { ids, events } = this;
    const end = ids.length;
    if (this.head === end) return '[]';
    // One event (the common long-poll answer) is a single concatenation.
    let out = `[${events[this.head]},"id":${ids[this.head]}}`;
    for (let i = this.head + 1; i < end; i++) out += `,${events[i]},"id":${ids[i]}}`;
    return out + ']';
  }

  /** The unacknowledged events as objects (tests and tools; the wire uses contentsJson). */
  contents(): WireEvent[] {
    return JSON.parse(this.contentsJson()) as WireEvent[];
  }

  /**
   * Parks a poll: `answer` receives the queue's contents as soon as an event is pushed, or when the
   * heartbeat timer pushes a heartbeat after `heartbeatMs`.
   */
  park(answer: PollAnswer, heartbeatMs: number, nowMs: number): void {
    this.finishPoll();
    this.lastConnectedMs = nowMs;
    const timer = setTimeout(() => {
      if (this.timer === timer) this.push(HEARTBEAT);
    }, heartbeatMs);
    timer.unref();
    this.waiter = answer;
    this.timer = timer;
  }

  /** Ends the parked poll (if any) with the current contents. True if there was one. */
  finishPoll(nowMs?: number): boolean {
    const answer = this.waiter;
    if (answer === null) return false;
    this.release();
    if (nowMs !== undefined) this.lastConnectedMs = nowMs;
    answer(this.contentsJson());
    return true;
  }

  /** Forgets the parked poll whose client went away (only if it is still the one parked). */
  abandonPoll(answer: PollAnswer, nowMs: number): void {
    if (this.waiter !== answer) return;
    this.release();
    this.lastConnectedMs = nowMs;
  }

  private release(): void {
    this.waiter = null;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Notes a client connection (every GET /events). */
  touch(nowMs: number): void {
    this.lastConnectedMs = nowMs;
  }

  /** Idle for longer than its lifespan, with no poll parked. */
  expired(nowMs: number): boolean {
    return this.waiter === null && nowMs - this.lastConnectedMs >= this.lifespanMs;
  }
}
