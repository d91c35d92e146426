// Files Parley serves at Zulip's /static/ URLs that clients are given before anything was uploaded:
// the standard emoji table of `server_emoji_data_url` (built from emoji-data.json) and the built-in
// images of assets/images/ (scripts/gen-static-images.mjs draws them). The images are embedded in the
// single executable as SEA assets `images/NAME` (build.mjs), sit in dist/assets/images beside the
// bundle, or, run from source, in the repository's assets/images. Read once per process.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { seaModule } from '../native';
import { allEmojiCodeToNames } from './emoji';

/** The images of assets/images/ (the names build.mjs embeds). */
export const STATIC_IMAGES = ['default-realm-icon.png', 'unknown-user-avatar.png'] as const;
export type StaticImage = (typeof STATIC_IMAGES)[number];

// Defined (true) by build.mjs in the bundle; undefined when running from source.
declare const PARLEY_LAZY_CHUNKS: boolean | undefined;

const images = new Map<string, Buffer>();

/** The bytes of a built-in image, or null for any other name. */
export function staticImage(name: string): Buffer | null {
  if (!(STATIC_IMAGES as readonly string[]).includes(name)) return null;
  let body = images.get(name);
  if (body === undefined) {
    const sea = seaModule();
    body = sea
      ? Buffer.from(sea.getAsset(`images/${name}`))
      : fs.readFileSync(
          typeof PARLEY_LAZY_CHUNKS === 'undefined' ? path.join(__dirname, '..', '..', 'assets', 'images', name) : path.join(__dirname, 'assets', 'images', name),
        );
    images.set(name, body);
  }
  return body;
}

export interface EmojiApiFile {
  body: Buffer;
  /** The body gzipped once (it is ~10× smaller), for clients that accept it. */
  gzip: Buffer;
  /** The first hex digits of the body's SHA-256: the versioned URL's name (`emoji_api.<hash>.json`). */
  hash: string;
}

let emojiApi: EmojiApiFile | null = null;

/** Zulip's emoji_api.json: `{"code_to_names": {code: [canonical name, ...aliases]}}`. */
export function emojiApiFile(): EmojiApiFile {
  if (!emojiApi) {
    const body = Buffer.from(JSON.stringify({ code_to_names: allEmojiCodeToNames() }));
    emojiApi = { body, gzip: zlib.gzipSync(body, { level: 9 }), hash: crypto.createHash('sha256').update(body).digest('hex').slice(0, 12) };
  }
  return emojiApi;
}

/** The root-relative URL of the emoji table (versioned by its content, so it may be cached for good). */
export const emojiApiUrl = () => `/static/generated/emoji/emoji_api.${emojiApiFile().hash}.json`;
