// The web client's files (built by scripts/build-web.mjs into content-hashed names plus manifest.json):
// embedded in the single executable as SEA assets `web/NAME`, next to the bundle in dist/web, or, run
// from source, in the repository's dist/web. Read once per process (they never change while it runs),
// each kept with its gzip form so a reply costs no compression.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { seaModule } from '../native';

export interface WebManifest {
  'app.js': string;
  'app.css': string;
  'login.js': string;
  'favicon.svg': string;
  files: string[];
}

export interface WebAsset {
  type: string;
  body: Buffer;
  gzip: Buffer | null;
}

export interface WebAssets {
  manifest: WebManifest;
  /** By file name (hashed, so a name always means the same bytes). */
  files: Map<string, WebAsset>;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};
const COMPRESSIBLE = new Set(['.js', '.css', '.svg']);

// Defined (true) by build.mjs in the bundle; undefined when running from source.
declare const PARLEY_LAZY_CHUNKS: boolean | undefined;

/** Where dist/web is when not inside the executable. */
function webDir(): string {
  // The bundle is dist/parley.cjs (web/ beside it); this file is src/lib/web-assets.ts from source.
  return typeof PARLEY_LAZY_CHUNKS === 'undefined' ? path.join(__dirname, '..', '..', 'dist', 'web') : path.join(__dirname, 'web');
}

function asset(name: string, body: Buffer): WebAsset {
  const ext = path.extname(name);
  const gzip = COMPRESSIBLE.has(ext) ? zlib.gzipSync(body, { level: 9 }) : null;
  return { type: TYPES[ext] ?? 'application/octet-stream', body, gzip: gzip && gzip.length < body.length ? gzip : null };
}

let loaded: WebAssets | null = null;

/** The web client's files, or null when they were not built (a source checkout before `npm run build`). */
export function webAssets(): WebAssets | null {
  if (loaded) return loaded;
  const sea = seaModule();
  const read = sea
    ? (name: string) => Buffer.from(sea.getAsset(`web/${name}`))
    : (name: string) => fs.readFileSync(path.join(webDir(), name));
  try {
    const manifest = JSON.parse(read('manifest.json').toString('utf8')) as WebManifest;
    const files = new Map<string, WebAsset>();
    for (const name of manifest.files) files.set(name, asset(name, read(name)));
    loaded = { manifest, files };
  } catch (err) {
    // Not built yet: asked again next time, so a build while the server runs is picked up.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  return loaded;
}

/** The URL path of a built file. */
export const assetUrl = (file: string) => `/static/web/${file}`;
