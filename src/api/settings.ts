// PATCH /settings (and its deprecated aliases) and the email-change confirmation page.
import * as v from 'valibot';
import { doChangeSettings, doConfirmEmailChange, type EmailConfirmResult } from '../actions/settings';
import { p, zInt, type Param } from '../http/params';
import { publicRoute, Reply, route, type AnyRoute } from '../http/route';
import { SETTINGS, type SettingDef } from '../lib/settings';

const NOT_IN_LIST = 'Invalid {var_name}: Value error, Not in the list of possible values';

/** The parameter of one personal setting, typed and checked as Zulip's PATCH /settings does. */
function settingParam(name: string, def: SettingDef): Param<unknown> {
  if (def.type === 'bool') return p.bool().optional();
  if (def.type === 'int') {
    if (!def.values) return p.int().optional();
    const allowed = def.values as readonly number[];
    return p.json(v.pipe(zInt(), v.check((n) => allowed.includes(n), NOT_IN_LIST))).optional();
  }
  if (!def.values) return p.str().optional();
  // zulip-compat: web_home_view "recent_topics" is the name before feature level 454.
  const allowed = (name === 'web_home_view' ? [...def.values, 'recent_topics'] : def.values) as readonly string[];
  return rawEnum(p.json(v.pipe(v.string(), v.check((s) => allowed.includes(s), NOT_IN_LIST))).optional() as Param<unknown>);
}

/** Raw-string enumerations: Zulip reads them unencoded, so wrap the JSON schema around the raw value. */
function rawEnum(param: Param<unknown>): Param<unknown> {
  return {
    ...param,
    required: false,
    aliases: [],
    defaultValue: undefined,
    parse: (raw: string, name: string) => param.parse(JSON.stringify(raw), name),
    optional: () => rawEnum(param),
    default: () => rawEnum(param),
    alias: () => rawEnum(param),
  };
}

/** Parameters for the settings described by `defs` (PATCH /settings, the organization's defaults). */
export function settingParamsFor(defs: Readonly<Record<string, SettingDef>>): Record<string, Param<unknown>> {
  return Object.fromEntries(Object.entries(defs).map(([name, def]) => [name, settingParam(name, def)]));
}

const settingParams = settingParamsFor(SETTINGS);

const targetUsersSchema = v.pipe(
  v.unknown(),
  // valibot takes arrays for objects; Zulip does not.
  v.check((x) => typeof x === 'object' && x !== null && !Array.isArray(x), '{var_name} is not a dict'),
  v.strictObject({
    user_ids: v.optional(v.array(zInt())),
    group_ids: v.optional(v.array(zInt())),
    skip_if_already_edited: v.optional(v.boolean('{var_name} is not a boolean')),
  }),
);

const params = {
  full_name: p.str().optional(),
  email: p.str().optional(),
  old_password: p.str().optional(),
  new_password: p.str().optional(),
  target_users: p.json(targetUsersSchema).optional(),
  ...settingParams,
};

function settingsRoute(path: string): AnyRoute {
  return route({
    method: 'PATCH',
    path,
    auth: 'user',
    params,
    handle({ app, user, params: values, ignore, sessionToken }) {
      const settings: Record<string, unknown> = {};
      for (const name of Object.keys(SETTINGS)) {
        let value = (values as Record<string, unknown>)[name];
        if (value === undefined) continue;
        if (name === 'web_home_view' && value === 'recent_topics') value = 'recent';
        settings[name] = value;
      }
      doChangeSettings(
        app,
        user,
        {
          fullName: values.full_name,
          email: values.email,
          oldPassword: values.old_password,
          newPassword: values.new_password,
          sessionToken,
          settings,
          targetUsers: values.target_users,
        },
        ignore,
      );
      return {};
    },
  });
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(status: number, title: string, body: string): Reply {
  const html =
    `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>` +
    `<meta name="viewport" content="width=device-width, initial-scale=1"></head>` +
    `<body><main><h1>${esc(title)}</h1>${body}</main></body></html>\n`;
  return new Reply(status, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' }, html);
}

const FAILURES: Record<Exclude<EmailConfirmResult, { ok: true }>['reason'], [number, string, string]> = {
  invalid: [404, 'Invalid confirmation link', 'This confirmation link is not valid. Check that you copied the whole link.'],
  expired: [404, 'Confirmation link expired', 'This confirmation link has expired. Request the email change again from your settings.'],
  used: [404, 'Confirmation link already used', 'This confirmation link has already been used.'],
  taken: [400, 'Email address already in use', 'Another account now uses this email address, so the change was not made.'],
  deactivated: [400, 'Account deactivated', 'The account this change belongs to is deactivated.'],
  disabled: [400, 'Email address changes disabled', 'Email address changes are disabled in this organization.'],
};

export const settingsRoutes: AnyRoute[] = [
  settingsRoute('/api/v1/settings'),
  // Deprecated aliases (before feature level 80 these took notification and display settings).
  settingsRoute('/api/v1/settings/notifications'),
  settingsRoute('/api/v1/settings/display'),
  publicRoute({
    method: 'GET',
    path: '/accounts/confirm_new_email/{key}',
    handle({ app, path }) {
      const r = doConfirmEmailChange(app, path.key);
      if (!r.ok) {
        const [status, title, text] = FAILURES[r.reason];
        return page(status, title, `<p>${esc(text)}</p>`);
      }
      return page(
        200,
        'Email address changed',
        `<p>Your email address is now <strong>${esc(r.newEmail)}</strong> (it was ${esc(r.oldEmail)}).</p>` +
          `<p>Use the new address to log in from now on.</p>`,
      );
    },
  }),
];
