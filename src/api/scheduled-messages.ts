// Scheduled messages: list, create, edit, delete (delivery runs on a timer, see actions/scheduled-messages.ts).
import * as v from 'valibot';
import { doDeleteScheduledMessage, doEditScheduledMessage, doScheduleMessage } from '../actions/scheduled-messages';
import { p, zInt } from '../http/params';
import { route } from '../http/route';
import { formatScheduledMessage, listScheduledMessages } from '../lib/scheduled-messages';

const TYPES = ['direct', 'channel', 'stream', 'private'] as const;
const toParam = p.json(v.union([zInt(), v.array(zInt())], '{var_name} is not an integer or a list of integers'));

export const scheduledMessageRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/scheduled_messages',
    auth: 'user',
    handle({ app, user }) {
      return { scheduled_messages: listScheduledMessages(app.db, user.id).map(formatScheduledMessage) };
    },
  }),
  route({
    method: 'POST',
    path: '/api/v1/scheduled_messages',
    auth: 'user',
    params: {
      type: p.oneOf(TYPES),
      to: toParam,
      content: p.str(),
      topic: p.str().alias('subject').optional(),
      scheduled_delivery_timestamp: p.int(),
      read_by_sender: p.bool().optional(),
    },
    handle({ app, user, params }) {
      return doScheduleMessage(app, user, {
        type: params.type,
        to: params.to,
        topic: params.topic,
        content: params.content,
        deliverAt: params.scheduled_delivery_timestamp,
        readBySender: params.read_by_sender,
      });
    },
  }),
  route({
    method: 'PATCH',
    path: '/api/v1/scheduled_messages/{scheduled_message_id:int}',
    auth: 'user',
    params: {
      type: p.oneOf(TYPES).optional(),
      to: toParam.optional(),
      content: p.str().optional(),
      topic: p.str().alias('subject').optional(),
      scheduled_delivery_timestamp: p.int().optional(),
    },
    handle({ app, user, params, path }) {
      doEditScheduledMessage(app, user, Number(path.scheduled_message_id), {
        type: params.type,
        to: params.to,
        topic: params.topic,
        content: params.content,
        deliverAt: params.scheduled_delivery_timestamp,
      });
      return {};
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/scheduled_messages/{scheduled_message_id:int}',
    auth: 'user',
    handle({ app, user, path }) {
      doDeleteScheduledMessage(app, user, Number(path.scheduled_message_id));
      return {};
    },
  }),
];
