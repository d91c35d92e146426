// Data exports (Zulip's zerver/views/realm_export.py): POST/GET /export/realm, DELETE
// /export/realm/{export_id}, GET /export/realm/consents, and the tarball's download.
import fs from 'node:fs';
import * as v from 'valibot';
import { doCreateRealmExport, doDeleteRealmExport, exportDownload, listExportConsents, realmExportsSerialized } from '../actions/realm-export';
import { EXPORT_TYPE, type ExportType } from '../export/filter';
import { p, zInt } from '../http/params';
import { FileReply, Reply, route, type AnyRoute } from '../http/route';
import { serveHeaders } from '../uploads/store';

const HTML = { 'Content-Type': 'text/html; charset=utf-8', 'X-Content-Type-Options': 'nosniff' };
const EXPORT_TYPES: readonly number[] = Object.values(EXPORT_TYPE);

export const realmExportRoutes: AnyRoute[] = [
  route({
    method: 'POST',
    path: '/api/v1/export/realm',
    auth: 'user',
    requires: 'admin',
    params: {
      // Zulip's check_int_in_validator([EXPORT_PUBLIC, EXPORT_FULL_WITH_CONSENT]); public by default.
      export_type: p
        .json(v.pipe(zInt(), v.check((t) => EXPORT_TYPES.includes(t), 'Invalid {var_name}: Value error, Not in the list of possible values')))
        .default(EXPORT_TYPE.PUBLIC),
    },
    handle({ app, user, params }) {
      return { id: doCreateRealmExport(app, user, params.export_type as ExportType) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/export/realm',
    auth: 'user',
    requires: 'admin',
    handle({ app, user }) {
      return { exports: realmExportsSerialized(app, user.realm_id) };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/export/realm/{export_id:int}',
    auth: 'user',
    requires: 'admin',
    handle({ app, user, path }) {
      doDeleteRealmExport(app, user, Number(path.export_id));
      return {};
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/export/realm/consents',
    auth: 'user',
    requires: 'admin',
    handle({ app, user }) {
      return { export_consents: listExportConsents(app, user) };
    },
  }),
  route({
    method: 'GET',
    path: '/user_avatars/exports/{realm_id:int}/{token}/{filename}',
    auth: 'user_or_session',
    handle({ app, user, path }) {
      const found = exportDownload(app, user, Number(path.realm_id), path.token, path.filename);
      if (found === 'forbidden') return new Reply(403, HTML, '<p>You are not authorized to view this file.</p>');
      let size = -1;
      try {
        if (found) size = fs.statSync(found.file).size;
      } catch {
        size = -1;
      }
      if (!found || size < 0) return new Reply(404, HTML, '<p>File not found.</p>');
      return new FileReply(200, serveHeaders(path.filename, true), found.file, size);
    },
  }),
];
