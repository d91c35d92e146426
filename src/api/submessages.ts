// Widgets: POST /submessage (a vote, a new option or task, a strike, a new question or title).
import { doAddSubmessage, MAX_MSG_TYPE_LENGTH, MAX_SUBMESSAGE_LENGTH } from '../actions/submessages';
import { p } from '../http/params';
import { route, type AnyRoute } from '../http/route';

export const submessageRoutes: AnyRoute[] = [
  route({
    method: 'POST',
    path: '/api/v1/submessage',
    auth: 'user',
    params: {
      message_id: p.int(),
      msg_type: p.str({ max: MAX_MSG_TYPE_LENGTH }),
      content: p.str({ max: MAX_SUBMESSAGE_LENGTH }),
    },
    handle({ app, user, params }) {
      doAddSubmessage(app, user, params.message_id, params.msg_type, params.content);
      return {};
    },
  }),
];
