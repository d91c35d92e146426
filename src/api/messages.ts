// Messages: send, fetch with narrows, single message, delete, reactions, flags, render.
import * as v from 'valibot';
import { doDeleteMessage, doReaction, doSendMessage, type Addressee } from '../actions/messages';
import { doUpdateFlags } from '../actions/flags';
import { doEditMessage } from '../actions/message-edit';
import { doUpdateFlagsForNarrow, parseAnchor } from '../actions/flags-narrow';
import { errors } from '../http/errors';
import { checkListLength, MAX_JSON_LIST_ITEMS, p, zInt } from '../http/params';
import { route } from '../http/route';
import { fetchMessages, matchesNarrow } from '../lib/fetch';
import { flagNames, formatMessages } from '../lib/messages';
import { senderAccessFor } from '../lib/access';
import { userMessageFlags } from '../lib/user-messages';
import { parseNarrow } from '../lib/narrow';
import { renderMessage } from '../lib/render';
import { accessMessage } from '../actions/messages';

const MESSAGE_TYPES = ['direct', 'private', 'stream', 'channel'] as const;

/** `to` of a channel message, as Zulip's extract_stream_indicator: a name (raw or JSON), an id, or a one-element list of either. */
function channelAddressee(to: unknown, topic: string | undefined): Addressee {
  let data = to;
  if (Array.isArray(data)) {
    if (data.length !== 1) throw errors.badRequest('Expected exactly one channel');
    data = data[0];
  }
  if (typeof data === 'string') return { kind: 'channel', streamName: data, topic };
  if (typeof data === 'number' && Number.isInteger(data)) return { kind: 'channel', streamId: data, topic };
  throw errors.badRequest('Invalid data type for channel');
}

/**
 * `to` of a direct message, as Zulip's extract_private_recipients: a JSON list of ids or of emails
 * (not both), or comma-separated emails; emails trimmed, blanks and repeats dropped.
 */
function directAddressee(to: unknown): Addressee {
  const data = typeof to === 'string' ? to.split(',') : to;
  if (!Array.isArray(data)) throw errors.badRequest('Invalid data type for recipients');
  // Comma-separated addresses are a list like a JSON one, with the same bound.
  checkListLength(data, 'to', MAX_JSON_LIST_ITEMS);
  if (data.length === 0) return { kind: 'direct', userIds: [], emails: [] };
  const mixed = () => errors.badRequest('Recipient lists may contain emails or user IDs, but not both.');
  if (typeof data[0] === 'string') {
    if (!data.every((x) => typeof x === 'string')) throw mixed();
    return { kind: 'direct', emails: [...new Set((data as string[]).map((e) => e.trim()))].filter((e) => e !== '') };
  }
  if (!Number.isInteger(data[0])) throw errors.badRequest('Invalid data type for recipients');
  if (!data.every((x) => Number.isInteger(x))) throw mixed();
  return { kind: 'direct', userIds: [...new Set(data as number[])] };
}

/**
 * The client a request comes from, as Zulip's parse_client names it: the User-Agent's product name
 * ("ZulipMobile/27.1 (iOS)" → "ZulipMobile"), "Unspecified" without one.
 */
function clientName(userAgent: string | undefined): string {
  if (userAgent === undefined) return 'Unspecified';
  const m = /^([^/ ]*[^0-9/(]*)(?:\/[^/ ]*)?(?:[ /].*)?$/.exec(userAgent);
  return (m?.[1] ?? userAgent).trim().slice(0, 30) || 'Unspecified';
}

const narrowParam = p.json(v.nullable(v.array(v.unknown()))).default([]);
/** Zulip's MAX_MESSAGES_PER_FETCH. */
const MAX_MESSAGES_PER_FETCH = 5000;

export const messageRoutes = [
  route({
    method: 'POST',
    path: '/api/v1/messages',
    auth: 'user',
    params: {
      type: p.oneOf(MESSAGE_TYPES),
      to: p.jsonOrStr(v.unknown()).optional(),
      content: p.str(),
      topic: p.str().alias('subject').optional(),
      queue_id: p.str().optional(),
      local_id: p.str().optional(),
      read_by_sender: p.bool().optional(),
    },
    handle({ app, user, params, headers }) {
      let to: Addressee;
      if (params.type === 'stream' || params.type === 'channel') {
        if (params.to !== undefined) to = channelAddressee(params.to, params.topic);
        // zulip-compat: without `to`, a bot posts to its default channel (Addressee.legacy_build).
        else if (user.default_sending_stream_id !== null) to = { kind: 'channel', streamId: user.default_sending_stream_id as number, topic: params.topic };
        else throw errors.badRequest('Missing channel');
      } else {
        to = directAddressee(params.to ?? []);
      }
      const client = clientName(headers['user-agent']);
      return doSendMessage(app, user, {
        to,
        content: params.content,
        client,
        readBySender: params.read_by_sender,
        localId: params.local_id,
        queueId: params.queue_id,
      });
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/messages',
    auth: 'user',
    params: {
      anchor: p.str().optional(),
      include_anchor: p.bool().default(true),
      num_before: p.int({ min: 0 }).optional(),
      num_after: p.int({ min: 0 }).optional(),
      narrow: narrowParam,
      client_gravatar: p.bool().default(true),
      apply_markdown: p.bool().default(true),
      use_first_unread_anchor: p.bool().default(false),
      message_ids: p.json(v.array(zInt())).optional(),
      allow_empty_topic_name: p.bool().default(false),
    },
    handle({ app, user, params }) {
      const narrow = parseNarrow(params.narrow);
      // As Zulip's get_messages_backend: both counts default to 0; message_ids excludes a window.
      const numBefore = params.num_before ?? 0;
      const numAfter = params.num_after ?? 0;
      if (params.message_ids !== undefined) {
        if (numBefore || numAfter || params.anchor !== undefined || params.use_first_unread_anchor) {
          throw errors.incompatible(['num_before', 'num_after', 'anchor', 'message_ids', 'include_anchor', 'use_first_unread_anchor']);
        }
        if (params.message_ids.length > MAX_MESSAGES_PER_FETCH) throw errors.badRequest('Too many messages requested (maximum 5000).');
        return fetchMessages(app, user, narrow, {
          messageIds: params.message_ids,
          applyMarkdown: params.apply_markdown,
          clientGravatar: params.client_gravatar,
          allowEmptyTopicName: params.allow_empty_topic_name,
        });
      }
      if (params.anchor === undefined && !params.use_first_unread_anchor) throw errors.badRequest("Missing 'anchor' argument.");
      if (numBefore + numAfter > MAX_MESSAGES_PER_FETCH) throw errors.badRequest('Too many messages requested (maximum 5000).');
      const anchor = params.use_first_unread_anchor ? 'first_unread' : parseAnchor(params.anchor as string);
      if (!params.include_anchor && numBefore > 0 && numAfter > 0) {
        throw errors.badRequest('The anchor can only be excluded at an end of the range');
      }
      return fetchMessages(app, user, narrow, {
        anchor,
        includeAnchor: params.include_anchor,
        numBefore,
        numAfter,
        applyMarkdown: params.apply_markdown,
        clientGravatar: params.client_gravatar,
        allowEmptyTopicName: params.allow_empty_topic_name,
      });
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/messages/{message_id:int}',
    auth: 'user',
    params: { apply_markdown: p.bool().default(true), allow_empty_topic_name: p.bool().default(false) },
    handle({ app, user, params, path }) {
      const m = accessMessage(app, user, Number(path.message_id));
      // As Zulip's json_fetch_raw_message: client_gravatar on.
      const [message] = formatMessages(app.db, [m], {
        applyMarkdown: params.apply_markdown,
        clientGravatar: true,
        allowEmptyTopicName: params.allow_empty_topic_name,
        senderAccess: senderAccessFor(app, user),
      });
      message.flags = flagNames(userMessageFlags(app.db, user.id, m.id));
      // zulip-compat: the deprecated top-level raw_content is still sent.
      return { raw_content: m.content, message };
    },
  }),
  route({
    method: 'PATCH',
    path: '/api/v1/messages/{message_id:int}',
    auth: 'user',
    params: {
      content: p.str().optional(),
      topic: p.str().alias('subject').optional(),
      stream_id: p.int({ min: 0 }).optional(),
      propagate_mode: p.oneOf(['change_one', 'change_later', 'change_all'] as const).default('change_one'),
      send_notification_to_old_thread: p.bool().default(false),
      send_notification_to_new_thread: p.bool().default(true),
      prev_content_sha256: p.str().optional(),
    },
    handle({ app, user, params, path }) {
      return doEditMessage(app, user, Number(path.message_id), {
        content: params.content,
        topic: params.topic,
        streamId: params.stream_id,
        propagateMode: params.propagate_mode,
        prevContentSha256: params.prev_content_sha256,
        sendNotificationToOldThread: params.send_notification_to_old_thread,
        sendNotificationToNewThread: params.send_notification_to_new_thread,
      });
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/messages/{message_id:int}',
    auth: 'user',
    handle({ app, user, path }) {
      doDeleteMessage(app, user, Number(path.message_id));
      return {};
    },
  }),
  ...(['POST', 'DELETE'] as const).map((method) =>
    route({
      method,
      path: '/api/v1/messages/{message_id:int}/reactions',
      auth: 'user',
      params: {
        emoji_name: method === 'POST' ? p.str() : p.str().optional(),
        emoji_code: p.str().optional(),
        reaction_type: p.str().optional(),
      },
      handle({ app, user, params, path }) {
        doReaction(
          app,
          user,
          Number(path.message_id),
          { emojiName: params.emoji_name, emojiCode: params.emoji_code, reactionType: params.reaction_type },
          method === 'POST' ? 'add' : 'remove',
        );
        return {};
      },
    }),
  ),
  route({
    method: 'POST',
    path: '/api/v1/messages/flags',
    auth: 'user',
    // Parley's bound (Zulip has none): as many ids as one GET /messages returns.
    params: { messages: p.list(zInt(), { max: MAX_MESSAGES_PER_FETCH }), op: p.str(), flag: p.str() },
    handle({ app, user, params }) {
      // The action checks the flag, then the operation, as Zulip does.
      const { ignoredChannels } = doUpdateFlags(app, user, params.messages, params.flag, params.op);
      // zulip-compat: the response echoes the requested ids, not only the changed ones.
      return ignoredChannels ? { messages: params.messages, ignored_because_not_subscribed_channels: ignoredChannels } : { messages: params.messages };
    },
  }),
  route({
    method: 'POST',
    path: '/api/v1/messages/flags/narrow',
    auth: 'user',
    params: {
      anchor: p.str(),
      include_anchor: p.bool().default(true),
      num_before: p.int({ min: 0 }),
      num_after: p.int({ min: 0 }),
      narrow: narrowParam,
      op: p.str(),
      flag: p.str(),
    },
    handle({ app, user, params }) {
      return doUpdateFlagsForNarrow(app, user, {
        anchor: parseAnchor(params.anchor),
        includeAnchor: params.include_anchor,
        numBefore: params.num_before,
        numAfter: params.num_after,
        narrow: parseNarrow(params.narrow),
        op: params.op,
        flag: params.flag,
      });
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/messages/matches_narrow',
    auth: 'user',
    params: { msg_ids: p.list(zInt(), { max: MAX_MESSAGES_PER_FETCH }), narrow: p.json(v.array(v.unknown())) },
    handle({ app, user, params }) {
      return { messages: matchesNarrow(app, user, params.msg_ids, parseNarrow(params.narrow)) };
    },
  }),
  route({
    method: 'POST',
    path: '/api/v1/messages/render',
    auth: 'user',
    params: { content: p.str() },
    handle({ app, user, params }) {
      return { rendered: renderMessage(app, user.realm_id, params.content, user).html };
    },
  }),
];
