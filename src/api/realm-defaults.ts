// PATCH /realm/user_settings_defaults: the organization's defaults for new users' personal settings.
import * as v from 'valibot';
import { doUpdateRealmUserDefaults, REALM_DEFAULT_SETTINGS } from '../actions/realm-defaults';
import { p, zInt, type Param } from '../http/params';
import { route } from '../http/route';
import { realmUserSettingsDefaults } from '../events/state';

const NOT_IN_LIST = 'Invalid {var_name}: Value error, Not in the list of possible values';

/** The parameter of one setting, typed as PATCH /settings types it. */
function settingParam(name: string): Param<unknown> {
  const def = REALM_DEFAULT_SETTINGS[name];
  if (def.type === 'bool') return p.bool().optional();
  if (def.type === 'int') {
    if (!def.values) return p.int().optional();
    const allowed = def.values;
    return p.json(v.pipe(zInt(), v.check((n) => allowed.includes(n), NOT_IN_LIST))).optional();
  }
  if (!def.values) return p.str().optional();
  // zulip-compat: web_home_view "recent_topics" is the name before feature level 454.
  const allowed = name === 'web_home_view' ? [...def.values, 'recent_topics'] : def.values;
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

const params: Record<string, Param<unknown>> = {};
for (const name of Object.keys(REALM_DEFAULT_SETTINGS)) params[name] = settingParam(name);

export const realmDefaultsRoutes = [
  route({
    method: 'PATCH',
    path: '/api/v1/realm/user_settings_defaults',
    auth: 'user',
    params,
    handle({ app, user, params: values }) {
      const settings: Record<string, unknown> = {};
      for (const name of Object.keys(REALM_DEFAULT_SETTINGS)) {
        let value = (values as Record<string, unknown>)[name];
        if (value === undefined) continue;
        if (name === 'web_home_view' && value === 'recent_topics') value = 'recent';
        settings[name] = value;
      }
      doUpdateRealmUserDefaults(app, user, settings, (realmId) => realmUserSettingsDefaults(app, realmId));
      return {};
    },
  }),
];
