// Message reminders: GET/POST /reminders, DELETE /reminders/{reminder_id} (delivery shares the
// scheduled messages' timer, see actions/scheduled-messages.ts).
import { doDeleteReminder, doScheduleReminder } from '../actions/reminders';
import { p } from '../http/params';
import { route } from '../http/route';
import { formatReminder, listReminders } from '../lib/reminders';

export const reminderRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/reminders',
    auth: 'user',
    handle({ app, user }) {
      return { reminders: listReminders(app.db, user.id).map(formatReminder) };
    },
  }),
  route({
    method: 'POST',
    path: '/api/v1/reminders',
    auth: 'user',
    params: {
      message_id: p.int(),
      scheduled_delivery_timestamp: p.int(),
      note: p.str().optional(),
    },
    handle({ app, user, params }) {
      return doScheduleReminder(app, user, params.message_id, params.scheduled_delivery_timestamp, params.note);
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/reminders/{reminder_id:int}',
    auth: 'user',
    handle({ app, user, path }) {
      doDeleteReminder(app, user, Number(path.reminder_id));
      return {};
    },
  }),
];
