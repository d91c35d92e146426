// Custom emoji: GET /realm/emoji, POST/DELETE /realm/emoji/{emoji_name}, and the image files.
import fs from 'node:fs';
import { doAddRealmEmoji, doDeactivateRealmEmoji, EMOJI_TYPES, emojiFilePath } from '../actions/realm-emoji';
import { listRealmEmoji } from '../lib/realm-emoji';
import { FileReply, Reply, route } from '../http/route';

const notFound = () => new Reply(404, { 'Content-Type': 'text/html; charset=utf-8' }, '<p>File not found.</p>');

export const realmEmojiRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/realm/emoji',
    auth: 'user',
    handle: ({ app, user }) => ({ emoji: listRealmEmoji(app.db, user.realm_id) }),
  }),
  route({
    method: 'POST',
    path: '/api/v1/realm/emoji/{emoji_name}',
    auth: 'user',
    files: true,
    handle({ app, user, path, files }) {
      doAddRealmEmoji(app, user, path.emoji_name, { files });
      return {};
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/realm/emoji/{emoji_name}',
    auth: 'user',
    handle({ app, user, path }) {
      doDeactivateRealmEmoji(app, user, path.emoji_name);
      return {};
    },
  }),
  route({
    // The source_url of GET /realm/emoji; only for the organization's own users.
    method: 'GET',
    path: '/user_avatars/{realm_id:int}/emoji/images/{filename}',
    auth: 'user_or_session',
    handle({ app, user, path }) {
      if (Number(path.realm_id) !== user.realm_id) return notFound();
      const file = emojiFilePath(app, user.realm_id, path.filename);
      if (!file) return notFound();
      let size: number;
      try {
        const st = fs.statSync(file);
        if (!st.isFile()) return notFound();
        size = st.size;
      } catch {
        return notFound();
      }
      const type = EMOJI_TYPES[path.filename.slice(path.filename.lastIndexOf('.'))] ?? 'application/octet-stream';
      return new FileReply(200, { 'Content-Type': type, 'Cache-Control': 'private, max-age=86400', 'X-Content-Type-Options': 'nosniff' }, file, size);
    },
  }),
];
