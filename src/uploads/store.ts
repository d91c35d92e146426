// The upload store on local disk: DATA_DIR/uploads/<path_id>, where path_id is
// `<realm_id>/<2 hex>/<24 random url-safe chars>/<sanitised name>` as in Zulip. The name segment is kept
// percent-encoded (on disk and in path_id) so that path_id is exactly what follows /user_uploads/ in
// the URL a client puts in a message: the renderer's linked paths match it without decoding, and the
// disk never sees anything but [A-Za-z0-9._%-].
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** Zulip's sanitize_name: NFKC, keep word characters, whitespace, '.', '-'; runs of space/dash → '-'. */
export function sanitizeName(value: string): string {
  let v = value.normalize('NFKC');
  // Python's \w is Unicode-aware (letters, digits incl. other numerics, marks via isalnum, '_');
  // Python's \s also counts the ASCII separators \x1c-\x1f.
  v = v.replace(/[^\p{L}\p{N}_\s\x1c-\x1f.-]/gu, '').trim();
  v = v.replace(/[-\s\x1c-\x1f]+/g, '-');
  if (v === '' || v === '.' || v === '..') return 'uploaded-file';
  return truncateName(v);
}

const MAX_ENCODED_NAME = 200;

/** Keeps the encoded name under a filesystem-safe length, shortening the stem and keeping the extension. */
function truncateName(name: string): string {
  if (encodeURIComponent(name).length <= MAX_ENCODED_NAME) return name;
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 && name.length - dot <= 16 ? name.slice(dot) : '';
  // Every character encodes to at least one: no more than MAX_ENCODED_NAME of them can fit, and
  // starting there keeps the loop below short (from the whole of a name of 100,000 characters, an
  // imported file's, it re-encoded the rest once per character dropped: minutes).
  const chars = [...name.slice(0, name.length - ext.length)].slice(0, MAX_ENCODED_NAME);
  while (chars.length > 1 && encodeURIComponent(chars.join('') + ext).length > MAX_ENCODED_NAME) chars.pop();
  return chars.join('') + ext;
}

/** A fresh path_id for `name` (already sanitised) in `realmId`. */
export function newPathId(realmId: number, name: string): string {
  const bucket = crypto.randomBytes(1).toString('hex');
  const random = crypto.randomBytes(18).toString('base64url');
  return `${realmId}/${bucket}/${random}/${encodeURIComponent(name)}`;
}

/** The URL (root-relative) of a stored upload. */
export const uploadUrl = (pathId: string) => `/user_uploads/${pathId}`;

/** The display name of a path_id (its last segment, decoded). */
export function pathIdName(pathId: string): string {
  const last = pathId.slice(pathId.lastIndexOf('/') + 1);
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

const PATH_ID = /^[0-9]+\/[0-9a-f]{2}\/[A-Za-z0-9_-]{24}\/[A-Za-z0-9._~%!*'()-]+$/;

/**
 * The path_id for decoded URL segments (the router percent-decodes path parameters), or null if
 * they can't name a stored upload. Re-encoding is canonical because stored names only hold
 * characters encodeURIComponent treats one way.
 */
export function pathIdFromSegments(realmId: string, rest: string): string | null {
  const parts = rest.split('/');
  if (parts.length !== 3) return null;
  const id = `${realmId}/${parts[0]}/${parts[1]}/${encodeURIComponent(parts[2])}`;
  return PATH_ID.test(id) ? id : null;
}

/** The absolute file of a path_id, refusing anything that would leave the store. */
export function storePath(uploadsDir: string, pathId: string): string {
  if (!PATH_ID.test(pathId) || pathId.split('/').some((s) => s === '.' || s === '..')) throw new Error(`bad path_id ${pathId}`);
  const root = path.resolve(uploadsDir);
  const full = path.resolve(root, pathId);
  if (!full.startsWith(root + path.sep)) throw new Error(`path_id escapes the store: ${pathId}`);
  return full;
}

/** Moves a finished temporary file into the store at `pathId` (rename, or copy across devices). */
export async function moveIntoStore(uploadsDir: string, tmpFile: string, pathId: string): Promise<void> {
  const dest = storePath(uploadsDir, pathId);
  await fs.promises.mkdir(path.dirname(dest), { recursive: true });
  try {
    await fs.promises.rename(tmpFile, dest);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    await fs.promises.copyFile(tmpFile, dest);
    await fs.promises.rm(tmpFile, { force: true });
  }
}

/** Removes a stored file and the empty directories above it (best effort). */
export async function removeFromStore(uploadsDir: string, pathId: string): Promise<void> {
  let file: string;
  try {
    file = storePath(uploadsDir, pathId);
  } catch {
    return;
  }
  await fs.promises.rm(file, { force: true });
  const root = path.resolve(uploadsDir);
  for (let dir = path.dirname(file); dir.startsWith(root + path.sep); dir = path.dirname(dir)) {
    try {
      await fs.promises.rmdir(dir);
    } catch {
      break; // not empty
    }
  }
}

// Zulip's INLINE_MIME_TYPES: the only types a browser may show in place. Everything else (HTML, SVG,
// XML, JavaScript, ...) is served as an attachment so it can't run in our origin.
const INLINE_MIME_TYPES = new Set([
  'application/pdf',
  'audio/aac',
  'audio/flac',
  'audio/mp4',
  'audio/mpeg',
  'audio/wav',
  'audio/webm',
  'image/apng',
  'image/avif',
  'image/gif',
  'image/jpeg',
  'image/png',
  'image/webp',
  'text/plain',
  'video/mp4',
  'video/webm',
]);

const TYPES_BY_EXTENSION: Record<string, string> = {
  pdf: 'application/pdf',
  aac: 'audio/aac',
  flac: 'audio/flac',
  m4a: 'audio/mp4',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  weba: 'audio/webm',
  apng: 'image/apng',
  avif: 'image/avif',
  gif: 'image/gif',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  txt: 'text/plain',
  log: 'text/plain',
  mp4: 'video/mp4',
  webm: 'video/webm',
  html: 'text/html',
  htm: 'text/html',
  xhtml: 'application/xhtml+xml',
  svg: 'image/svg+xml',
  xml: 'text/xml',
  js: 'text/javascript',
  mjs: 'text/javascript',
  css: 'text/css',
  json: 'application/json',
  zip: 'application/zip',
  gz: 'application/gzip',
  csv: 'text/csv',
  md: 'text/markdown',
};

/**
 * Headers for serving a stored file. As Zulip, the type comes from the stored name (never from what
 * the uploader claimed), and only INLINE_MIME_TYPES are shown inline.
 */
export function serveHeaders(name: string, download: boolean): Record<string, string> {
  const ext = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : '';
  const type = Object.hasOwn(TYPES_BY_EXTENSION, ext) ? TYPES_BY_EXTENSION[ext] : 'application/octet-stream';
  const inline = !download && INLINE_MIME_TYPES.has(type);
  const headers: Record<string, string> = {
    'Content-Type': type === 'text/plain' ? 'text/plain; charset=utf-8' : type,
    'Content-Disposition': contentDisposition(inline ? 'inline' : 'attachment', name),
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'private, immutable',
  };
  // Even if a browser were talked into rendering a download, it gets no scripts and no origin.
  if (!inline) headers['Content-Security-Policy'] = "default-src 'none'; sandbox";
  return headers;
}

/** RFC 6266 / 8187 disposition, as Zulip's patch_disposition_header. */
export function contentDisposition(kind: 'inline' | 'attachment', name: string): string {
  // eslint-disable-next-line no-control-regex
  if (/^[\x20-\x7e]*$/.test(name)) return `${kind}; filename="${name.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  return `${kind}; filename*=utf-8''${encodeURIComponent(name)}`;
}
