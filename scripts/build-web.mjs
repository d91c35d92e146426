// Builds the web client (web/) with esbuild into content-hashed files plus manifest.json, which the
// server reads to name them in its pages (src/lib/web-assets.ts). `node scripts/build-web.mjs` builds
// into dist/web (npm start runs it); build.mjs calls buildWeb() and embeds the files in the executable.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The entry points: the app, and the login page's small helper (keeps the narrow across a login). */
const ENTRIES = { app: 'web/src/main.tsx', login: 'web/src/login.ts' };

/**
 * Builds into `outdir` (emptied first) and returns the manifest: `{ "app.js": "app-HASH.js",
 * "app.css": "app-HASH.css", "login.js": ..., "favicon.svg": ..., files: [every file] }`.
 */
export async function buildWeb(outdir) {
  fs.rmSync(outdir, { recursive: true, force: true });
  const result = await esbuild.build({
    entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([name, file]) => [name, path.join(root, file)])),
    outdir,
    absWorkingDir: root, // metafile paths relative to the repository, as ENTRIES names them
    bundle: true,
    // ES modules with splitting: screens that few people open can be import()ed as their own chunks.
    format: 'esm',
    splitting: true,
    platform: 'browser',
    // Browsers of 2024 on: the colours use CSS light-dark() (and the bundle's syntax is left as written).
    target: ['chrome123', 'firefox120', 'safari17.5'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    entryNames: '[name]-[hash]',
    chunkNames: 'chunk-[hash]',
    assetNames: '[name]-[hash]',
    loader: { '.svg': 'file' },
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  const manifest = { files: [] };
  for (const [out, info] of Object.entries(result.metafile.outputs)) {
    const file = path.basename(out);
    manifest.files.push(file);
    const entry = Object.entries(ENTRIES).find(([, src]) => info.entryPoint === src);
    if (entry) {
      manifest[`${entry[0]}.js`] = file;
      if (info.cssBundle) manifest[`${entry[0]}.css`] = path.basename(info.cssBundle);
    }
  }
  // Files used as they are (web/public: the favicon), named by their content like the rest.
  const publicDir = path.join(root, 'web', 'public');
  for (const name of fs.readdirSync(publicDir).sort()) {
    const bytes = fs.readFileSync(path.join(publicDir, name));
    const hash = crypto.createHash('sha256').update(bytes).digest('hex').slice(0, 8).toUpperCase();
    const ext = path.extname(name);
    const file = `${path.basename(name, ext)}-${hash}${ext}`;
    fs.writeFileSync(path.join(outdir, file), bytes);
    manifest[name] = file;
    manifest.files.push(file);
  }
  manifest.files.sort();
  fs.writeFileSync(path.join(outdir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  return manifest;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  const dist = path.join(root, 'dist');
  fs.mkdirSync(dist, { recursive: true });
  const stage = fs.mkdtempSync(path.join(dist, '.web-'));
  try {
    const manifest = await buildWeb(stage);
    fs.rmSync(path.join(dist, 'web'), { recursive: true, force: true });
    fs.renameSync(stage, path.join(dist, 'web'));
    console.log(`build-web: dist/web (${manifest.files.length} files) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}
