// `npm run build`: bundles the CLI with esbuild to dist/parley.cjs (heavy dependencies split off into
// lazily loaded chunks in dist/lazy/, see src/lazy.ts), then turns it into the single executable
// dist/parley with Node's SEA support: the bundle, its V8 code cache (recorded by starting it once),
// the chunks and the uWS and better-sqlite3 addons are embedded as assets (src/sea-main.ts,
// src/native.ts) with the web client's files (scripts/build-web.mjs). Fully offline (the training start listens on 127.0.0.1 only); idempotent; a few seconds.
// `npm run build:arm64` (`node build.mjs --arch arm64`, on linux-x64) makes dist/parley-linux-arm64
// from the same bundle, with Node's arm64 binary and a cross-compiled better-sqlite3
// (scripts/arm64-toolchain.mjs); the steps that must run the target Node (code cache, SEA blob, the
// check) run it under qemu. It writes only that executable: the bundle, chunks and web files are the
// same for every CPU and stay the native build's. Its first run downloads and compiles (minutes);
// later runs reuse .cache/arm64/ and take about half a minute, most of it the emulated runs.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Module, { createRequire } from 'node:module';
import * as esbuild from 'esbuild';
import { buildWeb } from './scripts/build-web.mjs';
import { arm64Node, arm64Sqlite, checkTools, emulated } from './scripts/arm64-toolchain.mjs';

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

/** Evaluates one of our small source modules (native.ts, lazy.ts) here, to read the names it exports. */
async function sourceModule(name) {
  const file = path.join(root, 'src', name);
  const js = (await esbuild.build({ entryPoints: [file], bundle: true, packages: 'external', format: 'cjs', platform: 'node', write: false }))
    .outputFiles[0].text;
  const mod = new Module(file);
  mod.paths = Module._nodeModulePaths(path.join(root, 'src'));
  mod._compile(js, file);
  return mod.exports;
}

// The asset and chunk names are the ones src/native.ts and src/lazy.ts export (compiled and read from
// there, so they cannot drift).
const { UWS_ASSET, SQLITE_ASSET, MANIFEST_ASSET, uwsAssetName } = await sourceModule('native.ts');
const { LAZY_CHUNKS, chunkPath } = await sourceModule('lazy.ts');
const chunkNames = Object.keys(LAZY_CHUNKS);
// The built-in images, embedded as images/NAME; every name src/lib/static-files.ts serves must exist.
const { STATIC_IMAGES: staticImages } = await sourceModule('lib/static-files.ts');
const imagesDir = path.join(root, 'assets', 'images');
for (const f of staticImages) if (!fs.existsSync(path.join(imagesDir, f))) throw new Error(`build.mjs: assets/images/${f} is missing (node scripts/gen-static-images.mjs)`);
// The executable's entry script (src/sea-main.ts) runs the bundle from these two assets.
const BUNDLE_ASSET = 'parley.cjs';
const CODE_CACHE_ASSET = 'parley.cjs.code-cache';

// Records the V8 code cache of the bundle after it has started a demo server and answered one request.
// Run by `node -e` in a child process: the same node the executable is made of, so V8 accepts the cache.
const TRAIN = String.raw`
const fs = require('node:fs'), http = require('node:http'), path = require('node:path'), vm = require('node:vm'), Module = require('node:module');
const [wrappedFile, bundleFile, cacheFile] = process.argv.slice(1);
const script = new vm.Script(fs.readFileSync(wrappedFile, 'utf8'), { filename: bundleFile });
const fail = (why) => { process.stderr.write('code cache training: ' + why + '\n'); process.exit(1); };
const timeoutMs = Number(process.argv[4]);
setTimeout(() => fail('no answer within ' + timeoutMs / 1000 + ' s'), timeoutMs).unref();
process.stdout.write = (chunk) => {
  const m = /^listening on (\S+)/.exec(String(chunk));
  if (!m) return true;
  const auth = 'Basic ' + Buffer.from('owner@example.com:demoOwnerKey00000000000000000001').toString('base64');
  http.get(m[1] + '/api/v1/users/me', { headers: { authorization: auth } }, (res) => {
    res.resume();
    res.on('end', () => {
      if (res.statusCode !== 200) fail('GET /users/me answered ' + res.statusCode);
      fs.writeFileSync(cacheFile, script.createCachedData());
      process.exit(0);
    });
  }).on('error', (err) => fail(err.message));
  return true;
};
process.argv = [process.argv[0], bundleFile, 'serve', '--demo', '--data-dir', ':memory:', '--port', '0'];
const mod = new Module(bundleFile);
mod.filename = bundleFile;
mod.paths = Module._nodeModulePaths(path.dirname(bundleFile));
script.runInThisContext().call(mod.exports, mod.exports, Module.createRequire(bundleFile), mod, bundleFile, path.dirname(bundleFile));
`;

// The target: this machine's Node and addons, or (--arch arm64) the cross build's. `run` gives the
// command that runs a program of the target's CPU.
const { values: args } = parseArgs({ options: { arch: { type: 'string', default: process.arch } } });
if (args.arch !== process.arch && args.arch !== 'arm64') throw new Error(`build.mjs: --arch must be ${process.arch} or arm64`);
const cross = args.arch !== process.arch;
const target = { node: process.execPath, run: (file, argv) => [file, argv], uwsAsset: UWS_ASSET, sqliteDir: null, exeName: 'parley', timeoutMs: 30000 };
if (cross) {
  checkTools();
  const cacheDir = path.join(root, '.cache', 'arm64');
  const node = arm64Node(cacheDir);
  Object.assign(target, {
    node: node.node,
    run: emulated,
    // Same Node version, so the same ABI (process.versions.modules) as this one.
    uwsAsset: uwsAssetName('linux', 'arm64', process.versions.modules),
    sqliteDir: arm64Sqlite(cacheDir, node).dir,
    exeName: 'parley-linux-arm64',
    // An emulated start takes seconds, not a tenth of one; a loaded machine slows it further.
    timeoutMs: 300000,
  });
}
const uwsFile = path.join(path.dirname(require.resolve('@trufflesuite/uws-js-unofficial/package.json')), 'binaries', target.uwsAsset);
const sqliteFile = path.join(target.sqliteDir ?? path.dirname(require.resolve('better-sqlite3/package.json')), 'build', 'Release', SQLITE_ASSET);
for (const f of [uwsFile, sqliteFile]) if (!fs.existsSync(f)) throw new Error(`build.mjs: missing native addon ${f}`);

// Everything is made in a private staging dir and moved into dist/ by rename at the end, so concurrent
// builds never mix each other's files and a failed build leaves the previous outputs intact.
fs.mkdirSync(dist, { recursive: true });
const stage = fs.mkdtempSync(path.join(dist, '.stage-'));
const bundle = path.join(dist, 'parley.cjs');
const exe = path.join(dist, target.exeName);
let webManifest;
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
    // The heavy dependencies are the lazy chunks of step 2, loaded by src/lazy.ts.
    external: [
      '@trufflesuite/uws-js-unofficial',
      '@trufflesuite/uws-js-unofficial/package.json',
      'better-sqlite3/package.json',
      ...Object.values(LAZY_CHUNKS),
    ],
    define: {
      PARLEY_SCHEMA_SQL: JSON.stringify(fs.readFileSync(path.join(root, 'schema.sql'), 'utf8')),
      PARLEY_LAZY_CHUNKS: 'true',
      // cli-entry.ts starts the CLI; main.ts's `require.main === module` check must not start it again.
      'require.main': 'undefined',
    },
    banner: { js: '#!/usr/bin/env node' },
    legalComments: 'none',
    logLevel: 'warning',
  });
  // esbuild's __toESM copies every property of a CommonJS module into a fresh object at every import
  // site: 49 imports of node:fs, node:path and node:crypto made ~3000 accessor properties at start, so
  // many that V8 optimised the copying loop with TurboFan (2-3 ms, and 5 MB more resident memory,
  // most of it TurboFan's own code pages). The copies are interchangeable (accessors reading the
  // module), so one per module and mode is made and shared.
  const TO_ESM = 'var __toESM = (mod, isNodeMode, target) => (';
  const bundleText = fs.readFileSync(stagedBundle, 'utf8');
  if (bundleText.split(TO_ESM).length !== 2) throw new Error("build.mjs: esbuild's __toESM helper changed: update the patch");
  fs.writeFileSync(
    stagedBundle,
    bundleText.replace(
      TO_ESM,
      [
        'var __toESMShared = new WeakMap();',
        'var __toESM = (mod, isNodeMode) => {',
        '  if (mod === null || (typeof mod !== "object" && typeof mod !== "function")) return __toESMCopy(mod, isNodeMode);',
        '  let copies = __toESMShared.get(mod);',
        '  if (!copies) __toESMShared.set(mod, (copies = []));',
        '  return (copies[isNodeMode ? 1 : 0] ??= __toESMCopy(mod, isNodeMode));',
        '};',
        'var __toESMCopy = (mod, isNodeMode, target) => (',
      ].join('\n'),
    ),
  );
  fs.chmodSync(stagedBundle, 0o755);
  // The bundle must not contain any chunk's package (an `import` of one outside src/lazy.ts would
  // leave a require that fails inside the executable).
  const leaked = Object.values(LAZY_CHUNKS).filter((pkg) => fs.readFileSync(stagedBundle, 'utf8').includes(`require("${pkg}")`));
  if (leaked.length) throw new Error(`build.mjs: the bundle requires ${leaked.join(', ')}: load them through src/lazy.ts`);

  // 2. The lazy chunks: one self-contained CommonJS file per heavy dependency (src/lazy.ts).
  const chunks = {};
  for (const name of chunkNames) {
    chunks[name] = path.join(stage, chunkPath(name));
    await esbuild.build({
      stdin: { contents: `module.exports = require(${JSON.stringify(LAZY_CHUNKS[name])});`, resolveDir: root, loader: 'js' },
      outfile: chunks[name],
      bundle: true,
      format: 'cjs',
      platform: 'node',
      target: 'node20',
      legalComments: 'none',
      logLevel: 'warning',
    });
  }

  // 2b. The web client: content-hashed files in dist/web, embedded as the assets web/NAME.
  const stagedWeb = path.join(stage, 'web');
  webManifest = await buildWeb(stagedWeb);

  // 3. The executable's entry script and the bundle's code cache, recorded by a training run.
  const seaMain = path.join(stage, 'sea-main.cjs');
  await esbuild.build({
    entryPoints: [path.join(root, 'src', 'sea-main.ts')],
    outfile: seaMain,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    define: { PARLEY_BUNDLE_ASSET: JSON.stringify(BUNDLE_ASSET), PARLEY_CODE_CACHE_ASSET: JSON.stringify(CODE_CACHE_ASSET) },
    logLevel: 'warning',
  });
  const wrapped = path.join(stage, 'parley.wrapped.js');
  // The #! line is only valid at the very start of a script.
  fs.writeFileSync(wrapped, Module.wrap(fs.readFileSync(stagedBundle, 'utf8').replace(/^#!/, '//')));
  const codeCache = path.join(stage, CODE_CACHE_ASSET);
  // V8 rejects a cache made under other V8 flags: train (and check) as a plain start runs, without NODE_OPTIONS.
  const trainEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PARLEY_') && k !== 'NODE_OPTIONS'));
  if (target.sqliteDir) {
    // The training run loads the addons as src/native.ts does from source, through package.json files
    // resolved from the bundle's directory: this one comes first, ahead of the x64 build in node_modules.
    // (The uWS package ships every CPU's addon, so its own copy serves.)
    fs.mkdirSync(path.join(stage, 'node_modules'));
    fs.symlinkSync(target.sqliteDir, path.join(stage, 'node_modules', 'better-sqlite3'), 'dir');
  }
  const trained = spawnSync(...target.run(target.node, ['-e', TRAIN, wrapped, stagedBundle, codeCache, String(target.timeoutMs)]), { encoding: 'utf8', env: trainEnv });
  if (trained.status !== 0) {
    process.stderr.write(trained.stdout + trained.stderr);
    throw new Error(`build.mjs: recording the code cache failed (${trained.error?.message ?? `exit ${trained.status}`})`);
  }

  // 4. The SEA blob. The manifest carries each addon's hash, so a start with a warm cache need not
  // read (or hash) the embedded bytes at all.
  const addons = { [target.uwsAsset]: uwsFile, [SQLITE_ASSET]: sqliteFile };
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
    main: seaMain,
    output: blob,
    disableExperimentalSEAWarning: true,
    // No useCodeCache: the entry script is tiny, and the bundle has its own, better cache (src/sea-main.ts).
    assets: {
      ...addons,
      [MANIFEST_ASSET]: manifestFile,
      [BUNDLE_ASSET]: wrapped,
      [CODE_CACHE_ASSET]: codeCache,
      ...Object.fromEntries(chunkNames.map((n) => [chunkPath(n), chunks[n]])),
      ...Object.fromEntries(['manifest.json', ...webManifest.files].map((f) => [`web/${f}`, path.join(stagedWeb, f)])),
      // The built-in images (src/lib/static-files.ts reads them as images/NAME).
      ...Object.fromEntries(staticImages.map((f) => [`images/${f}`, path.join(imagesDir, f)])),
    },
  };
  fs.writeFileSync(seaConfig, JSON.stringify(config, null, 2) + '\n');
  // Made by the target Node: the blob's format is that Node's.
  quiet(...target.run(target.node, ['--experimental-sea-config', seaConfig]));

  // 5. A copy of this node with the blob injected. postject runs as a child process: its LIEF backend
  // prints harmless section warnings that we only show on failure.
  const stagedExe = path.join(stage, target.exeName);
  fs.copyFileSync(target.node, stagedExe);
  fs.chmodSync(stagedExe, 0o755);
  const postject = path.join(path.dirname(require.resolve('postject/package.json')), 'dist', 'cli.js');
  quiet(process.execPath, [postject, stagedExe, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2', '--overwrite']);
  // A cache V8 rejects (other V8 version or flags) would silently cost ~40 ms at every start.
  const check = spawnSync(...target.run(stagedExe, ['--version']), { encoding: 'utf8', env: { ...trainEnv, PARLEY_CHECK_CODE_CACHE: '1' } });
  if (check.status !== 0) throw new Error(`build.mjs: the executable does not start: ${check.stderr || check.error?.message}`);

  // Rename, never overwrite in place: a running dist/parley keeps its old inode.
  if (cross) fs.renameSync(stagedExe, exe);
  else {
    for (const name of chunkNames) {
      fs.mkdirSync(path.dirname(path.join(dist, chunkPath(name))), { recursive: true });
      fs.renameSync(chunks[name], path.join(dist, chunkPath(name)));
    }
    fs.rmSync(path.join(dist, 'web'), { recursive: true, force: true });
    fs.renameSync(stagedWeb, path.join(dist, 'web'));
    // dist/parley.cjs run by node reads the built-in images beside it.
    fs.rmSync(path.join(dist, 'assets'), { recursive: true, force: true });
    fs.cpSync(imagesDir, path.join(dist, 'assets', 'images'), { recursive: true });
    fs.renameSync(stagedBundle, bundle);
    fs.renameSync(stagedExe, exe);
  }
} finally {
  fs.rmSync(stage, { recursive: true, force: true });
}

const size = (f) => `${(fs.statSync(f).size / 1024 / 1024).toFixed(1)} MB`;
if (cross) {
  console.log(`build: ${rel(exe)} (${size(exe)}) with ${target.uwsAsset} and ${SQLITE_ASSET} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  process.exit(0);
}
console.log(
  `build: ${rel(bundle)} (${size(bundle)}), ${rel(exe)} (${size(exe)}) with ${target.uwsAsset} and ${SQLITE_ASSET}` +
    ` and ${chunkNames.length} lazy chunks (${chunkNames.map((n) => `${n} ${(fs.statSync(path.join(dist, chunkPath(n))).size / 1024).toFixed(0)} KB`).join(', ')})` +
    ` and the web client (${webManifest.files.length} files in dist/web)` +
    ` in ${((performance.now() - started) / 1000).toFixed(1)} s`,
);
