// Channels and subscriptions.
import type { App } from '../app';
import * as v from 'valibot';
import {
  checkCreateChannel,
  doArchiveChannel,
  doCreateChannel,
  doCreateChannelFolder,
  doReorderChannelFolders,
  doSetDefaultStream,
  doUpdateChannel,
  doUpdateChannelFolder,
  formatFolder,
  realmOf,
  TOPICS_POLICIES,
  type ChannelSpec,
  type GroupSettingChange,
  type RetentionInput,
} from '../actions/streams';
import { doDeleteTopic, listTopics } from '../actions/topics';
import { channelEmailAddress } from '../actions/channel-email';
import { sendNewChannelMessages } from '../actions/channel-notices';
import { doSubscribe, doUnsubscribe, doUpdateSubscriptionProperties, HEX_COLOR, resolvePrincipals } from '../actions/subscriptions';
import { errors } from '../http/errors';
import { p, zBool, zInt, zStr } from '../http/params';
import { route } from '../http/route';
import { groupSettingSchema, type GroupSettingValue } from '../lib/groups';
import {
  accessStreamById,
  findStreamByName,
  canAccessStreamMetadata,
  findSubscription,
  formatStream,
  formatSubscription,
  subscriberCounts,
  subscriberIds,
  listStreams,
  defaultStreams,
  subscribedStreams,
  channelFolders,
  STREAM_GROUP_SETTINGS,
  type StreamGroupSetting,
  type StreamRow,
} from '../lib/streams';
import { accessUserById, isGuest, type UserRow } from '../lib/users';
import '../lib/state-channels';

/** `principals` of (un)subscribing: the users named, or null for the caller (also for an empty list, as Zulip). */
const principalsOrCaller = (app: App, user: UserRow, principals: (string | number)[] | undefined) =>
  principals?.length ? resolvePrincipals(app, user, principals) : null;

/** message_retention_days arrives raw ("unlimited") or JSON-encoded ("\"unlimited\"" or 30); parseRetention judges it. */
const retentionParam = p.jsonOrStr(v.union([v.string(), zInt()], 'Invalid {var_name}'));

/** Zulip's parse_message_retention_days: a special word or a positive number of days. */
function parseRetention(value: unknown): RetentionInput | undefined {
  if (value === undefined) return undefined;
  if (value === 'realm_default' || value === 'unlimited' || value === 'forever') return value;
  if (typeof value === 'number') return value; // retentionToColumn refuses zero and negatives
  throw errors.badValue('message_retention_days', String(value));
}

const groupSettingParams = Object.fromEntries(STREAM_GROUP_SETTINGS.map((s) => [s, p.json(groupSettingSchema).optional()])) as Record<
  StreamGroupSetting,
  ReturnType<typeof p.json<typeof groupSettingSchema>>
>;

/** Channel options shared by POST /channels/create and create-on-subscribe. */
const channelOptionParams = {
  announce: p.bool().default(false),
  invite_only: p.bool().default(false),
  is_web_public: p.bool().default(false),
  is_default_stream: p.bool().default(false),
  history_public_to_subscribers: p.json(v.nullable(zBool())).optional(),
  message_retention_days: retentionParam.optional(),
  folder_id: p.json(v.nullable(zInt({ min: 0 }))).optional(),
  topics_policy: p.oneOf(TOPICS_POLICIES).optional(),
  ...groupSettingParams,
};

type ChannelOptionValues = {
  invite_only: boolean;
  is_web_public: boolean;
  is_default_stream: boolean;
  history_public_to_subscribers: boolean | null | undefined;
  message_retention_days: unknown;
  folder_id: number | null | undefined;
  topics_policy: (typeof TOPICS_POLICIES)[number] | undefined;
} & Record<StreamGroupSetting, GroupSettingValue | undefined>;

function channelSpecFrom(params: ChannelOptionValues): Omit<ChannelSpec, 'name' | 'description'> {
  const groupSettings: Partial<Record<StreamGroupSetting, GroupSettingValue>> = {};
  for (const s of STREAM_GROUP_SETTINGS) if (params[s] !== undefined) groupSettings[s] = params[s] as GroupSettingValue;
  return {
    inviteOnly: params.invite_only,
    isWebPublic: params.is_web_public,
    isDefaultStream: params.is_default_stream,
    historyPublicToSubscribers: params.history_public_to_subscribers,
    messageRetentionDays: parseRetention(params.message_retention_days),
    folderId: params.folder_id,
    topicsPolicy: params.topics_policy,
    groupSettings,
  };
}

const principalsSchema = v.union([v.array(zStr()), v.array(zInt())], '{var_name} is not a list');
/**
 * Channels one request may subscribe to or leave. Zulip has no bound; each channel costs a few hundred
 * microseconds (more when it is created), so a list of thousands blocked the process for seconds. 100
 * is Zulip's MAX_BULK_NEW_SUBSCRIPTION_MESSAGES, the most a bulk subscription announces.
 */
const MAX_SUBSCRIPTIONS_PER_REQUEST = 100;

export const channelRoutes = [
  route({
    method: 'POST',
    path: '/api/v1/channels/create',
    auth: 'user',
    params: {
      name: p.str(),
      subscribers: p.json(v.array(zInt())),
      description: p.str({ max: 1024 }).default(''),
      ...channelOptionParams,
    },
    handle({ app, user, params }) {
      if (isGuest(user)) throw errors.notForGuests();
      const name = params.name.trim();
      if (name === '') throw errors.badRequest('name cannot be blank');
      const spec: ChannelSpec = { ...channelSpecFrom(params as ChannelOptionValues), name, description: params.description };
      return app.batch.write(() => {
        const subscribers = resolvePrincipals(app, user, params.subscribers);
        checkCreateChannel(app, user, realmOf(app, user), spec);
        const stream = doCreateChannel(app, user, user.realm_id, spec);
        if (subscribers.length) {
          doSubscribe(app, user, {
            streams: [{ name: stream.name }],
            principals: subscribers,
            authorizationErrorsFatal: true,
            channelSpec: {},
          });
        }
        sendNewChannelMessages(app, user, [stream], params.announce);
        return { id: stream.id };
      });
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/streams',
    auth: 'user',
    params: {
      include_public: p.bool().default(true),
      include_web_public: p.bool().default(false),
      include_subscribed: p.bool().default(true),
      exclude_archived: p.bool().default(true),
      include_all: p.bool().default(false),
      include_all_active: p.bool().default(false),
      include_default: p.bool().default(false),
      include_owner_subscribed: p.bool().default(false),
      include_can_access_content: p.bool().default(false),
    },
    handle({ app, user, params }) {
      const includeAll = params.include_all || params.include_all_active;
      if (includeAll && isGuest(user)) throw errors.badRequest('User not authorized for this query');
      const counts = subscriberCounts(app.db, user.realm_id);
      const streams = listStreams(app.db, user, {
        includePublic: params.include_public,
        includeWebPublic: params.include_web_public,
        includeSubscribed: params.include_subscribed,
        excludeArchived: params.exclude_archived,
        includeAll,
        includeOwnerSubscribed: params.include_owner_subscribed,
        includeCanAccessContent: params.include_can_access_content,
      }).map((s) => formatStream(app.db, s, counts.get(s.id) ?? 0));
      // include_default marks the default channels; it adds none.
      if (params.include_default) {
        const defaults = new Set(defaultStreams(app.db, user.realm_id).map((r) => r.id));
        for (const s of streams) s.is_default = defaults.has(s.stream_id as number);
      }
      return { streams };
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/streams/{stream_id:int}',
    auth: 'user',
    handle({ app, user, path }) {
      const s = accessStreamById(app.db, user, Number(path.stream_id), { allowArchived: true });
      return { stream: formatStream(app.db, s) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/streams/{stream_id:int}/email_address',
    auth: 'user',
    params: { sender_id: p.int({ min: 0 }).optional() },
    handle({ app, user, path, params }) {
      return { email: channelEmailAddress(app, user, Number(path.stream_id), params.sender_id) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/get_stream_id',
    auth: 'user',
    params: { stream: p.str() },
    handle({ app, user, params }) {
      const s = findStreamByName(app.db, user.realm_id, params.stream);
      if (!s || !canAccessStreamMetadata(app.db, user, s)) throw errors.badRequest("Invalid channel name '{name}'", { name: params.stream });
      return { stream_id: s.id };
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/streams/{stream_id:int}/members',
    auth: 'user',
    handle({ app, user, path }) {
      const s = accessStreamById(app.db, user, Number(path.stream_id), { allowArchived: true });
      return { subscribers: subscriberIds(app.db, s.id) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/users/me/subscriptions',
    auth: 'user',
    params: { include_subscribers: p.bool().default(false) },
    handle({ app, user, params }) {
      const rows = subscribedStreams(app.db, user.id);
      const counts = subscriberCounts(app.db, user.realm_id);
      return {
        subscriptions: rows.map((s) =>
          formatSubscription(app.db, s, findSubscription(app.db, user.id, s.id)!, {
            subscriberCount: counts.get(s.id) ?? 0,
            subscribers: params.include_subscribers ? subscriberIds(app.db, s.id) : undefined,
          }),
        ),
      };
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/users/{user_id:int}/subscriptions/{stream_id:int}',
    auth: 'user',
    handle({ app, user, path }) {
      // As Zulip's get_subscription_backend: the user first ("No such user"), then the channel.
      const target = accessUserById(app.db, user, Number(path.user_id));
      const s = accessStreamById(app.db, user, Number(path.stream_id), { allowArchived: true });
      return { is_subscribed: findSubscription(app.db, target.id, s.id)?.active === 1 };
    },
  }),
  route({
    method: 'POST',
    path: '/api/v1/users/me/subscriptions',
    auth: 'user',
    params: {
      subscriptions: p.list(
        v.pipe(
          v.looseObject({
            name: zStr(),
            description: v.optional(zStr({ max: 1024 })),
            color: v.optional(zStr()),
          }),
          // Zulip's AddSubscriptionData validator names the item, not the field.
          v.check((o) => o.color === undefined || HEX_COLOR.test(o.color), 'Invalid {var_name}: Value error, add.color is not a valid hex color code'),
        ),
        { max: MAX_SUBSCRIPTIONS_PER_REQUEST },
      ),
      principals: p.json(principalsSchema).optional(),
      authorization_errors_fatal: p.bool().default(true),
      send_new_subscription_messages: p.bool().default(true),
      ...channelOptionParams,
    },
    handle({ app, user, params }) {
      return app.batch.write(() => {
        const principals = principalsOrCaller(app, user, params.principals as (string | number)[] | undefined);
        const result = doSubscribe(app, user, {
          streams: params.subscriptions.map((s) => ({ name: s.name, description: s.description, color: s.color })),
          principals,
          authorizationErrorsFatal: params.authorization_errors_fatal,
          channelSpec: channelSpecFrom(params as ChannelOptionValues),
          announce: params.announce,
          sendNewSubscriptionMessages: params.send_new_subscription_messages,
        });
        return { ...result };
      });
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/users/me/subscriptions',
    auth: 'user',
    params: { subscriptions: p.list(zStr(), { max: MAX_SUBSCRIPTIONS_PER_REQUEST }), principals: p.json(principalsSchema).optional() },
    handle({ app, user, params }) {
      return app.batch.write(() => {
        const principals = principalsOrCaller(app, user, params.principals as (string | number)[] | undefined);
        return doUnsubscribe(app, user, params.subscriptions, principals);
      });
    },
  }),
  route({
    method: 'POST',
    path: '/api/v1/users/me/subscriptions/properties',
    auth: 'user',
    params: {
      // Parley's bound (Zulip has none): ten properties for each of 100 channels.
      subscription_data: p.list(
        v.strictObject({
          stream_id: zInt(),
          property: zStr(),
          value: v.union([zBool(), zStr()], '{var_name} is not a boolean or string'),
        }),
        { max: 1000 },
      ),
    },
    handle({ app, user, params }) {
      doUpdateSubscriptionProperties(app, user, params.subscription_data);
      return {};
    },
  }),
  ...(['POST', 'PATCH'] as const).map((method) =>
    // zulip-compat: Zulip routes the single-channel form as PATCH; its docs and older clients use POST.
    route({
      method,
      path: '/api/v1/users/me/subscriptions/{stream_id:int}',
      auth: 'user',
      params: { property: p.str(), value: p.jsonOrStr(v.union([zBool(), zStr()])) },
      handle({ app, user, params, path }) {
        doUpdateSubscriptionProperties(app, user, [{ stream_id: Number(path.stream_id), property: params.property, value: params.value }]);
        return {};
      },
    }),
  ),
  route({
    method: 'PATCH',
    path: '/api/v1/streams/{stream_id:int}',
    auth: 'user',
    params: {
      new_name: p.str().optional(),
      description: p.str().optional(),
      is_private: p.bool().optional(),
      is_web_public: p.bool().optional(),
      history_public_to_subscribers: p.bool().optional(),
      is_default_stream: p.bool().optional(),
      is_archived: p.bool().optional(),
      message_retention_days: retentionParam.optional(),
      topics_policy: p.oneOf(TOPICS_POLICIES).optional(),
      folder_id: p.json(v.nullable(zInt({ min: 0 }))).optional(),
      ...(Object.fromEntries(
        STREAM_GROUP_SETTINGS.map((s) => [s, p.json(v.union([v.strictObject({ new: groupSettingSchema, old: v.optional(groupSettingSchema) }), groupSettingSchema])).optional()]),
      ) as Record<StreamGroupSetting, ReturnType<typeof p.json<v.GenericSchema<unknown, GroupSettingChange>>>>),
    },
    handle({ app, user, params, path }) {
      const groupSettings: Partial<Record<StreamGroupSetting, GroupSettingChange>> = {};
      for (const s of STREAM_GROUP_SETTINGS) if (params[s] !== undefined) groupSettings[s] = params[s];
      doUpdateChannel(app, user, Number(path.stream_id), {
        newName: params.new_name,
        description: params.description,
        isPrivate: params.is_private,
        isWebPublic: params.is_web_public,
        historyPublicToSubscribers: params.history_public_to_subscribers,
        isDefaultStream: params.is_default_stream,
        messageRetentionDays: parseRetention(params.message_retention_days),
        topicsPolicy: params.topics_policy,
        folderId: params.folder_id,
        isArchived: params.is_archived,
        groupSettings,
      });
      return {};
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/streams/{stream_id:int}',
    auth: 'user',
    handle({ app, user, path }) {
      doArchiveChannel(app, user, Number(path.stream_id));
      return {};
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/users/me/{stream_id:int}/topics',
    auth: 'user',
    params: { allow_empty_topic_name: p.bool().default(false) },
    handle({ app, user, params, path }) {
      return { topics: listTopics(app, user, Number(path.stream_id), params.allow_empty_topic_name) };
    },
  }),
  route({
    method: 'POST',
    path: '/api/v1/streams/{stream_id:int}/delete_topic',
    auth: 'user',
    requires: 'admin',
    params: { topic_name: p.str() },
    handle({ app, user, params, path }) {
      return doDeleteTopic(app, user, Number(path.stream_id), params.topic_name);
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/default_streams',
    auth: 'user',
    handle({ app, user }) {
      const rows = defaultStreams(app.db, user.realm_id);
      return { default_streams: rows.map((s) => formatStream(app.db, s)) };
    },
  }),
  ...(['POST', 'DELETE'] as const).map((method) =>
    route({
      method,
      path: '/api/v1/default_streams',
      auth: 'user',
      requires: 'admin',
      params: { stream_id: p.int({ min: 0 }) },
      handle({ app, user, params }) {
        doSetDefaultStream(app, user, params.stream_id, method === 'POST');
        return {};
      },
    }),
  ),
  route({
    method: 'POST',
    path: '/api/v1/channel_folders/create',
    auth: 'user',
    requires: 'admin',
    params: { name: p.str(), description: p.str({ max: 1024 }).default('') },
    handle({ app, user, params }) {
      return { channel_folder_id: doCreateChannelFolder(app, user, params.name, params.description) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/channel_folders',
    auth: 'user',
    params: { include_archived: p.bool().default(false) },
    handle({ app, user, params }) {
      const rows = channelFolders(app.db, user.realm_id);
      return { channel_folders: rows.filter((r) => params.include_archived || !r.is_archived).map((r) => formatFolder(app, r.id)) };
    },
  }),
  route({
    method: 'PATCH',
    path: '/api/v1/channel_folders',
    auth: 'user',
    requires: 'admin',
    params: { order: p.json(v.array(zInt(), '{var_name} is not a list')) },
    handle({ app, user, params }) {
      doReorderChannelFolders(app, user, params.order);
      return {};
    },
  }),
  route({
    method: 'PATCH',
    path: '/api/v1/channel_folders/{channel_folder_id:int}',
    auth: 'user',
    requires: 'admin',
    params: { name: p.str().optional(), description: p.str({ max: 1024 }).optional(), is_archived: p.bool().optional() },
    handle({ app, user, params, path }) {
      doUpdateChannelFolder(app, user, Number(path.channel_folder_id), { name: params.name, description: params.description, isArchived: params.is_archived });
      return {};
    },
  }),
];
