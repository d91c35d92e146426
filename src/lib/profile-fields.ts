// Custom profile fields: types, the API dictionary, and value validation per field type (Zulip's
// CustomProfileField.FIELD_VALIDATORS and friends).
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';
import { errors } from '../http/errors';
import * as v from 'valibot';
import { codePoints, zInt } from '../http/params';
import { NOT_SYSTEM_BOT_SQL } from './users';

export const FIELD_TYPE = {
  SHORT_TEXT: 1,
  LONG_TEXT: 2,
  SELECT: 3,
  DATE: 4,
  URL: 5,
  USER: 6,
  EXTERNAL_ACCOUNT: 7,
  PRONOUNS: 8,
} as const;
export const FIELD_TYPES: readonly number[] = Object.values(FIELD_TYPE);

/** Zulip renders short and long text values as Markdown (CustomProfileField.is_renderable). */
export const isRenderable = (fieldType: number) => fieldType === FIELD_TYPE.SHORT_TEXT || fieldType === FIELD_TYPE.LONG_TEXT;

export const MAX_FIELD_NAME_LENGTH = 40;
export const MAX_FIELD_HINT_LENGTH = 80;
export const MAX_SUMMARY_FIELDS = 2;

/** Default external account subtypes (Zulip's DEFAULT_EXTERNAL_ACCOUNTS). */
export const EXTERNAL_ACCOUNTS: Record<string, { name: string; hint: string; url_pattern: string }> = {
  github: { name: 'GitHub', hint: 'Enter your GitHub username', url_pattern: 'https://github.com/%(username)s' },
  twitter: { name: 'Twitter', hint: 'Enter your Twitter username', url_pattern: 'https://twitter.com/%(username)s' },
};

export interface ProfileFieldRow {
  id: number;
  realm_id: number;
  name: string;
  hint: string;
  field_type: number;
  field_data: string;
  order: number;
  display_in_profile_summary: number;
  required: number;
  editable_by_user: number;
}

export function findField(db: Db, realmId: number, id: number): ProfileFieldRow | null {
  return (stmt(db, 'SELECT * FROM custom_profile_field WHERE realm_id = ? AND id = ?').get(realmId, id) as ProfileFieldRow | undefined) ?? null;
}

/** The realm's fields in display order. */
export function listFields(db: Db, realmId: number): ProfileFieldRow[] {
  return stmt(db, 'SELECT * FROM custom_profile_field WHERE realm_id = ? ORDER BY "order", id').all(realmId) as ProfileFieldRow[];
}

/** The API dictionary of a field (GET /realm/profile_fields, register, custom_profile_fields events). */
export function formatField(f: ProfileFieldRow): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: f.id,
    name: f.name,
    type: f.field_type,
    hint: f.hint,
    field_data: f.field_data,
    order: f.order,
    required: f.required === 1,
    editable_by_user: f.editable_by_user === 1,
  };
  if (f.display_in_profile_summary) out.display_in_profile_summary = true;
  return out;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

function isUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * Checks a value for a field and returns the stored string (user lists as JSON text), in Zulip's
 * wording with the field's name as the variable name.
 */
export function checkFieldValue(db: Db, realmId: number, f: ProfileFieldRow, value: unknown): string {
  const name = f.name;
  if (f.field_type === FIELD_TYPE.USER) {
    if (!Array.isArray(value)) throw errors.badRequest('{var_name} is not a list', { var_name: name });
    const ids: number[] = [];
    for (const [i, id] of value.entries()) {
      if (typeof id !== 'number' || !Number.isInteger(id)) throw errors.badRequest('{var_name}[{i}] is not an integer', { var_name: name, i });
      const u = stmt(db, `SELECT is_active FROM user u WHERE realm_id = ? AND id = ? AND ${NOT_SYSTEM_BOT_SQL}`).get(realmId, id) as { is_active: number } | undefined;
      if (!u || !u.is_active) throw errors.badRequest('Invalid user ID: {user_id}', { user_id: id });
      if (!ids.includes(id)) ids.push(id);
    }
    return JSON.stringify(ids);
  }
  if (typeof value !== 'string') throw errors.badRequest('{var_name} is not a string', { var_name: name });
  const max = f.field_type === FIELD_TYPE.LONG_TEXT ? 500 : 50;
  switch (f.field_type) {
    case FIELD_TYPE.SHORT_TEXT:
    case FIELD_TYPE.LONG_TEXT:
    case FIELD_TYPE.EXTERNAL_ACCOUNT:
    case FIELD_TYPE.PRONOUNS:
      if (codePoints(value) > max) throw errors.badRequest('{var_name} is too long (limit: {max_length} characters)', { var_name: name, max_length: max });
      return value;
    case FIELD_TYPE.DATE:
      if (!DATE.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`)) || new Date(`${value}T00:00:00Z`).toISOString().slice(0, 10) !== value) {
        throw errors.badRequest('{var_name} is not a date', { var_name: name });
      }
      return value;
    case FIELD_TYPE.URL:
      if (!isUrl(value)) throw errors.badRequest('{var_name} is not a URL', { var_name: name });
      return value;
    case FIELD_TYPE.SELECT: {
      const choices = JSON.parse(f.field_data || '{}') as Record<string, unknown>;
      if (!Object.hasOwn(choices, value)) {
        throw errors.badRequest("'{value}' is not a valid choice for '{field_name}'.", { value, field_name: name });
      }
      return value;
    }
    default:
      return value;
  }
}

/** A profile_data list: [{id, value}] with value a string, a list of user ids, or null (clear). */
export const profileDataSchema = v.array(
  v.strictObject({
    id: zInt(),
    value: v.nullable(v.union([v.string(), v.array(zInt())], '{var_name} is not a string or a list')),
  }),
);
