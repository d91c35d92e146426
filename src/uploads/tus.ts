// tus 1.0.0 helpers: protocol constants, Upload-Metadata parsing, where partial uploads live, the
// in-progress row, and per-app state (which uploads a PATCH is writing right now).
import path from 'node:path';
import type { App } from '../app';
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';

export const TUS_VERSION = '1.0.0';
export const TUS_EXTENSIONS = 'creation,creation-with-upload,termination,expiration';
/** An upload untouched this long is abandoned: its row and partial file are removed. */
export const TUS_EXPIRY_SECONDS = 24 * 60 * 60;
/** How often abandoned uploads are looked for. */
export const TUS_SWEEP_MS = 10 * 60 * 1000;

export interface TusRow {
  id: string;
  realm_id: number;
  user_id: number;
  length: number;
  offset: number;
  file_name: string;
  content_type: string | null;
  created: number;
  expires: number;
}

export function findTusUpload(db: Db, id: string): TusRow | null {
  return (stmt(db, 'SELECT * FROM tus_upload WHERE id = ?').get(id) as TusRow | undefined) ?? null;
}

export const tusDir = (app: App) => path.join(app.uploadsDir, 'tus');

/** The partial file of an upload id (ids are our own hex, checked before use). */
export function tusFile(app: App, id: string): string {
  if (!/^[0-9a-f]{32}$/.test(id)) throw new Error(`bad tus id ${id}`);
  return path.join(tusDir(app), id);
}

/** Upload-Metadata: comma-separated `key base64value` pairs (value optional). Null if malformed. */
export function parseMetadata(header: string | undefined): Map<string, string> | null {
  const out = new Map<string, string>();
  if (!header || header.trim() === '') return out;
  for (const pair of header.split(',')) {
    const parts = pair.trim().split(' ');
    if (parts.length > 2 || parts[0] === '' || !/^[\x21-\x7e]+$/.test(parts[0]) || out.has(parts[0])) return null;
    const raw = parts[1] ?? '';
    if (raw !== '' && !/^[A-Za-z0-9+/]*={0,2}$/.test(raw)) return null;
    out.set(parts[0], Buffer.from(raw, 'base64').toString('utf8'));
  }
  return out;
}

/** RFC 9110 HTTP date (Upload-Expires). */
export const httpDate = (seconds: number) => new Date(seconds * 1000).toUTCString();

interface TusState {
  busy: Set<string>;
  timer: NodeJS.Timeout | null;
}

const states = new WeakMap<App, TusState>();

/** Per-app tus state (busy uploads, the sweeper timer). */
export function tusState(app: App): TusState {
  let s = states.get(app);
  if (!s) states.set(app, (s = { busy: new Set(), timer: null }));
  return s;
}
