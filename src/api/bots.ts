// Bots: POST/GET /bots, PATCH/DELETE /bots/{id}, API key regeneration.
import * as v from 'valibot';
import { doCreateBotWithAvatar, doUpdateBotWithAvatar } from '../actions/avatars';
import { doDeactivateBot, doRegenerateBotApiKey, listBots } from '../actions/bots';
import { errors } from '../http/errors';
import { p, zInt } from '../http/params';
import { route } from '../http/route';

/** A parameter decoded as JSON when it is JSON: a string, or Zulip's "is not a string". */
function jsonString(value: unknown, name: string): string | undefined {
  if (value === undefined || typeof value === 'string') return value;
  throw errors.badRequest('{var_name} is not a string', { var_name: name });
}

export const botRoutes = [
  route({
    method: 'POST',
    path: '/api/v1/bots',
    auth: 'user',
    // An optional avatar image (multipart).
    files: true,
    params: {
      full_name: p.str(),
      short_name: p.str(),
      bot_type: p.int().default(1),
      payload_url: p.str().default(''),
      interface_type: p.int().default(1),
      service_name: p.str().optional(),
      config_data: p.json(v.record(v.string(), v.string('{var_name} is not a string'))).default({}),
      default_sending_stream: p.str().optional(),
      default_events_register_stream: p.str().optional(),
      default_all_public_streams: p.bool().optional(),
    },
    handle: ({ app, user, params, files }) =>
      doCreateBotWithAvatar(app, user, {
        fullName: params.full_name,
        shortName: params.short_name,
        botType: params.bot_type,
        payloadUrl: params.payload_url,
        interfaceType: params.interface_type,
        serviceName: params.service_name,
        configData: params.config_data,
        defaultSendingStream: params.default_sending_stream,
        defaultEventsRegisterStream: params.default_events_register_stream,
        defaultAllPublicStreams: params.default_all_public_streams,
      }, files),
  }),
  route({
    method: 'GET',
    path: '/api/v1/bots',
    auth: 'user',
    handle: ({ app, user }) => ({ bots: listBots(app, user) }),
  }),
  route({
    method: 'PATCH',
    path: '/api/v1/bots/{bot_id:int}',
    auth: 'user',
    // An optional new avatar image (multipart).
    files: true,
    params: {
      full_name: p.str().optional(),
      bot_owner_id: p.json(zInt()).optional(),
      role: p.json(zInt()).optional(),
      default_sending_stream: p.str().optional(),
      default_events_register_stream: p.str().optional(),
      default_all_public_streams: p.bool().optional(),
      // Zulip takes it JSON-encoded (its web app sends JSON.stringify(url)); a bare URL is taken too.
      service_payload_url: p.jsonOrStr(v.unknown()).optional(),
      service_interface: p.int().optional(),
    },
    handle: ({ app, user, params, path, files }) =>
      doUpdateBotWithAvatar(app, user, Number(path.bot_id), {
        fullName: params.full_name,
        botOwnerId: params.bot_owner_id,
        role: params.role,
        defaultSendingStream: params.default_sending_stream,
        defaultEventsRegisterStream: params.default_events_register_stream,
        defaultAllPublicStreams: params.default_all_public_streams,
        servicePayloadUrl: jsonString(params.service_payload_url, 'service_payload_url'),
        serviceInterface: params.service_interface,
      }, files),
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/bots/{bot_id:int}',
    auth: 'user',
    handle({ app, user, path }) {
      doDeactivateBot(app, user, Number(path.bot_id));
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/api/v1/bots/{bot_id:int}/api_key/regenerate',
    auth: 'user',
    handle: ({ app, user, path }) => ({ api_key: doRegenerateBotApiKey(app, user, Number(path.bot_id)) }),
  }),
];
