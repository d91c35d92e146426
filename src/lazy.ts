// The one place that loads the heavy, rarely needed dependencies: KaTeX and markdown-it (rendering
// Markdown), libsodium (push encryption), nodemailer (SMTP), re2js (linkifier patterns, 0.26 MB),
// prom-client (GET /metrics, off by default), tar-stream (`parley export`), yauzl (reading .zip archives: `parley import` only).
// The first four were 2.8 of the bundle's 3.6 MB; even when only required inside functions, a bundle
// that contains them costs start time (parsing, code cache) and idle memory. So build.mjs bundles
// each into its own chunk, evaluated on first use: dist/lazy/NAME.cjs next to dist/parley.cjs, and the
// same text embedded as the SEA asset lazy/NAME.cjs in the single executable. From source (tsx) they
// are plain requires from node_modules.
import type Module from 'node:module';
import path from 'node:path';
import type Katex from 'katex';
import type MarkdownIt from 'markdown-it';
import type Sodium from 'libsodium-wrappers';
import type Nodemailer from 'nodemailer';
import type * as Re2js from 're2js';
import type * as PromClient from 'prom-client';
import type * as TarStream from 'tar-stream';
import type Yauzl from 'yauzl';
import { seaModule } from './native';

/** The chunks build.mjs makes: chunk name → the package it bundles (and the bundle keeps external). */
export const LAZY_CHUNKS = {
  katex: 'katex',
  'markdown-it': 'markdown-it',
  sodium: 'libsodium-wrappers',
  nodemailer: 'nodemailer',
  re2js: 're2js',
  'prom-client': 'prom-client',
  'tar-stream': 'tar-stream',
  yauzl: 'yauzl',
} as const;

export type ChunkName = keyof typeof LAZY_CHUNKS;

/** A chunk's file under dist/ and its SEA asset name. */
export function chunkPath(name: ChunkName): string {
  return `lazy/${name}.cjs`;
}

// Defined (true) by build.mjs in the bundle; undefined when running from source.
declare const PARLEY_LAZY_CHUNKS: boolean | undefined;

type CompilableModule = Module & { filename: string; paths: string[]; _compile(source: string, filename: string): void };

/** Evaluates a chunk of the bundle: from the SEA asset inside the executable, else from dist/lazy/. */
function loadChunk(name: ChunkName): unknown {
  const rel = chunkPath(name);
  const sea = seaModule();
  // dist/parley.cjs: the chunk file sits next to it. (A computed require: esbuild leaves it alone.)
  if (!sea) return require(path.join(__dirname, rel));
  // Inside the SEA `require` only knows built-in modules, so the chunk is compiled as a CommonJS module
  // by hand. Chunks are self-contained and require only built-ins. The file name is for stack traces.
  const filename = path.join(path.dirname(process.execPath), rel);
  const ModuleClass = require('node:module') as typeof Module;
  const mod = new ModuleClass(filename) as CompilableModule;
  mod.filename = filename;
  mod.paths = [];
  mod._compile(sea.getAsset(rel, 'utf8'), filename);
  return mod.exports;
}

const loaded = new Map<ChunkName, unknown>();

/** The chunk's exports, evaluated once. */
function once(name: ChunkName, load: () => unknown): unknown {
  let exports = loaded.get(name);
  if (exports === undefined) {
    exports = load();
    loaded.set(name, exports);
  }
  return exports;
}

// Each loader names its package in a literal require on the source-only side of the condition, which
// esbuild removes from the bundle (build.mjs checks that no such require is left).

/** The markdown-it class. */
export const loadMarkdownIt = (): typeof MarkdownIt =>
  once('markdown-it', () => (typeof PARLEY_LAZY_CHUNKS === 'undefined' ? require('markdown-it') : loadChunk('markdown-it'))) as typeof MarkdownIt;

/** KaTeX. */
export const loadKatex = (): typeof Katex =>
  once('katex', () => (typeof PARLEY_LAZY_CHUNKS === 'undefined' ? require('katex') : loadChunk('katex'))) as typeof Katex;

/** libsodium-wrappers (await its `ready` before use). */
export const loadSodium = (): typeof Sodium =>
  once('sodium', () => (typeof PARLEY_LAZY_CHUNKS === 'undefined' ? require('libsodium-wrappers') : loadChunk('sodium'))) as typeof Sodium;

/** nodemailer. */
export const loadNodemailer = (): typeof Nodemailer =>
  once('nodemailer', () => (typeof PARLEY_LAZY_CHUNKS === 'undefined' ? require('nodemailer') : loadChunk('nodemailer'))) as typeof Nodemailer;

/** re2js: RE2 (linear-time regular expressions) for linkifier patterns (src/lib/re2.ts). */
export const loadRe2js = (): typeof Re2js =>
  once('re2js', () => (typeof PARLEY_LAZY_CHUNKS === 'undefined' ? require('re2js') : loadChunk('re2js'))) as typeof Re2js;

/** prom-client (only with metrics on: src/lib/metrics.ts). */
export const loadPromClient = (): typeof PromClient =>
  once('prom-client', () => (typeof PARLEY_LAZY_CHUNKS === 'undefined' ? require('prom-client') : loadChunk('prom-client'))) as typeof PromClient;

/** tar-stream (`parley export`: src/export/zulip-export.ts). */
export const loadTarStream = (): typeof TarStream =>
  once('tar-stream', () => (typeof PARLEY_LAZY_CHUNKS === 'undefined' ? require('tar-stream') : loadChunk('tar-stream'))) as typeof TarStream;
/** yauzl (src/import/zip.ts: only `parley import` reads archives). */
export const loadYauzl = (): typeof Yauzl =>
  once('yauzl', () => (typeof PARLEY_LAZY_CHUNKS === 'undefined' ? require('yauzl') : loadChunk('yauzl'))) as typeof Yauzl;
