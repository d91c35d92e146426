// The one place that loads native addons. From source they come from node_modules; inside the single
// executable they are SEA assets, written once to a cache dir and loaded with process.dlopen.
// Loading the uWS .node file directly (not through its wrapper) makes a load failure loud: the wrapper
// would silently fall back to a slow JavaScript implementation.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import type * as UWS from '@trufflesuite/uws-js-unofficial';

export type Uws = typeof UWS;

type Sea = { isSea(): boolean; getAsset(key: string): ArrayBuffer };

function seaModule(): Sea | null {
  try {
    // node:sea exists from Node 20.12; outside a SEA isSea() is false.
    const sea = require('node:sea') as Sea;
    return sea.isSea() ? sea : null;
  } catch {
    return null;
  }
}

export const UWS_ASSET = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
export const SQLITE_ASSET = 'better_sqlite3.node';

function dlopen(file: string): unknown {
  const mod = { exports: {} as unknown };
  process.dlopen(mod, file);
  return mod.exports;
}

/** Writes an embedded asset to a content-addressed cache file (once) and returns its path. */
function extractAsset(sea: Sea, name: string): string {
  const bytes = Buffer.from(sea.getAsset(name));
  const hash = crypto.createHash('sha256').update(bytes).digest('hex').slice(0, 16);
  const base = process.env.PARLEY_CACHE_DIR || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'parley');
  const dir = path.join(base, hash);
  const file = path.join(dir, name);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dir, { recursive: true });
    // Write under a unique name and rename: two processes starting at once never load a half-written file.
    const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
    fs.writeFileSync(tmp, bytes, { mode: 0o755 });
    fs.renameSync(tmp, file);
  }
  return file;
}

let uwsCache: Uws | null = null;
let sqliteCache: unknown = null;

/** The uWebSockets.js native module. Throws if it cannot be loaded. */
export function loadUws(): Uws {
  if (uwsCache) return uwsCache;
  const sea = seaModule();
  const file = sea
    ? extractAsset(sea, UWS_ASSET)
    : path.join(path.dirname(require.resolve('@trufflesuite/uws-js-unofficial/package.json')), 'binaries', UWS_ASSET);
  uwsCache = dlopen(file) as Uws;
  return uwsCache;
}

/** The better-sqlite3 addon object, to pass as its `nativeBinding` option. */
export function loadSqliteAddon(): unknown {
  if (sqliteCache) return sqliteCache;
  const sea = seaModule();
  const file = sea
    ? extractAsset(sea, SQLITE_ASSET)
    : path.join(path.dirname(require.resolve('better-sqlite3/package.json')), 'build', 'Release', SQLITE_ASSET);
  sqliteCache = dlopen(file);
  return sqliteCache;
}

/** True inside the single executable. */
export function isSea(): boolean {
  return seaModule() !== null;
}
