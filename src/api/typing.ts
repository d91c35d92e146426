// POST /typing: typing notifications for direct and channel messages; POST /messages/{id}/typing:
// someone is editing their message.
import { doSendChannelTyping, doSendDirectTyping, doSendMessageEditTyping } from '../actions/typing';
import { errors } from '../http/errors';
import { p, zInt } from '../http/params';
import { route } from '../http/route';

export const typingRoutes = [
  route({
    method: 'POST',
    path: '/api/v1/typing',
    auth: 'user',
    params: {
      type: p.oneOf(['direct', 'stream', 'channel'] as const).default('direct'),
      op: p.oneOf(['start', 'stop'] as const),
      // Parley's bound (Zulip has none): each id is looked up and notified.
      to: p.list(zInt(), { max: 1000 }).optional(),
      stream_id: p.int().optional(),
      topic: p.str().alias('subject').optional(),
    },
    handle({ app, user, params }) {
      if (params.type === 'stream' || params.type === 'channel') {
        // zulip-compat: these two are plain BAD_REQUEST errors in Zulip, not REQUEST_VARIABLE_MISSING.
        if (params.stream_id === undefined) throw errors.badRequest("Missing '{var_name}' argument", { var_name: 'stream_id' });
        if (params.topic === undefined) throw errors.badRequest('Missing topic');
        doSendChannelTyping(app, user, params.stream_id, params.topic, params.op);
      } else {
        if (params.to === undefined) throw errors.badRequest("Missing '{var_name}' argument", { var_name: 'to' });
        doSendDirectTyping(app, user, params.to, params.op);
      }
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/api/v1/messages/{message_id:int}/typing',
    auth: 'user',
    params: { op: p.oneOf(['start', 'stop'] as const) },
    handle({ app, user, params, path }) {
      doSendMessageEditTyping(app, user, Number(path.message_id), params.op);
      return {};
    },
  }),
];
