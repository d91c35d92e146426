// File uploads: POST /user_uploads, serving /user_uploads/... (Basic auth or the session cookie), the
// temporary-URL endpoint, and the user's attachment list.
import fs from 'node:fs';
import { doDeleteAttachment, doStoreUpload } from '../actions/uploads';
import { errors, JsonableError } from '../http/errors';
import { FileReply, Reply, publicRoute, route } from '../http/route';
import { nowSeconds } from '../lib/clock';
import type { UserRow } from '../lib/users';
import type { App } from '../app';
import {
  canReadAttachment,
  findAttachmentByPath,
  formatAttachment,
  signTemporaryToken,
  uploadSpaceUsed,
  userAttachments,
  verifyTemporaryToken,
} from '../uploads/access';
import { pathIdFromSegments, pathIdName, serveHeaders, storePath } from '../uploads/store';

const HTML = { 'Content-Type': 'text/html; charset=utf-8', 'X-Content-Type-Options': 'nosniff' };
const notFound = () => new Reply(404, HTML, '<p>File not found.</p>');
const forbidden = () => new Reply(403, HTML, '<p>You are not authorized to view this file.</p>');

/** The stored file of an attachment as a streamed reply (404 if the bytes are gone). */
function serveStored(app: App, pathId: string, download: boolean): FileReply | Reply {
  let file: string;
  let size: number;
  try {
    file = storePath(app.uploadsDir, pathId);
    const st = fs.statSync(file);
    if (!st.isFile()) return notFound();
    size = st.size;
  } catch {
    return notFound();
  }
  return new FileReply(200, serveHeaders(pathIdName(pathId), download), file, size);
}

/** Zulip's validate_attachment_request: null when missing, false when not allowed. */
function authorize(app: App, user: UserRow, realmId: string, rest: string): { pathId: string } | Reply {
  const pathId = pathIdFromSegments(realmId, rest);
  if (!pathId || Number(realmId) !== user.realm_id) return notFound();
  const a = findAttachmentByPath(app.db, user.realm_id, pathId);
  if (!a) return notFound();
  if (!canReadAttachment(app.db, user, a)) return forbidden();
  return { pathId };
}

export const uploadRoutes = [
  route({
    method: 'POST',
    path: '/api/v1/user_uploads',
    auth: 'user',
    files: true,
    async handle({ app, user, files }) {
      if (files.length === 0) throw errors.badRequest('You must specify a file to upload');
      if (files.length > 1) throw errors.badRequest('You may only upload one file at a time');
      const f = files[0];
      return { ...(await doStoreUpload(app, user, { tmpFile: f.path, clientName: f.filename, size: f.size, contentType: f.mimeType })) };
    },
  }),
  route({
    method: 'GET',
    path: '/user_uploads/{realm_id:int}/{path...}',
    auth: 'user_or_session',
    handle({ app, user, path }) {
      const ok = authorize(app, user, path.realm_id, path.path);
      return ok instanceof Reply ? ok : serveStored(app, ok.pathId, false);
    },
  }),
  route({
    method: 'GET',
    path: '/user_uploads/download/{realm_id:int}/{path...}',
    auth: 'user_or_session',
    handle({ app, user, path }) {
      const ok = authorize(app, user, path.realm_id, path.path);
      return ok instanceof Reply ? ok : serveStored(app, ok.pathId, true);
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/user_uploads/{realm_id:int}/{path...}',
    auth: 'user',
    handle({ app, user, path }) {
      const ok = authorize(app, user, path.realm_id, path.path);
      // Under /api/v1 every answer is JSON, errors included.
      if (ok instanceof Reply) {
        if (ok.status === 403) throw new JsonableError('You are not authorized to view this file.', { status: 403 });
        throw errors.notFound('File not found.');
      }
      const token = signTemporaryToken(app, ok.pathId, nowSeconds(app.clock));
      return { url: `/user_uploads/temporary/${token}/${ok.pathId.slice(ok.pathId.lastIndexOf('/') + 1)}` };
    },
  }),
  publicRoute({
    method: 'GET',
    path: '/user_uploads/temporary/{token}/{filename}',
    handle({ app, path }) {
      const pathId = verifyTemporaryToken(app, path.token, nowSeconds(app.clock));
      if (pathId === null) throw errors.badRequest('Invalid token');
      if (pathIdName(pathId) !== path.filename) throw errors.badRequest('Invalid filename');
      // Deleted since the link was made: gone for everyone.
      if (!findAttachmentByPath(app.db, Number(pathId.split('/')[0]), pathId)) return notFound();
      return serveStored(app, pathId, false);
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/attachments',
    auth: 'user',
    handle({ app, user }) {
      return {
        attachments: userAttachments(app.db, user).map((a) => formatAttachment(app.db, a)),
        upload_space_used: uploadSpaceUsed(app.db, user.realm_id),
      };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/attachments/{attachment_id:int}',
    auth: 'user',
    handle({ app, user, path }) {
      doDeleteAttachment(app, user, Number(path.attachment_id));
      return {};
    },
  }),
];
