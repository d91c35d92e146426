// Custom profile fields: the organization's field definitions and the caller's own values.
import * as v from 'valibot';
import { doCreateField, doDeleteField, doRemoveOwnProfileData, doReorderFields, doUpdateField, doUpdateOwnProfileData } from '../actions/profile-fields';
import { p, zInt } from '../http/params';
import { route } from '../http/route';
import { formatField, listFields, profileDataSchema } from '../lib/profile-fields';

const fieldData = () =>
  p.json(
    v.pipe(
      v.custom<Record<string, unknown>>((x) => typeof x === 'object' && x !== null && !Array.isArray(x), '{var_name} is not a dict'),
      v.record(v.string(), v.unknown()),
    ),
  );

export const profileFieldRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/realm/profile_fields',
    auth: 'user',
    handle: ({ app, user }) => ({ custom_fields: listFields(app.db, user.realm_id).map(formatField) }),
  }),
  route({
    method: 'POST',
    path: '/api/v1/realm/profile_fields',
    auth: 'user',
    requires: 'admin',
    params: {
      name: p.str().default(''),
      hint: p.str().default(''),
      field_type: p.int().default(1),
      field_data: fieldData().optional(),
      display_in_profile_summary: p.bool().default(false),
      required: p.bool().default(false),
      editable_by_user: p.bool().default(true),
    },
    handle: ({ app, user, params }) => ({
      id: doCreateField(app, user, {
        name: params.name,
        hint: params.hint,
        fieldType: params.field_type,
        fieldData: params.field_data,
        displayInProfileSummary: params.display_in_profile_summary,
        required: params.required,
        editableByUser: params.editable_by_user,
      }),
    }),
  }),
  route({
    method: 'PATCH',
    path: '/api/v1/realm/profile_fields',
    auth: 'user',
    requires: 'admin',
    params: { order: p.json(v.array(zInt())) },
    handle({ app, user, params }) {
      doReorderFields(app, user, params.order);
      return {};
    },
  }),
  route({
    method: 'PATCH',
    path: '/api/v1/realm/profile_fields/{field_id:int}',
    auth: 'user',
    requires: 'admin',
    params: {
      name: p.str().optional(),
      hint: p.str().optional(),
      field_data: fieldData().optional(),
      display_in_profile_summary: p.bool().optional(),
      required: p.bool().optional(),
      editable_by_user: p.bool().optional(),
    },
    handle({ app, user, params, path }) {
      doUpdateField(app, user, Number(path.field_id), {
        name: params.name,
        hint: params.hint,
        fieldData: params.field_data,
        displayInProfileSummary: params.display_in_profile_summary,
        required: params.required,
        editableByUser: params.editable_by_user,
      });
      return {};
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/realm/profile_fields/{field_id:int}',
    auth: 'user',
    requires: 'admin',
    handle({ app, user, path }) {
      doDeleteField(app, user, Number(path.field_id));
      return {};
    },
  }),
  route({
    method: 'PATCH',
    path: '/api/v1/users/me/profile_data',
    auth: 'user',
    params: { data: p.json(profileDataSchema) },
    handle({ app, user, params }) {
      doUpdateOwnProfileData(app, user, params.data);
      return {};
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/users/me/profile_data',
    auth: 'user',
    params: { data: p.json(v.array(zInt())) },
    handle({ app, user, params }) {
      doRemoveOwnProfileData(app, user, params.data);
      return {};
    },
  }),
];
