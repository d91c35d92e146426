// PATCH /realm/user_settings_defaults: the organization's defaults for new users' personal settings.
import { doUpdateRealmUserDefaults, REALM_DEFAULT_SETTINGS } from '../actions/realm-defaults';
import { route } from '../http/route';
import { settingParamsFor } from './settings';
import { realmUserSettingsDefaults } from '../events/state';

const params = settingParamsFor(REALM_DEFAULT_SETTINGS);

export const realmDefaultsRoutes = [
  route({
    method: 'PATCH',
    path: '/api/v1/realm/user_settings_defaults',
    auth: 'user',
    requires: 'admin',
    params,
    handle({ app, user, params: values }) {
      const settings: Record<string, unknown> = {};
      for (const name of Object.keys(REALM_DEFAULT_SETTINGS)) {
        let value = (values as Record<string, unknown>)[name];
        if (value === undefined) continue;
        if (name === 'web_home_view' && value === 'recent_topics') value = 'recent';
        settings[name] = value;
      }
      doUpdateRealmUserDefaults(app, user, settings, (realmId) => realmUserSettingsDefaults(app.db, realmId));
      return {};
    },
  }),
];
