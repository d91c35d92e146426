// Custom profile fields (administrators define them) and users' values.
// Field changes send custom_profile_fields (the whole list); value changes send realm_user updates.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { userIdsWhoCanAccess } from '../lib/access';
import { errors } from '../http/errors';
import { codePoints } from '../http/params';
import {
  checkFieldValue,
  EXTERNAL_ACCOUNTS,
  FIELD_TYPE,
  FIELD_TYPES,
  findField,
  formatField,
  isRenderable,
  listFields,
  MAX_FIELD_HINT_LENGTH,
  MAX_FIELD_NAME_LENGTH,
  MAX_SUMMARY_FIELDS,
  type ProfileFieldRow,
} from '../lib/profile-fields';
import { renderPlain } from '../lib/render';
import { getRealmById } from '../lib/realm';
import { accessUserById, findUserByDeliveryEmail, findUserByEmail, findUserById, isAdmin, isOwner, type UserRow } from '../lib/users';
import { isDeliverableEmail } from '../lib/validate';
import { activeUserIds, doUpdateUser } from './users';
import { changeDeliveryEmail } from './user-access';

function notifyFields(app: App, realmId: number): void {
  app.batch.onCommit(() =>
    app.events.send({ type: 'custom_profile_fields', fields: listFields(app.db, realmId).map(formatField) }, activeUserIds(app, realmId)),
  );
}

function fieldNotFound(id: number) {
  return errors.badRequest('Field id {id} not found.', { id });
}

/** Validates field_data for select and external account fields; returns the stored text. */
function checkFieldData(fieldType: number, data: Record<string, unknown> | undefined): string {
  if (fieldType === FIELD_TYPE.SELECT) {
    const d = data ?? {};
    if (Object.keys(d).length < 1) throw errors.badRequest('Field must have at least one choice.');
    const texts = new Set<string>();
    for (const [key, choice] of Object.entries(d)) {
      if (key.trim() === '') throw errors.badRequest("'{item}' cannot be blank.", { item: 'value' });
      const c = choice as Record<string, unknown> | null;
      if (typeof c !== 'object' || c === null || Array.isArray(c)) throw errors.badRequest('field_data["{key}"] is not a dict', { key });
      for (const k of ['text', 'order']) {
        if (typeof c[k] !== 'string') throw errors.badRequest('field_data["{key}"]["{k}"] is not a string', { key, k });
        if ((c[k] as string).trim() === '') throw errors.badRequest('field_data["{key}"]["{k}"] cannot be blank.', { key, k });
      }
      if (texts.has(c.text as string)) throw errors.badRequest('Field must not have duplicate choices.');
      texts.add(c.text as string);
    }
    return JSON.stringify(d);
  }
  if (fieldType === FIELD_TYPE.EXTERNAL_ACCOUNT) {
    const d = data ?? {};
    const subtype = d.subtype;
    if (typeof subtype !== 'string' || subtype === '') throw errors.badRequest('field_data["subtype"] cannot be blank.');
    if (subtype === 'custom') {
      const pattern = d.url_pattern;
      if (typeof pattern !== 'string' || pattern === '') throw errors.badRequest('Custom external account must define URL pattern');
      if (pattern.split('%(username)s').length !== 2) throw errors.badRequest('Malformed URL pattern.');
      return JSON.stringify({ subtype, url_pattern: pattern });
    }
    if (!Object.hasOwn(EXTERNAL_ACCOUNTS, subtype)) throw errors.badRequest('Invalid external account type');
    return JSON.stringify({ subtype });
  }
  return '';
}

function checkNameAndHint(app: App, realmId: number, name: string, hint: string, exceptId: number): void {
  if (name.trim() === '') throw errors.badRequest('Label cannot be empty.');
  if (codePoints(name) > MAX_FIELD_NAME_LENGTH) {
    throw errors.badRequest('name is too long (limit: {max_length} characters)', { max_length: MAX_FIELD_NAME_LENGTH });
  }
  if (codePoints(hint) > MAX_FIELD_HINT_LENGTH) {
    throw errors.badRequest('hint is too long (limit: {max_length} characters)', { max_length: MAX_FIELD_HINT_LENGTH });
  }
  if (stmt(app.db, 'SELECT 1 FROM custom_profile_field WHERE realm_id = ? AND name = ? COLLATE NOCASE AND id != ?').get(realmId, name, exceptId)) {
    throw errors.badRequest('A field with that label already exists.');
  }
}

function checkSummaryLimit(app: App, realmId: number, exceptId: number): void {
  const row = stmt(app.db, 'SELECT count(*) AS n FROM custom_profile_field WHERE realm_id = ? AND display_in_profile_summary = 1 AND id != ?').get(
    realmId,
    exceptId,
  ) as { n: number };
  if (row.n >= MAX_SUMMARY_FIELDS) {
    throw errors.badRequest('Only {max} custom profile fields can be displayed in the profile summary.', { max: MAX_SUMMARY_FIELDS });
  }
}

export interface NewField {
  name: string;
  hint: string;
  fieldType: number;
  fieldData?: Record<string, unknown>;
  displayInProfileSummary: boolean;
  required: boolean;
  editableByUser: boolean;
}

/** POST /realm/profile_fields → the new field's id. */
export function doCreateField(app: App, user: UserRow, spec: NewField): number {
  if (!isAdmin(user)) throw errors.adminRequired();
  return app.batch.write(() => {
    if (!FIELD_TYPES.includes(spec.fieldType)) throw errors.badRequest('Invalid field type.');
    let { name, hint } = spec;
    const fieldData = checkFieldData(spec.fieldType, spec.fieldData);
    if (spec.fieldType === FIELD_TYPE.EXTERNAL_ACCOUNT) {
      // zulip-compat: default external accounts take their name and hint from the subtype.
      const preset = EXTERNAL_ACCOUNTS[(JSON.parse(fieldData) as { subtype: string }).subtype];
      if (preset) {
        name = preset.name;
        hint = preset.hint;
      }
    }
    checkNameAndHint(app, user.realm_id, name, hint, -1);
    if (spec.displayInProfileSummary) checkSummaryLimit(app, user.realm_id, -1);
    const next = stmt(app.db, 'SELECT coalesce(max("order"), 0) + 1 AS n FROM custom_profile_field WHERE realm_id = ?').get(user.realm_id) as { n: number };
    const id = Number(
      stmt(
        app.db,
        `INSERT INTO custom_profile_field (realm_id, name, hint, field_type, field_data, "order", display_in_profile_summary, required, editable_by_user)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        user.realm_id,
        name,
        hint,
        spec.fieldType,
        fieldData,
        next.n,
        spec.displayInProfileSummary ? 1 : 0,
        spec.required ? 1 : 0,
        spec.editableByUser ? 1 : 0,
      ).lastInsertRowid,
    );
    notifyFields(app, user.realm_id);
    return id;
  });
}

export interface FieldChange {
  name?: string;
  hint?: string;
  fieldData?: Record<string, unknown>;
  displayInProfileSummary?: boolean;
  required?: boolean;
  editableByUser?: boolean;
}

/** PATCH /realm/profile_fields/{id}. */
export function doUpdateField(app: App, user: UserRow, fieldId: number, change: FieldChange): void {
  if (!isAdmin(user)) throw errors.adminRequired();
  app.batch.write(() => {
    const f = findField(app.db, user.realm_id, fieldId);
    if (!f) throw fieldNotFound(fieldId);
    const name = change.name ?? f.name;
    const hint = change.hint ?? f.hint;
    const isPreset =
      f.field_type === FIELD_TYPE.EXTERNAL_ACCOUNT && (JSON.parse(f.field_data || '{}') as { subtype?: string }).subtype !== 'custom';
    if (isPreset && (change.name !== undefined || change.hint !== undefined) && (name !== f.name || hint !== f.hint)) {
      throw errors.badRequest('Default custom field cannot be updated.');
    }
    checkNameAndHint(app, user.realm_id, name, hint, f.id);
    const fieldData = change.fieldData !== undefined ? checkFieldData(f.field_type, change.fieldData) : f.field_data;
    if (change.displayInProfileSummary && !f.display_in_profile_summary) checkSummaryLimit(app, user.realm_id, f.id);
    const flag = (v: boolean | undefined, old: number) => (v === undefined ? old : v ? 1 : 0);
    stmt(
      app.db,
      'UPDATE custom_profile_field SET name = ?, hint = ?, field_data = ?, display_in_profile_summary = ?, required = ?, editable_by_user = ? WHERE id = ?',
    ).run(
      name,
      hint,
      fieldData,
      flag(change.displayInProfileSummary, f.display_in_profile_summary),
      flag(change.required, f.required),
      flag(change.editableByUser, f.editable_by_user),
      f.id,
    );
    if (f.field_type === FIELD_TYPE.SELECT && change.fieldData !== undefined) {
      // Values pointing at removed choices go, as in Zulip.
      const keys = Object.keys(change.fieldData);
      const rows = stmt(app.db, 'SELECT user_id, value FROM custom_profile_field_value WHERE field_id = ?').all(f.id) as { user_id: number; value: string }[];
      for (const r of rows) if (!keys.includes(r.value)) removeValue(app, f, r.user_id);
    }
    notifyFields(app, user.realm_id);
  });
}

/** DELETE /realm/profile_fields/{id} (values go with it). */
export function doDeleteField(app: App, user: UserRow, fieldId: number): void {
  if (!isAdmin(user)) throw errors.adminRequired();
  app.batch.write(() => {
    const f = findField(app.db, user.realm_id, fieldId);
    if (!f) throw fieldNotFound(fieldId);
    stmt(app.db, 'DELETE FROM custom_profile_field_value WHERE field_id = ?').run(f.id);
    stmt(app.db, 'DELETE FROM custom_profile_field WHERE id = ?').run(f.id);
    notifyFields(app, user.realm_id);
  });
}

/** PATCH /realm/profile_fields: `order` lists every field id once. */
export function doReorderFields(app: App, user: UserRow, order: number[]): void {
  if (!isAdmin(user)) throw errors.adminRequired();
  app.batch.write(() => {
    const ids = listFields(app.db, user.realm_id).map((f) => f.id);
    const given = new Set(order);
    if (given.size !== order.length || order.length !== ids.length || !ids.every((id) => given.has(id))) {
      throw errors.badRequest('Invalid order mapping.');
    }
    const set = stmt(app.db, 'UPDATE custom_profile_field SET "order" = ? WHERE id = ?');
    order.forEach((id, i) => set.run(i + 1, id));
    notifyFields(app, user.realm_id);
  });
}

function removeValue(app: App, f: ProfileFieldRow, userId: number): void {
  const res = stmt(app.db, 'DELETE FROM custom_profile_field_value WHERE user_id = ? AND field_id = ?').run(userId, f.id);
  if (res.changes === 0) return;
  app.batch.onCommit(() =>
    app.events.send(
      { type: 'realm_user', op: 'update', person: { user_id: userId, custom_profile_field: { id: f.id, value: null } } },
      userIdsWhoCanAccess(app.db, findUserById(app.db, f.realm_id, userId) as UserRow),
    ),
  );
}

export interface ProfileDataEntry {
  id: number;
  value: string | number[] | null;
}

const isEmpty = (v: ProfileDataEntry['value']) => v === null || v === '' || (Array.isArray(v) && v.length === 0);

/**
 * Sets (or, for null/empty values, clears) the target's values. Users other than administrators may
 * not change fields that are not editable_by_user. Must run inside a write.
 */
export function updateProfileData(app: App, acting: UserRow, target: UserRow, data: ProfileDataEntry[]): void {
  const checked: { f: ProfileFieldRow; value: string | null }[] = [];
  for (const entry of data) {
    const f = findField(app.db, target.realm_id, entry.id);
    if (!f) throw fieldNotFound(entry.id);
    if (!f.editable_by_user && !isAdmin(acting)) {
      throw errors.badRequest('You are not allowed to change this field. Contact an administrator to update it.');
    }
    checked.push({ f, value: isEmpty(entry.value) ? null : checkFieldValue(app.db, target.realm_id, f, entry.value) });
  }
  const put = stmt(
    app.db,
    `INSERT INTO custom_profile_field_value (user_id, field_id, value, rendered_value) VALUES (?, ?, ?, ?)
     ON CONFLICT (user_id, field_id) DO UPDATE SET value = excluded.value, rendered_value = excluded.rendered_value`,
  );
  for (const { f, value } of checked) {
    if (value === null) {
      removeValue(app, f, target.id);
      continue;
    }
    const old = stmt(app.db, 'SELECT value FROM custom_profile_field_value WHERE user_id = ? AND field_id = ?').get(target.id, f.id) as
      | { value: string }
      | undefined;
    if (old?.value === value) continue;
    const rendered = isRenderable(f.field_type) ? renderPlain(app, target.realm_id, value) : null;
    put.run(target.id, f.id, value, rendered);
    const field: Record<string, unknown> = { id: f.id, value };
    if (rendered !== null) field.rendered_value = rendered;
    app.batch.onCommit(() =>
      app.events.send({ type: 'realm_user', op: 'update', person: { user_id: target.id, custom_profile_field: field } }, userIdsWhoCanAccess(app.db, target)),
    );
  }
}

/** PATCH /users/me/profile_data. */
export function doUpdateOwnProfileData(app: App, user: UserRow, data: ProfileDataEntry[]): void {
  app.batch.write(() => updateProfileData(app, user, user, data));
}

/** DELETE /users/me/profile_data: clears the listed fields. */
export function doRemoveOwnProfileData(app: App, user: UserRow, ids: number[]): void {
  app.batch.write(() => updateProfileData(app, user, user, ids.map((id) => ({ id, value: null }))));
}

export interface AdminUserChange {
  fullName?: string;
  role?: number;
  profileData?: ProfileDataEntry[];
  newEmail?: string;
}

/**
 * PATCH /users/{id}: name and role (doUpdateUser), then profile data and the email, all in one
 * write so that a refused part leaves nothing changed.
 */
export function doUpdateUserByAdmin(app: App, acting: UserRow, targetId: number, change: AdminUserChange): void {
  if (!isAdmin(acting)) throw errors.adminRequired();
  app.batch.write(() => {
    if (change.newEmail !== undefined) {
      const realm = getRealmById(app.db, acting.realm_id);
      if (!isOwner(acting) || !realm?.can_change_user_emails) throw errors.badRequest('User not authorized to change user emails');
    }
    doUpdateUser(app, acting, targetId, { fullName: change.fullName, role: change.role });
    const target = accessUserById(app.db, acting, targetId, { allowDeactivated: true, allowBots: true, forAdmin: true });
    if (change.profileData !== undefined) updateProfileData(app, acting, target, change.profileData);
    if (change.newEmail !== undefined && change.newEmail !== target.delivery_email) {
      const email = change.newEmail.trim();
      if (!isDeliverableEmail(email)) throw errors.badRequest('Invalid new email address.');
      const other = findUserByDeliveryEmail(app.db, target.realm_id, email) ?? findUserByEmail(app.db, target.realm_id, email);
      if (other && other.id !== target.id) throw errors.badRequest('New email value error: Already has an account.');
      changeDeliveryEmail(app, target, email);
    }
  });
}
