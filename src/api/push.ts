// Mobile push: client devices (registration, removal), E2EE push registration, the legacy token endpoints,
// test notifications, and API key regeneration (which drops the E2EE registrations).
import {
  doAddLegacyToken,
  doRegisterClientDevice,
  doRegisterPushDevice,
  doRemoveClientDevice,
  doRemoveLegacyToken,
  doSendE2eeTestNotification,
  doSendTestNotification,
} from '../actions/push';
import { doRegenerateApiKey } from '../actions/users';
import { p } from '../http/params';
import { route } from '../http/route';

export const pushRoutes = [
  route({
    method: 'POST',
    path: '/api/v1/register_client_device',
    auth: 'user',
    handle: ({ app, user }) => ({ device_id: doRegisterClientDevice(app, user) }),
  }),
  route({
    method: 'POST',
    path: '/api/v1/remove_client_device',
    auth: 'user',
    params: { device_id: p.int() },
    handle({ app, user, params }) {
      doRemoveClientDevice(app, user, params.device_id);
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/api/v1/mobile_push/register',
    auth: 'user',
    params: {
      device_id: p.int(),
      push_key_id: p.int({ min: 0, max: 2 ** 32 - 1 }).optional(),
      push_key: p.str().optional(),
      token_kind: p.oneOf(['fcm', 'apns'] as const).optional(),
      token_id: p.str().optional(),
      bouncer_public_key: p.str().optional(),
      encrypted_push_registration: p.str().optional(),
    },
    handle({ app, user, params }) {
      doRegisterPushDevice(app, user, {
        deviceId: params.device_id,
        pushKeyId: params.push_key_id,
        pushKey: params.push_key,
        tokenKind: params.token_kind,
        tokenId: params.token_id,
        bouncerPublicKey: params.bouncer_public_key,
        encryptedPushRegistration: params.encrypted_push_registration,
      });
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/api/v1/mobile_push/test_notification',
    auth: 'user',
    params: { token: p.str().optional() },
    async handle({ app, user, params }) {
      await doSendTestNotification(app, user, params.token ?? null);
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/api/v1/mobile_push/e2ee/test_notification',
    auth: 'user',
    params: { device_id: p.int().optional() },
    async handle({ app, user, params }) {
      await doSendE2eeTestNotification(app, user, params.device_id ?? null);
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/api/v1/users/me/android_gcm_reg_id',
    auth: 'user',
    params: { token: p.str() },
    handle({ app, user, params }) {
      doAddLegacyToken(app, user, 'fcm', params.token, null);
      return {};
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/users/me/android_gcm_reg_id',
    auth: 'user',
    params: { token: p.str() },
    handle({ app, user, params }) {
      doRemoveLegacyToken(app, user, 'fcm', params.token);
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/api/v1/users/me/apns_device_token',
    auth: 'user',
    params: { token: p.str(), appid: p.str() },
    handle({ app, user, params }) {
      doAddLegacyToken(app, user, 'apns', params.token, params.appid);
      return {};
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/users/me/apns_device_token',
    auth: 'user',
    params: { token: p.str() },
    handle({ app, user, params }) {
      doRemoveLegacyToken(app, user, 'apns', params.token);
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/api/v1/users/me/api_key/regenerate',
    auth: 'user',
    handle: ({ app, user }) => ({ api_key: doRegenerateApiKey(app, user) }),
  }),
];
