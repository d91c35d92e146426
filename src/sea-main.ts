// The entry script of the single executable (build.mjs). It compiles the bundle, embedded as a SEA
// asset, with a V8 code cache that the build recorded after the bundle had served a demo start and one
// request: the functions a start runs then need no compiling. Node's own SEA code cache (useCodeCache)
// is made before anything runs and holds little more than the top-level code: ~15 ms slower to start.
// Only built-in modules here: inside a SEA the entry script's `require` knows nothing else.
import path from 'node:path';
import vm from 'node:vm';

// Defined by build.mjs. The bundle asset is already wrapped as a CommonJS function expression
// `(function (exports, require, module, __filename, __dirname) { ... })`, the very text the cache was
// recorded for (wrapping it here would cost a second copy of its 0.9 MB).
declare const PARLEY_BUNDLE_ASSET: string;
declare const PARLEY_CODE_CACHE_ASSET: string;

type Sea = { getAsset(key: string): ArrayBuffer; getAsset(key: string, encoding: string): string; getRawAsset?(key: string): ArrayBuffer };

const sea = require('node:sea') as Sea;
const cachedData = Buffer.from(sea.getRawAsset ? sea.getRawAsset(PARLEY_CODE_CACHE_ASSET) : sea.getAsset(PARLEY_CODE_CACHE_ASSET));
const filename = path.join(path.dirname(process.execPath), 'parley.cjs'); // for stack traces
const script = new vm.Script(sea.getAsset(PARLEY_BUNDLE_ASSET, 'utf8'), { filename, cachedData });
// build.mjs checks that V8 accepts the cache (a rejected one still works, only slower).
if (script.cachedDataRejected && process.env.PARLEY_CHECK_CODE_CACHE) {
  process.stderr.write('parley: the embedded code cache was rejected\n');
  process.exit(70);
}
const bundle = script.runInThisContext() as (...args: unknown[]) => void;
bundle.call(module.exports, module.exports, require, module, filename, path.dirname(filename));
