// POST /messages/{message_id}/report (Zulip's report_message_backend, feature level 382).
import { doReportMessage, MAX_REPORT_DESCRIPTION_LENGTH, REPORT_MESSAGE_REASONS, type ReportType } from '../actions/message-report';
import { p } from '../http/params';
import { route, type AnyRoute } from '../http/route';

export const messageReportRoutes: AnyRoute[] = [
  route({
    method: 'POST',
    path: '/api/v1/messages/{message_id:int}/report',
    auth: 'user',
    params: {
      report_type: p.oneOf(Object.keys(REPORT_MESSAGE_REASONS) as ReportType[], 'Invalid {var_name}: Value error, Not in the list of possible values'),
      description: p.str({ max: MAX_REPORT_DESCRIPTION_LENGTH }).default(''),
    },
    handle({ app, user, path, params }) {
      doReportMessage(app, user, Number(path.message_id), params.report_type, params.description);
      return {};
    },
  }),
];
