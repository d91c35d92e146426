// The one place that loads native addons. From source they come from node_modules; inside the single
// executable they are SEA assets, written once to a content-addressed cache dir and loaded with
// process.dlopen. Loading the uWS .node file directly (not through its wrapper) makes a load failure
// loud: the wrapper would silently fall back to a slow JavaScript implementation.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import type * as UWS from '@trufflesuite/uws-js-unofficial';

export type Uws = typeof UWS;

export type Sea = {
  isSea(): boolean;
  getAsset(key: string): ArrayBuffer;
  getAsset(key: string, encoding: string): string;
  /** Node >= 20.12: the asset's bytes in place (read-only), without the copy getAsset makes. */
  getRawAsset?(key: string): ArrayBuffer;
};

/** node:sea when running inside the single executable, else null. */
export function seaModule(): Sea | null {
  try {
    // node:sea exists from Node 20.12; outside a SEA isSea() is false.
    const sea = require('node:sea') as Sea;
    return sea.isSea() ? sea : null;
  } catch {
    return null;
  }
}

/** The uWS addon's file name for a platform, CPU and Node ABI (build.mjs also names a cross build's). */
export function uwsAssetName(platform: string, arch: string, modules: string): string {
  return `uws_${platform}_${arch}_${modules}.node`;
}

export const UWS_ASSET = uwsAssetName(process.platform, process.arch, process.versions.modules);
export const SQLITE_ASSET = 'better_sqlite3.node';
/** SEA asset written by build.mjs: `{ [asset]: { sha256, size } }` for every addon asset. */
export const MANIFEST_ASSET = 'parley-assets.json';

export type AssetManifest = Record<string, { sha256: string; size: number }>;

function dlopen(file: string): unknown {
  const mod = { exports: {} as unknown };
  process.dlopen(mod, file);
  return mod.exports;
}

/** Where extracted addons live: PARLEY_CACHE_DIR, else the user's cache dir ($XDG_CACHE_HOME or ~/.cache). */
function cacheBase(): string {
  if (process.env.PARLEY_CACHE_DIR) return path.resolve(process.env.PARLEY_CACHE_DIR);
  return path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'parley');
}

/** A private fallback when the cache dir cannot be written (read-only home, no home at all). */
function privateTmpBase(): string {
  const dir = path.join(os.tmpdir(), `parley-cache-${process.getuid?.() ?? 'user'}`);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  // A shared /tmp: refuse a directory someone else could have planted files in (we dlopen from it).
  const st = fs.statSync(dir);
  if ((process.getuid && st.uid !== process.getuid()) || (st.mode & 0o022) !== 0) {
    throw new Error(`parley: refusing to load native addons from ${dir}: not private to this user`);
  }
  return dir;
}

let manifestCache: AssetManifest | null = null;

function manifest(sea: Sea): AssetManifest {
  manifestCache ??= JSON.parse(sea.getAsset(MANIFEST_ASSET, 'utf8')) as AssetManifest;
  return manifestCache;
}

/** BASE/HASH/NAME when an intact copy is there (checked by size: files only ever appear by rename). */
function cached(base: string, hash: string, name: string, size: number): string | null {
  const file = path.join(base, hash.slice(0, 16), name);
  try {
    return fs.statSync(file).size === size ? file : null;
  } catch {
    return null;
  }
}

/** The embedded bytes of `name`, checked against the hash build.mjs recorded. */
function assetBytes(sea: Sea, name: string, sha256: string): Buffer {
  const bytes = Buffer.from(sea.getRawAsset ? sea.getRawAsset(name) : sea.getAsset(name));
  const actual = crypto.createHash('sha256').update(bytes).digest('hex');
  if (actual !== sha256) throw new Error(`parley: embedded ${name} is corrupt (sha256 ${actual}, built as ${sha256})`);
  return bytes;
}

/** Writes `bytes` to BASE/HASH/NAME and returns the path. */
function writeCached(base: string, hash: string, name: string, bytes: Buffer): string {
  const dir = path.join(base, hash.slice(0, 16));
  const file = path.join(dir, name);
  fs.mkdirSync(dir, { recursive: true });
  // Write under a unique name and rename: two processes starting at once never load a half-written file.
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  fs.writeFileSync(tmp, bytes, { mode: 0o755 });
  fs.renameSync(tmp, file);
  return file;
}

/**
 * The path of an embedded addon, written to BASE/HASH/NAME on first use. The hash is computed at build
 * time, so a start with a warm cache never reads the embedded bytes, and a new build never loads an
 * old build's addon.
 */
function extractAsset(sea: Sea, name: string): string {
  const entry = manifest(sea)[name];
  if (!entry) throw new Error(`parley: the executable has no embedded ${name}`);
  const base = cacheBase();
  const hit = cached(base, entry.sha256, name, entry.size);
  if (hit) return hit;
  const bytes = assetBytes(sea, name, entry.sha256);
  try {
    return writeCached(base, entry.sha256, name, bytes);
  } catch (err) {
    if (process.env.PARLEY_CACHE_DIR) throw err; // an explicit choice fails loudly
    const tmpBase = privateTmpBase();
    return cached(tmpBase, entry.sha256, name, entry.size) ?? writeCached(tmpBase, entry.sha256, name, bytes);
  }
}

let uwsCache: Uws | null = null;
let sqliteCache: unknown = null;

/** The uWebSockets.js native module. Throws if it cannot be loaded. */
export function loadUws(): Uws {
  if (uwsCache) return uwsCache;
  // uWS reads its header-size limit once, when it loads. Its default (4 KB, but more when a header
  // block happens to arrive in one packet) depends on packet boundaries; a fixed 16 KB is predictable
  // and leaves room for large cookies.
  process.env.UWS_HTTP_MAX_HEADERS_SIZE ??= '16384';
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
