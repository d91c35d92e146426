// Zulip's /static/ URLs that clients fetch without credentials: the standard emoji table
// (`server_emoji_data_url`; the mobile app has no standard emoji until it loads) and the built-in
// images (the default organization icon and logo, the :zulip: emoji, the avatar of a user one may
// not see).
import { Reply, publicRoute } from '../http/route';
import { errors } from '../http/errors';
import { emojiApiFile, staticImage } from '../lib/static-files';

const IMMUTABLE = 'public, max-age=31536000, immutable';

/** A built-in PNG, cached for a day (its name is not versioned), or a 404. */
function imageReply(name: string): Reply {
  const body = staticImage(name);
  if (!body) throw errors.notFound();
  return new Reply(200, { 'Content-Type': 'image/png', 'Cache-Control': 'public, max-age=86400', 'X-Content-Type-Options': 'nosniff' }, body);
}

export const staticFileRoutes = [
  publicRoute({
    // emoji_api.<hash>.json is what /register names (never changes); emoji_api.json, Zulip's
    // unversioned name, is kept for clients that build the URL themselves, cached for a day.
    method: 'GET',
    path: '/static/generated/emoji/{file}',
    handle({ path, headers }) {
      const file = emojiApiFile();
      const versioned = path.file === `emoji_api.${file.hash}.json`;
      if (!versioned && path.file !== 'emoji_api.json') throw errors.notFound();
      const gzip = /\bgzip\b/.test(headers['accept-encoding'] ?? '');
      return new Reply(
        200,
        {
          'Content-Type': 'application/json',
          'Cache-Control': versioned ? IMMUTABLE : 'public, max-age=86400',
          'Access-Control-Allow-Origin': '*',
          'X-Content-Type-Options': 'nosniff',
          Vary: 'Accept-Encoding',
          ...(gzip ? { 'Content-Encoding': 'gzip' } : {}),
        },
        gzip ? file.gzip : file.body,
      );
    },
  }),
  publicRoute({
    // zulip-compat: the :zulip: emoji (Zulip's logo in Zulip) is Parley's icon.
    method: 'GET',
    path: '/static/generated/emoji/images/emoji/unicode/zulip.png',
    handle: () => imageReply('default-realm-icon.png'),
  }),
  publicRoute({
    // The organization logo Zulip's clients are given when none was uploaded (realm_logo_url).
    method: 'GET',
    path: '/static/images/logo/{file}',
    handle: ({ path }) => imageReply(path.file === 'default-realm-logo.png' ? 'default-realm-icon.png' : ''),
  }),
  publicRoute({
    method: 'GET',
    path: '/static/images/{file}',
    handle: ({ path }) => imageReply(path.file),
  }),
];
