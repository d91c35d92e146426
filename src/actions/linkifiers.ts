// Linkifiers (administrators): add, update, remove, reorder; each change sends the whole ordered list
// as a realm_linkifiers event.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors, JsonableError } from '../http/errors';
import {
  compilePattern,
  formatLinkifier,
  listLinkifiers,
  reverseTemplateVariables,
  urlTemplateVariables,
  type CompiledPattern,
} from '../lib/linkifiers';
import { isAdmin, type UserRow } from '../lib/users';
import { activeUserIds } from './users';

export interface LinkifierInput {
  pattern: string;
  urlTemplate: string;
  exampleInput?: string | null;
  reverseTemplate?: string | null;
  alternativeUrlTemplates?: string[];
}

/** Zulip's ValidationFailureError: the first message, plus every message by field under `errors`. */
function validationFailure(fieldErrors: Record<string, string[]>): JsonableError {
  const first = Object.values(fieldErrors)[0][0];
  return new JsonableError('{message}', { vars: { message: first }, data: { errors: fieldErrors } });
}

const quoted = (name: string) => `'${name}'`;

/** Validates a linkifier the way Zulip's RealmFilter.full_clean does, in its order. */
function checkLinkifier(app: App, realmId: number, input: LinkifierInput, exceptId: number | null): void {
  const fieldErrors: Record<string, string[]> = {};
  const add = (field: string, msg: string) => (fieldErrors[field] ??= []).push(msg);
  // clean_fields: blank values and the URL template validator.
  if (input.pattern === '') add('pattern', 'This field cannot be blank.');
  if (input.urlTemplate === '') add('url_template', 'This field cannot be blank.');
  const templateVars = input.urlTemplate === '' ? null : urlTemplateVariables(input.urlTemplate);
  if (input.urlTemplate !== '' && templateVars === null) add('url_template', 'Invalid URL template.');
  // clean: the pattern, then the groups against the template variables.
  let compiled: CompiledPattern | null = null;
  try {
    compiled = compilePattern(input.pattern);
  } catch (err) {
    add('__all__', `Bad regular expression: ${(err as Error).message}`);
  }
  if (compiled && templateVars !== null && !fieldErrors.__all__) {
    const groups = new Set(compiled.groups);
    const vars = new Set(templateVars);
    const missingInPattern = [...vars].filter((v) => !groups.has(v)).sort();
    const missingInTemplate = [...groups].filter((g) => !vars.has(g)).sort();
    if (missingInPattern.length > 0) {
      add('__all__', `Group ${quoted(missingInPattern[0])} in URL template is not present in linkifier pattern.`);
    } else if (missingInTemplate.length > 0) {
      add('__all__', `Group ${quoted(missingInTemplate[0])} in linkifier pattern is not present in URL template.`);
    }
  }
  if (compiled && !fieldErrors.__all__) {
    const groups = new Set(compiled.groups);
    for (const alt of input.alternativeUrlTemplates ?? []) {
      const altVars = urlTemplateVariables(alt);
      if (altVars === null) {
        add('alternative_url_templates', 'Invalid URL template.');
        break;
      }
      const missing = altVars.filter((v) => !groups.has(v)).sort();
      if (missing.length > 0) {
        add('alternative_url_templates', `Group ${quoted(missing[0])} in URL template is not present in linkifier pattern.`);
        break;
      }
    }
    const example = input.exampleInput ?? null;
    if (example !== null) {
      if (!compiled.re.matches(example)) add('example_input', 'Example input does not match the linkifier pattern.');
    }
    const reverse = input.reverseTemplate ?? null;
    if (reverse !== null) {
      if (example === null) add('example_input', 'Example input is required for a reverse template.');
      const reverseVars = reverseTemplateVariables(reverse);
      if (reverseVars === null) add('reverse_template', 'Invalid reverse template.');
      else {
        const missing = reverseVars.filter((v) => !groups.has(v)).sort();
        if (missing.length > 0) add('reverse_template', `Group ${quoted(missing[0])} in reverse template is not present in linkifier pattern.`);
      }
    }
  }
  if (Object.keys(fieldErrors).length === 0) {
    const clash = stmt(app.db, 'SELECT id FROM linkifier WHERE realm_id = ? AND pattern = ? AND id IS NOT ?').get(realmId, input.pattern, exceptId);
    if (clash) add('__all__', 'Realm filter with this Realm and Pattern already exists.');
  }
  if (Object.keys(fieldErrors).length > 0) throw validationFailure(fieldErrors);
}

function notify(app: App, realmId: number): void {
  const list = listLinkifiers(app.db, realmId).map(formatLinkifier);
  app.batch.onCommit(() => app.events.send({ type: 'realm_linkifiers', realm_linkifiers: list }, activeUserIds(app, realmId)));
}

function requireAdmin(user: UserRow): void {
  if (!isAdmin(user)) throw errors.adminRequired();
}

const linkifierNotFound = () => errors.badRequest('Linkifier not found.');

/** POST /realm/filters: appends a linkifier; returns its id. */
export function doAddLinkifier(app: App, user: UserRow, input: LinkifierInput): number {
  requireAdmin(user);
  return app.batch.write(() => {
    checkLinkifier(app, user.realm_id, input, null);
    const { next } = stmt(app.db, 'SELECT coalesce(max("order"), -1) + 1 AS next FROM linkifier WHERE realm_id = ?').get(user.realm_id) as { next: number };
    const id = Number(
      stmt(
        app.db,
        `INSERT INTO linkifier (realm_id, pattern, url_template, example_input, reverse_template, alternative_url_templates, "order")
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        user.realm_id,
        input.pattern,
        input.urlTemplate,
        input.exampleInput ?? null,
        input.reverseTemplate ?? null,
        JSON.stringify(input.alternativeUrlTemplates ?? []),
        next,
      ).lastInsertRowid,
    );
    notify(app, user.realm_id);
    return id;
  });
}

/** PATCH /realm/filters/{id}: replaces pattern and template (and the optional fields when given). */
export function doUpdateLinkifier(app: App, user: UserRow, id: number, input: LinkifierInput): void {
  requireAdmin(user);
  app.batch.write(() => {
    const row = stmt(app.db, 'SELECT * FROM linkifier WHERE realm_id = ? AND id = ?').get(user.realm_id, id) as Record<string, unknown> | undefined;
    if (!row) throw linkifierNotFound();
    const merged: LinkifierInput = {
      pattern: input.pattern,
      urlTemplate: input.urlTemplate,
      exampleInput: input.exampleInput !== undefined ? input.exampleInput : (row.example_input as string | null),
      reverseTemplate: input.reverseTemplate !== undefined ? input.reverseTemplate : (row.reverse_template as string | null),
      alternativeUrlTemplates: input.alternativeUrlTemplates ?? (JSON.parse(String(row.alternative_url_templates)) as string[]),
    };
    checkLinkifier(app, user.realm_id, merged, id);
    stmt(
      app.db,
      `UPDATE linkifier SET pattern = ?, url_template = ?, example_input = ?, reverse_template = ?, alternative_url_templates = ? WHERE id = ?`,
    ).run(
      merged.pattern,
      merged.urlTemplate,
      merged.exampleInput ?? null,
      merged.reverseTemplate ?? null,
      JSON.stringify(merged.alternativeUrlTemplates ?? []),
      id,
    );
    notify(app, user.realm_id);
  });
}

/** DELETE /realm/filters/{id}. */
export function doRemoveLinkifier(app: App, user: UserRow, id: number): void {
  requireAdmin(user);
  app.batch.write(() => {
    const res = stmt(app.db, 'DELETE FROM linkifier WHERE realm_id = ? AND id = ?').run(user.realm_id, id);
    if (res.changes === 0) throw linkifierNotFound();
    notify(app, user.realm_id);
  });
}

/** PATCH /realm/linkifiers: the new order, naming every linkifier exactly once. */
export function doReorderLinkifiers(app: App, user: UserRow, orderedIds: number[]): void {
  requireAdmin(user);
  app.batch.write(() => {
    if (new Set(orderedIds).size !== orderedIds.length) throw errors.badRequest('The ordered list must not contain duplicated linkifiers');
    const existing = new Set(listLinkifiers(app.db, user.realm_id).map((l) => l.id));
    if (existing.size !== orderedIds.length || orderedIds.some((id) => !existing.has(id))) {
      throw errors.badRequest('The ordered list must enumerate all existing linkifiers exactly once');
    }
    orderedIds.forEach((id, i) => stmt(app.db, 'UPDATE linkifier SET "order" = ? WHERE id = ?').run(i, id));
    notify(app, user.realm_id);
  });
}
