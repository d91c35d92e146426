// Bulk read marking (mark_all/stream/topic_as_read), message edit history and read receipts.
import { doMarkAllAsRead, doMarkChannelAsRead, messageEditHistory, readReceipts } from '../actions/message-extras';
import { p } from '../http/params';
import { route, type AnyRoute } from '../http/route';

export const messageExtraRoutes: AnyRoute[] = [
  route({
    method: 'POST',
    path: '/api/v1/mark_all_as_read',
    auth: 'user',
    handle({ app, user }) {
      return { complete: doMarkAllAsRead(app, user).complete };
    },
  }),
  route({
    method: 'POST',
    path: '/api/v1/mark_stream_as_read',
    auth: 'user',
    params: { stream_id: p.int() },
    handle({ app, user, params }) {
      doMarkChannelAsRead(app, user, params.stream_id);
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/api/v1/mark_topic_as_read',
    auth: 'user',
    params: { stream_id: p.int(), topic_name: p.str() },
    handle({ app, user, params }) {
      doMarkChannelAsRead(app, user, params.stream_id, params.topic_name);
      return {};
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/messages/{message_id:int}/history',
    auth: 'user',
    params: { allow_empty_topic_name: p.bool().default(false) },
    handle({ app, user, params, path }) {
      return { message_history: messageEditHistory(app, user, Number(path.message_id), params.allow_empty_topic_name) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/messages/{message_id:int}/read_receipts',
    auth: 'user',
    handle({ app, user, path }) {
      return { user_ids: readReceipts(app, user, Number(path.message_id)) };
    },
  }),
];
