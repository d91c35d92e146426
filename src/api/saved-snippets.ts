// Saved snippets: GET/POST /saved_snippets, PATCH/DELETE /saved_snippets/{saved_snippet_id}.
import { MAX_MESSAGE_LENGTH } from '../actions/messages';
import { doCreateSavedSnippet, doDeleteSavedSnippet, doEditSavedSnippet } from '../actions/saved-snippets';
import { p } from '../http/params';
import { route, type AnyRoute } from '../http/route';
import { listSavedSnippets } from '../lib/saved-snippets';

/** Zulip's SavedSnippet.MAX_TITLE_LENGTH. */
const MAX_TITLE_LENGTH = 60;

// Declared in Zulip's order of checking (alphabetical). Stripped, then at least one character (Zulip's StringConstraints(min_length=1, strip_whitespace=True)).
const title = () => p.str({ strip: true, min: 1, max: MAX_TITLE_LENGTH });
const content = () => p.str({ strip: true, min: 1, max: MAX_MESSAGE_LENGTH });

export const savedSnippetRoutes: AnyRoute[] = [
  route({
    method: 'GET',
    path: '/api/v1/saved_snippets',
    auth: 'user',
    handle: ({ app, user }) => ({ saved_snippets: listSavedSnippets(app.db, user.id) }),
  }),
  route({
    method: 'POST',
    path: '/api/v1/saved_snippets',
    auth: 'user',
    params: { content: content(), title: title() },
    handle({ app, user, params }) {
      return { saved_snippet_id: doCreateSavedSnippet(app, user, params.title, params.content) };
    },
  }),
  route({
    method: 'PATCH',
    path: '/api/v1/saved_snippets/{saved_snippet_id:int}',
    auth: 'user',
    params: { content: content().optional(), title: title().optional() },
    handle({ app, user, params, path }) {
      // zulip-compat: nothing to change is a success without an event (not even for a missing snippet).
      if (params.title === undefined && params.content === undefined) return {};
      doEditSavedSnippet(app, user, Number(path.saved_snippet_id), { title: params.title, content: params.content });
      return {};
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/saved_snippets/{saved_snippet_id:int}',
    auth: 'user',
    handle({ app, user, path }) {
      doDeleteSavedSnippet(app, user, Number(path.saved_snippet_id));
      return {};
    },
  }),
];
