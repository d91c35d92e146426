// Unauthenticated bootstrap endpoints: server settings and fetching an API key with a password.
import { doRecordLogin } from '../actions/login';
import { checkAccountActive, checkLoginAttempts, recordFailedLogin } from '../http/auth';
import { errors } from '../http/errors';
import { p } from '../http/params';
import { publicRoute } from '../http/route';
import { absoluteUrl, realmIconUrl } from '../lib/avatars';
import { findRealm } from '../lib/realm';
import { checkPassword } from '../lib/secrets';
import { findUserByDeliveryEmail } from '../lib/users';
import { isValidEmail } from '../lib/validate';
import { ZULIP_FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION } from '../version';

export const serverRoutes = [
  publicRoute({
    method: 'GET',
    path: '/api/v1/server_settings',
    handle({ app }) {
      const realm = findRealm(app.db);
      return {
        authentication_methods: {
          password: true,
          dev: false,
          email: true,
          ldap: false,
          remoteuser: false,
          github: false,
          azuread: false,
          gitlab: false,
          apple: false,
          google: false,
          saml: false,
          'openid connect': false,
        },
        external_authentication_methods: [],
        zulip_feature_level: ZULIP_FEATURE_LEVEL,
        zulip_version: ZULIP_VERSION,
        zulip_merge_base: ZULIP_MERGE_BASE,
        push_notifications_enabled: app.config.pushService !== null,
        is_incompatible: false,
        email_auth_enabled: true,
        require_email_format_usernames: true,
        realm_url: app.publicUrl,
        realm_uri: app.publicUrl,
        realm_name: realm?.name ?? '',
        // zulip-compat: an absolute URL here (server_settings is read before the client knows the realm).
        realm_icon: absoluteUrl(app.publicUrl, realmIconUrl(app.publicUrl, realm)),
        realm_description: realm?.description ?? '',
        realm_web_public_access_enabled: false,
      };
    },
  }),
  publicRoute({
    method: 'POST',
    path: '/api/v1/fetch_api_key',
    params: { username: p.str(), password: p.str() },
    handle({ app, params }) {
      if (!isValidEmail(params.username)) throw errors.badRequest('Enter a valid email address.');
      checkLoginAttempts(app, params.username);
      const user = findUserByDeliveryEmail(app.db, app.realmId(), params.username);
      // The same answer for an unknown address and a wrong password; bcrypt runs either way.
      const ok = checkPassword(params.password, user?.password_hash ?? null);
      if (!user || !ok) {
        recordFailedLogin(app, params.username);
        throw errors.authenticationFailed();
      }
      checkAccountActive(app, user);
      doRecordLogin(app, user);
      return { api_key: user.api_key, email: user.delivery_email, user_id: user.id };
    },
  }),
];
