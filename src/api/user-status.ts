// User status: POST /users/me/status, GET /users/{id}/status, and the administrators' POST /users/{id}/status.
import { doUpdateOwnStatus, doUpdateStatusForUser, getUserStatus, type StatusChange } from '../actions/user-status';
import { errors } from '../http/errors';
import { p } from '../http/params';
import { route } from '../http/route';

export const MAX_STATUS_TEXT_LENGTH = 60;

const statusParams = {
  status_text: p.str().optional(),
  emoji_name: p.str().optional(),
  emoji_code: p.str().optional(),
  reaction_type: p.str().optional(),
};

/** Zulip strips status_text before checking its 60-character limit. */
function statusText(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const text = raw.trim();
  if ([...text].length > MAX_STATUS_TEXT_LENGTH) {
    throw errors.badRequest('{var_name} is too long (limit: {max_length} characters)', { var_name: 'status_text', max_length: MAX_STATUS_TEXT_LENGTH });
  }
  return text;
}

function change(params: { status_text?: string; emoji_name?: string; emoji_code?: string; reaction_type?: string }): StatusChange {
  return {
    statusText: statusText(params.status_text),
    emojiName: params.emoji_name,
    emojiCode: params.emoji_code,
    reactionType: params.reaction_type,
  };
}

export const userStatusRoutes = [
  route({
    method: 'POST',
    path: '/api/v1/users/me/status',
    auth: 'user',
    params: { away: p.bool().optional(), ...statusParams },
    handle({ app, user, params }) {
      doUpdateOwnStatus(app, user, { away: params.away, ...change(params) });
      return {};
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/users/{user_id:int}/status',
    auth: 'user',
    handle: ({ app, user, path }) => ({ status: getUserStatus(app, user, Number(path.user_id)) }),
  }),
  route({
    method: 'POST',
    path: '/api/v1/users/{user_id:int}/status',
    auth: 'user',
    params: statusParams,
    handle({ app, user, params, path }) {
      doUpdateStatusForUser(app, user, Number(path.user_id), change(params));
      return {};
    },
  }),
];
