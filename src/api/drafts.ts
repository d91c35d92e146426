// Drafts: GET/POST /drafts, PATCH/DELETE /drafts/{draft_id}.
import * as v from 'valibot';
import { doCreateDrafts, doDeleteDraft, doEditDraft, listDrafts } from '../actions/drafts';
import { JsonFloat, p, zInt, zStr } from '../http/params';
import { route, type AnyRoute } from '../http/route';

// Zulip's DraftData (extra keys forbidden; content may not be blank).
const draftSchema = v.strictObject({
  type: v.picklist(['', 'stream', 'private'], 'Invalid {var_name}'),
  to: v.array(zInt({ min: 0 }), '{var_name} is not a list'),
  topic: zStr(),
  content: zStr({ min: 1 }),
  // A number, integral or not (1595479019.0 arrives boxed as JsonFloat).
  timestamp: v.optional(
    v.union(
      [v.number(), v.pipe(v.instance(JsonFloat), v.transform((f) => f.value))],
      '{var_name} is not a float',
    ),
  ),
});

export const draftRoutes: AnyRoute[] = [
  route({
    method: 'GET',
    path: '/api/v1/drafts',
    auth: 'user',
    handle({ app, user }) {
      const drafts = listDrafts(app, user);
      return { count: drafts.length, drafts };
    },
  }),
  route({
    method: 'POST',
    path: '/api/v1/drafts',
    auth: 'user',
    // As many as /register lists (Zulip's MAX_DRAFTS_IN_REGISTER_RESPONSE); Zulip has no bound here.
    params: { drafts: p.list(draftSchema, { max: 1000 }).default([]) },
    handle({ app, user, params }) {
      return { ids: doCreateDrafts(app, user, params.drafts) };
    },
  }),
  route({
    method: 'PATCH',
    path: '/api/v1/drafts/{draft_id:int}',
    auth: 'user',
    params: { draft: p.json(draftSchema) },
    handle({ app, user, params, path }) {
      doEditDraft(app, user, Number(path.draft_id), params.draft);
      return {};
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/drafts/{draft_id:int}',
    auth: 'user',
    handle({ app, user, path }) {
      doDeleteDraft(app, user, Number(path.draft_id));
      return {};
    },
  }),
];
