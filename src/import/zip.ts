// Reading a .zip archive that someone else made (a Slack export), defensively: every entry name is
// checked before anything else happens (no absolute paths, no "..", no backslashes, no control
// characters, valid UTF-8), a size an entry claims is capped before it is read, and what is read is
// counted and cut off at the cap, so a forged header or a zip bomb stops the import instead of filling the disk or the memory.
// yauzl reads the central directory and opens entries at random, so nothing is extracted up front.
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { Transform, type Readable } from 'node:stream';
import type yauzl from 'yauzl';
import { loadYauzl } from '../lazy';
import { ImportError } from './errors';

export interface ZipLimits {
  /** Most entries the archive may list. */
  maxEntries: number;
  /** Most bytes one entry may hold once decompressed. */
  maxEntryBytes: number;
  /** Most bytes all entries together may hold once decompressed. */
  maxTotalBytes: number;
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = {
  maxEntries: 1_000_000,
  maxEntryBytes: 4 * 1024 ** 3,
  maxTotalBytes: 256 * 1024 ** 3,
};

export interface ZipEntry {
  /** The checked name: '/'-separated, relative, no '.' or '..' segments; directories end with '/'. */
  name: string;
  /** The decompressed size the archive claims (checked against the limits; enforced while reading). */
  size: number;
  raw: yauzl.Entry;
}

export interface ZipArchive {
  readonly file: string;
  /** Files (not directories) by checked name. */
  readonly entries: ReadonlyMap<string, ZipEntry>;
  /** The whole entry in memory; refuses one larger than `maxBytes`. */
  readBuffer(entry: ZipEntry, maxBytes: number): Promise<Buffer>;
  /** The entry parsed as JSON (UTF-8); the message names the entry when it is not JSON. */
  readJson(entry: ZipEntry, maxBytes: number): Promise<unknown>;
  /** Writes the entry to `dest` (a new file), refusing more than `maxBytes`. Returns the bytes written. */
  copyTo(entry: ZipEntry, dest: string, maxBytes: number): Promise<number>;
  close(): void;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Why an entry name is unsafe, or null. Names are decoded as UTF-8 whatever the flag says (Slack's exports do not set it). */
export function unsafeNameReason(name: string): string | null {
  if (name === '') return 'an empty name';
  if (name.includes('\0')) return 'a NUL character';
  // Names reach the operator's terminal in messages: an escape sequence there could rewrite what it shows.
  if (/[\u0001-\u001f\u007f-\u009f]/.test(name)) return 'a control character';
  if (name.includes('\\')) return 'a backslash';
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) return 'an absolute path';
  const segments = name.replace(/\/$/, '').split('/');
  if (segments.some((s) => s === '..')) return 'a ".." segment that leaves the archive';
  if (segments.some((s) => s === '' || s === '.')) return 'an empty or "." segment';
  return null;
}

const show = (name: string) => JSON.stringify(name.length > 200 ? name.slice(0, 200) + '…' : name);

/** Opens `file` and checks every entry's name and claimed size; throws ImportError naming the first bad one. */
export async function openZip(file: string, limits: ZipLimits = DEFAULT_ZIP_LIMITS): Promise<ZipArchive> {
  let zip: yauzl.ZipFile;
  try {
    zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
      // decodeStrings off: yauzl would decode names as CP437 without the UTF-8 flag; we decode (and check) them ourselves.
      loadYauzl().open(file, { lazyEntries: true, autoClose: false, decodeStrings: false, validateEntrySizes: true, strictFileNames: false }, (err, z) =>
        err ? reject(err) : resolve(z as yauzl.ZipFile),
      ),
    );
  } catch (err) {
    throw new ImportError(`${file} is not a readable .zip archive (${(err as Error).message})`);
  }
  const entries = new Map<string, ZipEntry>();
  try {
    let total = 0;
    let count = 0;
    await new Promise<void>((resolve, reject) => {
      zip.on('error', (err: Error) => reject(new ImportError(`${file} is not a readable .zip archive (${err.message})`)));
      zip.on('end', () => resolve());
      zip.on('entry', (raw: yauzl.Entry) => {
        try {
          if (++count > limits.maxEntries) throw new ImportError(`${file} lists more than ${limits.maxEntries} entries`);
          let name: string;
          try {
            name = utf8.decode(raw.fileName as unknown as Buffer);
          } catch {
            throw new ImportError(`${file}: an entry's name is not valid UTF-8`);
          }
          const reason = unsafeNameReason(name);
          if (reason) throw new ImportError(`${file}: unsafe entry name ${show(name)} (${reason})`);
          if (raw.isEncrypted()) throw new ImportError(`${file}: entry ${show(name)} is encrypted`);
          if (raw.uncompressedSize > limits.maxEntryBytes) {
            throw new ImportError(`${file}: entry ${show(name)} claims ${raw.uncompressedSize} bytes, more than the ${limits.maxEntryBytes} an entry may hold`);
          }
          total += raw.uncompressedSize;
          if (total > limits.maxTotalBytes) throw new ImportError(`${file}: its entries claim more than ${limits.maxTotalBytes} bytes in all`);
          if (!name.endsWith('/')) {
            if (entries.has(name)) throw new ImportError(`${file}: entry ${show(name)} appears twice`);
            entries.set(name, { name, size: raw.uncompressedSize, raw });
          }
          zip.readEntry();
        } catch (err) {
          reject(err);
        }
      });
      zip.readEntry();
    });
  } catch (err) {
    zip.close();
    throw err;
  }

  const open = (entry: ZipEntry): Promise<Readable> =>
    new Promise((resolve, reject) =>
      zip.openReadStream(entry.raw, (err, stream) => (err ? reject(new ImportError(`${file}: cannot read entry ${show(entry.name)} (${err.message})`)) : resolve(stream as Readable))),
    );
  /** Counts bytes through and fails past `maxBytes`, whatever the header said. */
  const capped = (entry: ZipEntry, maxBytes: number) => {
    let seen = 0;
    return new Transform({
      transform(chunk: Buffer, _enc, done) {
        seen += chunk.length;
        (this as Transform & { seen: number }).seen = seen;
        if (seen > maxBytes) done(new ImportError(`${file}: entry ${show(entry.name)} holds more than ${maxBytes} bytes`));
        else done(null, chunk);
      },
    });
  };
  const checkClaim = (entry: ZipEntry, maxBytes: number) => {
    if (entry.size > maxBytes) throw new ImportError(`${file}: entry ${show(entry.name)} claims ${entry.size} bytes, more than the ${maxBytes} allowed for it`);
  };
  const wrap = (entry: ZipEntry, err: unknown): Error =>
    err instanceof ImportError ? err : new ImportError(`${file}: entry ${show(entry.name)} is damaged (${(err as Error).message})`);

  const readBuffer = async (entry: ZipEntry, maxBytes: number): Promise<Buffer> => {
      checkClaim(entry, maxBytes);
      const chunks: Buffer[] = [];
      try {
        const stream = await open(entry);
        await pipeline(stream, capped(entry, maxBytes), async function* (source) {
          for await (const chunk of source) chunks.push(chunk as Buffer);
        });
      } catch (err) {
        throw wrap(entry, err);
      }
      return Buffer.concat(chunks);
  };

  return {
    file,
    entries,
    readBuffer,
    async readJson(entry, maxBytes) {
      const buf = await readBuffer(entry, maxBytes);
      let text: string;
      try {
        text = utf8.decode(buf);
      } catch {
        throw new ImportError(`${entry.name} is not valid UTF-8`);
      }
      try {
        return JSON.parse(text.replace(/^\uFEFF/, ''));
      } catch (err) {
        throw new ImportError(`${entry.name} is not valid JSON (${(err as Error).message})`);
      }
    },
    async copyTo(entry, dest, maxBytes) {
      checkClaim(entry, maxBytes);
      const counter = capped(entry, maxBytes) as Transform & { seen?: number };
      try {
        const stream = await open(entry);
        // 'wx': never overwrite a file; the destination is a fresh name in the staging directory.
        await pipeline(stream, counter, fs.createWriteStream(dest, { flags: 'wx' }));
      } catch (err) {
        fs.rmSync(dest, { force: true });
        throw wrap(entry, err);
      }
      return counter.seen ?? 0;
    },
    close() {
      // Twice is harmless (a failure after the import closed it).
      if (zip.isOpen) zip.close();
    },
  };
}
