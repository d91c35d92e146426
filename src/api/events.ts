// Real-time events: POST /register (a queue plus the initial state), GET /events (long-poll) and
// DELETE /events. Queues live in app.queues (src/events/registry.ts); their state providers are in
// src/events/state.ts.
import * as v from 'valibot';
import type { App } from '../app';
import { errors } from '../http/errors';
import { p, zBool, zInt, zStr } from '../http/params';
import { JsonFields, route } from '../http/route';
import { narrowSchema } from '../events/narrow-match';
import { capabilities, type EventQueue } from '../events/queue';
import { allocateQueue, NAMED_QUEUE_TIMEOUTS } from '../events/registry';
import { randomUUID } from 'node:crypto';
import { fetchInitialState, RawJson, stateOptions } from '../events/state';
import { ZULIP_FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION } from '../version';

// A queue keeps its event types for its lifetime (see MAX_EVENT_NARROW_OPERAND_LENGTH): 10,000 types
// of 900 characters made each of a user's 50 queues hold 9 MB. Zulip has some 70 event types, the
// longest under 40 characters.
const MAX_EVENT_TYPES = 1000;
const MAX_EVENT_TYPE_LENGTH = 100;
const eventTypesParam = () => p.list(zStr({ max: MAX_EVENT_TYPE_LENGTH }), { max: MAX_EVENT_TYPES }).optional();

// zulip-compat: notification_settings_null is required once client_capabilities is given (it was made
// required by accident in Zulip 2.1 and stayed so); other unknown capabilities are ignored.
const capabilitiesSchema = v.looseObject(
  {
    notification_settings_null: zBool(),
    bulk_message_deletion: v.optional(zBool()),
    user_avatar_url_field_optional: v.optional(zBool()),
    stream_typing_notifications: v.optional(zBool()),
    user_settings_object: v.optional(zBool()),
    linkifier_url_template: v.optional(zBool()),
    user_list_incomplete: v.optional(zBool()),
    include_deactivated_groups: v.optional(zBool()),
    archived_channels: v.optional(zBool()),
    empty_topic_name: v.optional(zBool()),
    simplified_presence_events: v.optional(zBool()),
    individual_emoji_changes: v.optional(zBool()),
  },
  '{var_name} is not a dict',
);

/** idle_queue_timeout as seconds (undefined when not given); a name must be one Zulip knows. */
function idleQueueTimeout(value: number | string | undefined): number | undefined {
  if (value === undefined || typeof value === 'number') return value;
  const named = Object.hasOwn(NAMED_QUEUE_TIMEOUTS, value) ? NAMED_QUEUE_TIMEOUTS[value] : undefined;
  if (named === undefined) throw errors.badRequest('Invalid {var_name}', { var_name: 'idle_queue_timeout' });
  return named;
}

/**
 * Waits for events on `queue` (a parked long-poll), answering as Zulip's finish_handler does. The
 * answer is built as text (the queue holds its events serialised): a fan-out to many parked polls
 * serialises each event once, not once per poll.
 */
function park(app: App, queue: EventQueue, onAbort: (fn: () => void) => void): Promise<JsonFields> {
  return new Promise((resolve) => {
    // Made now, while the poll waits: the fan-out that answers it only concatenates.
    const tail = `,"queue_id":${JSON.stringify(queue.id)}`;
    const done = (eventsJson: string) => {
      queue.touch(app.clock.nowMs());
      resolve(JsonFields.ofInner(`"events":${eventsJson}${tail}`));
    };
    queue.park(done, app.queues.heartbeatMs(), app.clock.nowMs());
    // A client that hangs up no longer waits: the queue stops counting it as a parked poll.
    onAbort(() => queue.abandonPoll(done, app.clock.nowMs()));
  });
}

/**
 * The answer with its already serialised parts (RawJson) spliced in where they stand: the same bytes
 * JSON.stringify would give for their values. Each stands in as a marker no data can hold (a random
 * id between NUL characters), replaced once the rest is serialised.
 */
function withRawJson(fields: Record<string, unknown>): Record<string, unknown> | JsonFields {
  const raws = new Map<string, string>();
  for (const [key, value] of Object.entries(fields)) {
    if (!(value instanceof RawJson)) continue;
    const marker = `\u0000${randomUUID()}\u0000`;
    raws.set(JSON.stringify(marker), value.json);
    fields[key] = marker;
  }
  if (raws.size === 0) return fields;
  // Found in the serialised rest (small) in order, then joined once: splicing one by one would copy
  // the growing ~900 kB text at each search.
  const json = JSON.stringify(fields);
  const found = [...raws].map(([marker, raw]) => ({ at: json.indexOf(marker), end: json.indexOf(marker) + marker.length, raw })).sort((a, b) => a.at - b.at);
  const parts: string[] = [];
  let from = 0;
  for (const f of found) {
    parts.push(json.slice(from, f.at), f.raw);
    from = f.end;
  }
  parts.push(json.slice(from));
  return new JsonFields(parts.join(''));
}

export const eventRoutes = [
  route({
    method: 'POST',
    path: '/api/v1/register',
    auth: 'user',
    params: {
      apply_markdown: p.bool().default(false),
      client_gravatar: p.bool().default(true),
      slim_presence: p.bool().default(false),
      presence_history_limit_days: p.int({ min: 0 }).optional(),
      event_types: eventTypesParam(),
      fetch_event_types: eventTypesParam(),
      all_public_streams: p.bool().optional(),
      include_subscribers: p.json(v.union([zBool(), v.literal('partial')], '{var_name} is not a boolean')).default(false),
      client_capabilities: p.json(capabilitiesSchema).optional(),
      narrow: p.json(narrowSchema).default([]),
      queue_lifespan_secs: p.int({ min: 0 }).default(0),
      // Seconds (JSON integer) or a named timeout ("mobile"); 0 or absent: the server's default.
      idle_queue_timeout: p.jsonOrStr(zInt({ min: 0 })).optional(),
    },
    handle({ app, user, params }) {
      const lifespan = idleQueueTimeout(params.idle_queue_timeout) ?? params.queue_lifespan_secs;
      // Commit this turn's pending writes first: the state read below then holds exactly what was
      // announced before the queue existed, and every later change reaches the queue as an event.
      app.batch.commit();
      const caps = capabilities(params.client_capabilities ?? {});
      const queue = allocateQueue(app, user, {
        eventTypes: params.event_types,
        narrow: params.narrow,
        allPublicStreams: params.all_public_streams,
        applyMarkdown: params.apply_markdown,
        clientGravatar: params.client_gravatar,
        slimPresence: params.slim_presence,
        capabilities: caps,
        lifespanSeconds: lifespan,
      });
      const wanted = params.fetch_event_types ?? params.event_types;
      let state: Record<string, unknown>;
      try {
        state = fetchInitialState(
          app,
          user,
          stateOptions({
            eventTypes: wanted === undefined ? null : new Set(wanted),
            queueId: queue.id,
            clientGravatar: params.client_gravatar,
            slimPresence: params.slim_presence,
            presenceHistoryLimitDays: params.presence_history_limit_days ?? null,
            includeSubscribers: params.include_subscribers,
            capabilities: caps,
            rawJson: true,
          }),
        );
      } catch (err) {
        app.queues.remove(queue);
        throw err;
      }
      return withRawJson({
        queue_id: queue.id,
        idle_queue_timeout_secs: queue.lifespanMs / 1000,
        zulip_version: ZULIP_VERSION,
        zulip_feature_level: ZULIP_FEATURE_LEVEL,
        zulip_merge_base: ZULIP_MERGE_BASE,
        ...state,
        last_event_id: -1,
      });
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/events',
    auth: 'user',
    params: {
      queue_id: p.str().optional(),
      last_event_id: p.int().optional(),
      dont_block: p.bool().default(false),
      // Used only to register a queue in the same request (no queue_id, dont_block=true), as in Zulip.
      event_types: eventTypesParam(),
      narrow: p.json(narrowSchema).default([]),
      all_public_streams: p.bool().default(false),
      apply_markdown: p.bool().default(false),
      client_gravatar: p.bool().default(false),
      slim_presence: p.bool().default(false),
      lifespan_secs: p.int({ min: 0 }).default(0),
      bulk_message_deletion: p.bool().default(false),
      stream_typing_notifications: p.bool().default(false),
      user_settings_object: p.bool().default(false),
      linkifier_url_template: p.bool().default(false),
      user_list_incomplete: p.bool().default(false),
      include_deactivated_groups: p.bool().default(false),
      archived_channels: p.bool().default(false),
      empty_topic_name: p.bool().default(false),
      simplified_presence_events: p.bool().default(false),
      individual_emoji_changes: p.bool().default(false),
    },
    handle({ app, user, params, onAbort }) {
      const now = app.clock.nowMs();
      let queue: EventQueue;
      const created = params.queue_id === undefined;
      if (params.queue_id === undefined) {
        // zulip-compat: a plain BAD_REQUEST (not REQUEST_VARIABLE_MISSING), as Tornado's fetch_events raises it.
        if (!params.dont_block) throw errors.badRequest("Missing 'queue_id' argument");
        queue = allocateQueue(app, user, {
          eventTypes: params.event_types,
          narrow: params.narrow,
          allPublicStreams: params.all_public_streams,
          applyMarkdown: params.apply_markdown,
          clientGravatar: params.client_gravatar,
          slimPresence: params.slim_presence,
          capabilities: capabilities(params),
          lifespanSeconds: params.lifespan_secs,
        });
      } else {
        if (params.last_event_id === undefined) throw errors.badRequest("Missing 'last_event_id' argument");
        queue = app.queues.access(user.id, params.queue_id);
        const ack = queue.acknowledge(params.last_event_id);
        if (ack === 'pruned') throw errors.badRequest('An event newer than {event_id} has already been pruned!', { event_id: params.last_event_id });
        if (ack === 'unknown') throw errors.badRequest('Event {event_id} was not in this queue', { event_id: params.last_event_id });
        // A new poll replaces the parked one, which is answered with what the queue holds now.
        queue.finishPoll(now);
      }
      queue.touch(now);
      if (queue.size > 0 || params.dont_block) {
        const events = queue.contentsJson();
        return new JsonFields(created ? `{"events":${events},"queue_id":${JSON.stringify(queue.id)}}` : `{"events":${events}}`);
      }
      return park(app, queue, onAbort);
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/events',
    auth: 'user',
    params: { queue_id: p.str() },
    handle({ app, user, params }) {
      app.queues.remove(app.queues.access(user.id, params.queue_id));
      return {};
    },
  }),
];
