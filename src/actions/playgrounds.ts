// Code playgrounds (administrators): add and remove; each change sends the organization's whole list
// as a realm_playgrounds event to every active user (Zulip's notify_realm_playgrounds).
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors } from '../http/errors';
import { urlTemplateVariables } from '../lib/linkifiers';
import { listPlaygrounds } from '../lib/playgrounds';
import { isAdmin, type UserRow } from '../lib/users';
import { activeUserIds } from './users';

/** Zulip's RealmPlayground.MAX_PYGMENTS_LANGUAGE_LENGTH. */
export const MAX_PYGMENTS_LANGUAGE_LENGTH = 40;
/** Parley's bounds (Zulip has none): every playground is in every /register. */
export const MAX_PLAYGROUND_NAME_LENGTH = 100;
export const MAX_PLAYGROUND_URL_TEMPLATE_LENGTH = 2000;
export const MAX_PLAYGROUNDS = 1000;

// The view's check of the raw value (spaces allowed: it is stripped after).
const RAW_LANGUAGE = /^[ a-zA-Z0-9_+-./#]*$/;
// The model's language validator (letters, digits and _ + , - . / #: `+-.` is a range in Zulip's
// regular expression too).
const LANGUAGE = /^[a-zA-Z0-9_+-./#]+$/;

export interface PlaygroundInput {
  name: string;
  pygmentsLanguage: string;
  urlTemplate: string;
}

/**
 * Zulip's RealmPlayground.full_clean, in its order: each field (blank, then its validators), the
 * template's variables, then uniqueness unless a field it covers already failed.
 */
function checkPlayground(app: App, realmId: number, input: PlaygroundInput): void {
  const fieldErrors: Record<string, string[]> = {};
  const add = (field: string, msg: string) => (fieldErrors[field] ??= []).push(msg);
  const templateVars = urlTemplateVariables(input.urlTemplate);
  if (input.urlTemplate === '') add('url_template', 'This field cannot be blank.');
  else if (templateVars === null) add('url_template', 'Invalid URL template.');
  if (input.name === '') add('name', 'This field cannot be blank.');
  if (input.pygmentsLanguage === '') add('pygments_language', 'This field cannot be blank.');
  else if (!LANGUAGE.test(input.pygmentsLanguage)) add('pygments_language', 'Invalid characters in pygments language');
  // clean(): only for a valid template (an empty one is valid, and has no variable).
  if (templateVars !== null) {
    const vars = new Set(templateVars);
    if (!vars.has('code')) add('__all__', 'Missing the required variable "code" in the URL template');
    else if (vars.size !== 1) add('__all__', '"code" should be the only variable present in the URL template');
  }
  if (!fieldErrors.name && !fieldErrors.pygments_language) {
    const clash = stmt(app.db, 'SELECT 1 FROM realm_playground WHERE realm_id = ? AND pygments_language = ? AND name = ?').get(
      realmId,
      input.pygmentsLanguage,
      input.name,
    );
    if (clash) add('__all__', 'Realm playground with this Realm, Pygments language and Name already exists.');
  }
  if (Object.keys(fieldErrors).length > 0) throw errors.validationFailure(fieldErrors);
}

function notify(app: App, realmId: number): void {
  const list = listPlaygrounds(app.db, realmId);
  app.batch.onCommit(() => app.events.send({ type: 'realm_playgrounds', realm_playgrounds: list }, activeUserIds(app, realmId)));
}

/**
 * POST /realm/playgrounds: the values arrive unstripped and already checked as parameters (see the
 * route); they are stripped here, as Zulip's view does. Returns the new id.
 */
export function doAddPlayground(app: App, user: UserRow, raw: PlaygroundInput): number {
  if (!isAdmin(user)) throw errors.adminRequired();
  if (!RAW_LANGUAGE.test(raw.pygmentsLanguage)) throw errors.badRequest('Invalid characters in pygments language');
  const input: PlaygroundInput = { name: raw.name.trim(), pygmentsLanguage: raw.pygmentsLanguage.trim(), urlTemplate: raw.urlTemplate.trim() };
  return app.batch.write(() => {
    checkPlayground(app, user.realm_id, input);
    const count = (stmt(app.db, 'SELECT count(*) AS n FROM realm_playground WHERE realm_id = ?').get(user.realm_id) as { n: number }).n;
    if (count >= MAX_PLAYGROUNDS) throw errors.badRequest('An organization can have at most {max} code playgrounds.', { max: MAX_PLAYGROUNDS });
    const id = Number(
      stmt(app.db, 'INSERT INTO realm_playground (realm_id, name, pygments_language, url_template) VALUES (?, ?, ?, ?)').run(
        user.realm_id,
        input.name,
        input.pygmentsLanguage,
        input.urlTemplate,
      ).lastInsertRowid,
    );
    notify(app, user.realm_id);
    return id;
  });
}

/** DELETE /realm/playgrounds/{playground_id}. */
export function doRemovePlayground(app: App, user: UserRow, id: number): void {
  if (!isAdmin(user)) throw errors.adminRequired();
  app.batch.write(() => {
    const res = stmt(app.db, 'DELETE FROM realm_playground WHERE id = ? AND realm_id = ?').run(id, user.realm_id);
    if (res.changes === 0) throw errors.badRequest('Invalid playground');
    notify(app, user.realm_id);
  });
}
