// Resumable uploads: the tus 1.0.0 protocol at /api/v1/tus (core, creation, creation-with-upload,
// termination, expiration), for Basic auth and the browser session. The PATCH that completes an
// upload answers 200 with the same JSON as POST /user_uploads, as Zulip's tusd hook does.
import type { App } from '../app';
import { doCreateTusUpload, doTerminateTusUpload, doTusAppend, tusError, type TusProgress } from '../actions/uploads';
import { Reply, route } from '../http/route';
import { findTusUpload, httpDate, parseMetadata, TUS_EXTENSIONS, TUS_VERSION } from '../uploads/tus';

const OCTETS = 'application/offset+octet-stream';

/** 412 unless the client speaks our tus version (every request but OPTIONS must say so). */
function checkResumable(headers: Record<string, string>): void {
  if (headers['tus-resumable'] !== TUS_VERSION) {
    throw tusError(412, 'Unsupported Tus-Resumable version', undefined, { 'Tus-Version': TUS_VERSION });
  }
}

/** A non-negative decimal header value, or null. */
function intHeader(value: string | undefined): number | null {
  if (value === undefined || !/^[0-9]{1,16}$/.test(value)) return null;
  return Number(value);
}

/** The reply after a PATCH (or a creation carrying data): 204 with the offset, or the Upload result. */
function progressReply(p: TusProgress, status: number, extra: Record<string, string> = {}): Reply {
  const headers: Record<string, string> = {
    'Tus-Resumable': TUS_VERSION,
    'Upload-Offset': String(p.row.offset),
    ...extra,
  };
  if (p.completed) {
    headers['Content-Type'] = 'application/json';
    return new Reply(status === 201 ? 201 : 200, headers, JSON.stringify({ result: 'success', msg: '', ...p.completed }));
  }
  headers['Upload-Expires'] = httpDate(p.row.expires);
  return new Reply(status, headers, '');
}

const location = (id: string) => `/api/v1/tus/${id}`;

/** What OPTIONS tells a tus client about this server. */
const discovery = (app: App) => ({
  'Tus-Resumable': TUS_VERSION,
  'Tus-Version': TUS_VERSION,
  'Tus-Extension': TUS_EXTENSIONS,
  'Tus-Max-Size': String(app.config.maxFileUploadSizeMib * 1024 * 1024),
});

export const tusRoutes = [
  route({
    method: 'POST',
    path: '/api/v1/tus',
    auth: 'user_or_session',
    rawBody: true,
    optionsHeaders: discovery,
    async handle({ app, user, headers, body }) {
      checkResumable(headers);
      if (headers['upload-defer-length'] !== undefined) throw tusError(400, 'Upload-Defer-Length is not supported');
      const length = intHeader(headers['upload-length']);
      if (length === null) throw tusError(400, 'Missing or invalid Upload-Length header');
      const meta = parseMetadata(headers['upload-metadata']);
      if (meta === null) throw tusError(400, 'Invalid Upload-Metadata header');
      const withData = (headers['content-type'] ?? '') === OCTETS && Number(headers['content-length'] ?? '0') > 0;
      const row = doCreateTusUpload(app, user, {
        length,
        fileName: meta.get('filename') ?? meta.get('name') ?? '',
        contentType: meta.get('filetype') ?? meta.get('type') ?? null,
      });
      const created = { Location: location(row.id) };
      if (!withData && length > 0) return progressReply({ row, completed: null }, 201, created);
      // creation-with-upload, or an empty file that is complete as soon as it exists.
      return progressReply(await doTusAppend(app, user, row.id, 0, withData ? body : null), 201, created);
    },
  }),
  route({
    // HEAD (answered by GET routes): where to resume.
    method: 'GET',
    path: '/api/v1/tus/{id}',
    auth: 'user_or_session',
    optionsHeaders: discovery,
    handle({ app, user, headers, path }) {
      checkResumable(headers);
      const row = findTusUpload(app.db, path.id);
      if (!row || row.user_id !== user.id || row.expires < Math.floor(app.clock.nowMs() / 1000)) throw tusError(404, 'Upload not found');
      const out: Record<string, string> = {
        'Tus-Resumable': TUS_VERSION,
        'Upload-Offset': String(row.offset),
        'Upload-Length': String(row.length),
        'Upload-Expires': httpDate(row.expires),
        'Cache-Control': 'no-store',
      };
      return new Reply(200, out, '');
    },
  }),
  route({
    method: 'PATCH',
    path: '/api/v1/tus/{id}',
    auth: 'user_or_session',
    rawBody: true,
    async handle({ app, user, headers, path, body }) {
      checkResumable(headers);
      if ((headers['content-type'] ?? '').split(';')[0].trim().toLowerCase() !== OCTETS) {
        throw tusError(415, 'Content-Type must be application/offset+octet-stream');
      }
      const offset = intHeader(headers['upload-offset']);
      if (offset === null) throw tusError(400, 'Missing or invalid Upload-Offset header');
      return progressReply(await doTusAppend(app, user, path.id, offset, body), 204);
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/tus/{id}',
    auth: 'user_or_session',
    rawBody: true,
    handle({ app, user, headers, path }) {
      checkResumable(headers);
      doTerminateTusUpload(app, user, path.id);
      return new Reply(204, { 'Tus-Resumable': TUS_VERSION }, '');
    },
  }),
];
