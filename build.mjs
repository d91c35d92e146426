// `npm run build`: bundles the CLI with esbuild to dist/parley.cjs, then turns it into the single
// executable dist/parley with Node's SEA support (the uWS and better-sqlite3 addons embedded as
// assets, see src/native.ts). Fully offline; idempotent; a few seconds.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Module, { createRequire } from 'node:module';
import * as esbuild from 'esbuild';

const require = createRequire(import.meta.url);
const root = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(root, 'dist');
const rel = (p) => path.relative(root, p);
const started = performance.now();

/** Runs a build step, showing its output only when it fails. */
function quiet(cmd, args) {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) {
    process.stderr.write(r.stdout + r.stderr);
    throw new Error(`build.mjs: ${path.basename(args[0] ?? cmd)} ${args.slice(1).join(' ')} failed (${r.error?.message ?? `exit ${r.status}`})`);
  }
}

// The asset names are the ones src/native.ts exports (compiled and read from there, so they cannot drift).
const nativeJs = (await esbuild.build({ entryPoints: [path.join(root, 'src', 'native.ts')], format: 'cjs', platform: 'node', write: false }))
  .outputFiles[0].text;
const nativeModule = new Module(path.join(root, 'src', 'native.ts'));
nativeModule.paths = Module._nodeModulePaths(path.join(root, 'src'));
nativeModule._compile(nativeJs, nativeModule.id);
const { UWS_ASSET, SQLITE_ASSET, MANIFEST_ASSET } = nativeModule.exports;
const uwsFile = path.join(path.dirname(require.resolve('@trufflesuite/uws-js-unofficial/package.json')), 'binaries', UWS_ASSET);
const sqliteFile = path.join(path.dirname(require.resolve('better-sqlite3/package.json')), 'build', 'Release', SQLITE_ASSET);
for (const f of [uwsFile, sqliteFile]) if (!fs.existsSync(f)) throw new Error(`build.mjs: missing native addon ${f}`);

// Everything is made in a private staging dir and moved into dist/ by rename at the end, so concurrent
// builds never mix each other's files and a failed build leaves the previous outputs intact.
fs.mkdirSync(dist, { recursive: true });
const stage = fs.mkdtempSync(path.join(dist, '.stage-'));
const bundle = path.join(dist, 'parley.cjs');
const exe = path.join(dist, 'parley');
try {
  // 1. The bundle.
  const stagedBundle = path.join(stage, 'parley.cjs');
  await esbuild.build({
    entryPoints: [path.join(root, 'src', 'cli-entry.ts')],
    outfile: stagedBundle,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    // The addons are loaded by src/native.ts with process.dlopen, never through these packages' loaders.
    // (native.ts only resolves their package.json files, from node_modules, when run outside a SEA.)
    external: ['@trufflesuite/uws-js-unofficial', '@trufflesuite/uws-js-unofficial/package.json', 'better-sqlite3/package.json'],
    define: {
      PARLEY_SCHEMA_SQL: JSON.stringify(fs.readFileSync(path.join(root, 'schema.sql'), 'utf8')),
      // cli-entry.ts starts the CLI; main.ts's `require.main === module` check must not start it again.
      'require.main': 'undefined',
    },
    banner: { js: '#!/usr/bin/env node' },
    legalComments: 'none',
    logLevel: 'warning',
  });
  fs.chmodSync(stagedBundle, 0o755);

  // 2. The SEA blob. The manifest carries each addon's hash, so a start with a warm cache need not
  // read (or hash) the embedded bytes at all.
  const addons = { [UWS_ASSET]: uwsFile, [SQLITE_ASSET]: sqliteFile };
  const manifest = {};
  for (const [name, file] of Object.entries(addons)) {
    const bytes = fs.readFileSync(file);
    manifest[name] = { sha256: crypto.createHash('sha256').update(bytes).digest('hex'), size: bytes.length };
  }
  const manifestFile = path.join(stage, MANIFEST_ASSET);
  fs.writeFileSync(manifestFile, JSON.stringify(manifest, null, 2) + '\n');
  const blob = path.join(stage, 'parley.blob');
  const seaConfig = path.join(stage, 'sea-config.json');
  const config = {
    main: stagedBundle,
    output: blob,
    disableExperimentalSEAWarning: true,
    useCodeCache: true, // about 35 ms faster to start
    assets: { ...addons, [MANIFEST_ASSET]: manifestFile },
  };
  fs.writeFileSync(seaConfig, JSON.stringify(config, null, 2) + '\n');
  quiet(process.execPath, ['--experimental-sea-config', seaConfig]);

  // 3. A copy of this node with the blob injected. postject runs as a child process: its LIEF backend
  // prints harmless section warnings that we only show on failure.
  const stagedExe = path.join(stage, 'parley');
  fs.copyFileSync(process.execPath, stagedExe);
  fs.chmodSync(stagedExe, 0o755);
  const postject = path.join(path.dirname(require.resolve('postject/package.json')), 'dist', 'cli.js');
  quiet(process.execPath, [postject, stagedExe, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2', '--overwrite']);

  // Rename, never overwrite in place: a running dist/parley keeps its old inode.
  fs.renameSync(stagedBundle, bundle);
  fs.renameSync(stagedExe, exe);
} finally {
  fs.rmSync(stage, { recursive: true, force: true });
}

const size = (f) => `${(fs.statSync(f).size / 1024 / 1024).toFixed(1)} MB`;
console.log(
  `build: ${rel(bundle)} (${size(bundle)}), ${rel(exe)} (${size(exe)}) with ${UWS_ASSET} and ${SQLITE_ASSET}` +
    ` in ${((performance.now() - started) / 1000).toFixed(1)} s`,
);
