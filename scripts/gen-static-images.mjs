// Draws the built-in images (assets/images/*.png) that answer URLs a client is given before anything
// was uploaded: the organization's default icon (the favicon's speech bubble, 128×128) and the avatar
// of a user the viewer may not see. Plain RGBA PNGs from a few shapes, supersampled 4×4, so the
// repository needs no image tool: `node scripts/gen-static-images.mjs` rewrites them identically.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const out = path.join(root, 'assets', 'images');

const CRC = new Int32Array(256).map((_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c;
});
function crc32(buf) {
  let c = -1;
  for (const b of buf) c = CRC[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}
function chunk(type, data) {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}
/** A PNG of `size`×`size` pixels; `paint(x, y)` gives [r, g, b, a] for a point in 0..64 units. */
function png(size, paint) {
  const S = 4;
  const raw = Buffer.alloc(size * (size * 4 + 1));
  for (let y = 0; y < size; y++) {
    raw[y * (size * 4 + 1)] = 0;
    for (let x = 0; x < size; x++) {
      const acc = [0, 0, 0, 0];
      for (let sy = 0; sy < S; sy++)
        for (let sx = 0; sx < S; sx++) {
          const [r, g, b, a] = paint(((x + (sx + 0.5) / S) * 64) / size, ((y + (sy + 0.5) / S) * 64) / size);
          acc[0] += r * a;
          acc[1] += g * a;
          acc[2] += b * a;
          acc[3] += a;
        }
      const o = y * (size * 4 + 1) + 1 + x * 4;
      const a = acc[3];
      raw[o] = a ? Math.round(acc[0] / a) : 0;
      raw[o + 1] = a ? Math.round(acc[1] / a) : 0;
      raw[o + 2] = a ? Math.round(acc[2] / a) : 0;
      raw[o + 3] = Math.round(a / (S * S));
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr.set([8, 6, 0, 0, 0], 8);
  const sig = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([sig, chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(raw, { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
}

const inRoundRect = (x, y, x0, y0, x1, y1, r) => {
  if (x < x0 || x > x1 || y < y0 || y > y1) return false;
  const cx = Math.min(Math.max(x, x0 + r), x1 - r);
  const cy = Math.min(Math.max(y, y0 + r), y1 - r);
  return (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
};
const inCircle = (x, y, cx, cy, r) => (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
const hex = (h) => [parseInt(h.slice(1, 3), 16), parseInt(h.slice(3, 5), 16), parseInt(h.slice(5, 7), 16), 255];
const NONE = [0, 0, 0, 0];

// web/public/favicon.svg's bubble: the organization icon when none was uploaded.
const BLUE = hex('#2864b4');
const WHITE = hex('#ffffff');
const icon = png(128, (x, y) => {
  if (!inRoundRect(x, y, 0, 0, 64, 64, 14)) return NONE;
  for (const cx of [24, 32, 40]) if (inCircle(x, y, cx, 31, 3)) return BLUE;
  if (inRoundRect(x, y, 10, 18, 54, 44, 6)) return WHITE;
  // The tail: from (20,44) to (30,44) down to (20,52).
  if (y >= 44 && y <= 52 && x >= 20 && x <= 30 - ((y - 44) * 10) / 8) return WHITE;
  return BLUE;
});

// A grey head and shoulders: Zulip's unknown-user-avatar.png, for users the viewer may not see.
const GREY = hex('#9ca3af');
const LIGHT = hex('#e5e7eb');
const unknown = png(100, (x, y) => {
  if (inCircle(x, y, 32, 24, 11)) return GREY;
  if (y >= 40 && inRoundRect(x, y, 12, 40, 52, 76, 18)) return GREY;
  return LIGHT;
});

fs.mkdirSync(out, { recursive: true });
fs.writeFileSync(path.join(out, 'default-realm-icon.png'), icon);
fs.writeFileSync(path.join(out, 'unknown-user-avatar.png'), unknown);
console.log(`gen-static-images: ${icon.length} + ${unknown.length} bytes`);
