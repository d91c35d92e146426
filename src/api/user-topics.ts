// Personal topic preferences (POST /user_topics, legacy PATCH /users/me/subscriptions/muted_topics)
// and the bulk subscription update (PATCH /users/me/subscriptions).
import * as v from 'valibot';
import { doUpdateMutedTopic, doUpdateSubscriptions, doUpdateUserTopic } from '../actions/user-topics';
import { MAX_TOPIC_LENGTH } from '../actions/messages';
import { errors } from '../http/errors';
import { p, zStr } from '../http/params';
import { route, type AnyRoute } from '../http/route';

export const userTopicRoutes: AnyRoute[] = [
  route({
    method: 'POST',
    path: '/api/v1/user_topics',
    auth: 'user',
    params: { stream_id: p.int(), topic: p.str({ max: MAX_TOPIC_LENGTH }), visibility_policy: p.int() },
    handle({ app, user, params }) {
      if (![0, 1, 2, 3].includes(params.visibility_policy)) throw errors.badRequest('Invalid visibility_policy');
      doUpdateUserTopic(app, user, params.stream_id, params.topic, params.visibility_policy);
      return {};
    },
  }),
  route({
    method: 'PATCH',
    path: '/api/v1/users/me/subscriptions/muted_topics',
    auth: 'user',
    params: {
      stream_id: p.int().optional(),
      stream: p.str().optional(),
      topic: p.str({ max: MAX_TOPIC_LENGTH }),
      op: p.oneOf(['add', 'remove'] as const),
    },
    handle({ app, user, params }) {
      doUpdateMutedTopic(app, user, { id: params.stream_id, name: params.stream }, params.topic, params.op);
      return {};
    },
  }),
  route({
    method: 'PATCH',
    path: '/api/v1/users/me/subscriptions',
    auth: 'user',
    params: {
      add: p
        .json(
          v.array(
            v.strictObject({
              name: zStr(),
              color: v.optional(zStr()),
              description: v.optional(zStr({ max: 1024 })),
            }),
          ),
        )
        .default([]),
      delete: p.json(v.array(zStr())).default([]),
    },
    handle({ app, user, params }) {
      // zulip-compat: as POST /users/me/subscriptions (Zulip 11 composes its answer into this one).
      return { ...doUpdateSubscriptions(app, user, params.add, params.delete) };
    },
  }),
];
