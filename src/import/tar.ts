// Unpacking a .tar.gz someone else made (a Zulip export) into a directory of our own, defensively, by
// the rules zip.ts applies to a .zip: every entry name checked (no absolute paths, no "..", no
// backslashes, no control characters, valid UTF-8), only plain files and directories (a symbolic or
// hard link, a device or a FIFO stops the import), no name twice, and the bytes counted as they come
// and cut off at the per-file and total caps whatever the header claims. A tarball has no central
// directory and its order is arbitrary, so it is unpacked whole first and read from the disk after.
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform, Writable } from 'node:stream';
import zlib from 'node:zlib';
import { loadTarStream } from '../lazy';
import { ImportError } from './errors';
import { unsafeNameReason } from './zip';

export interface TarLimits {
  maxEntries: number;
  maxEntryBytes: number;
  maxTotalBytes: number;
}

export const DEFAULT_TAR_LIMITS: TarLimits = {
  maxEntries: 1_000_000,
  maxEntryBytes: 4 * 1024 ** 3,
  maxTotalBytes: 256 * 1024 ** 3,
};

const show = (name: string) => JSON.stringify(name.length > 200 ? name.slice(0, 200) + '…' : name);

/**
 * Unpacks `file` into `dest` (a new, empty directory). Returns the files (checked names, '/'-separated)
 * with their sizes. Throws ImportError naming the first bad entry; what was unpacked stays in `dest`
 * for the caller's cleanup (the import's staging directory).
 */
export async function unpackTarGz(file: string, dest: string, limits: TarLimits = DEFAULT_TAR_LIMITS): Promise<Map<string, number>> {
  const files = new Map<string, number>();
  const dirs = new Set<string>();
  let count = 0;
  let total = 0;
  const tar = loadTarStream();
  const extract = tar.extract();
  extract.on('entry', (header, stream, next) => {
    // The entry's stream fails with the extraction when an entry is refused: its error is ours, reported once.
    stream.on('error', () => undefined);
    const fail = (err: unknown) => {
      stream.resume();
      next(err instanceof ImportError ? err : new ImportError(`${file}: cannot unpack entry ${show(header.name)} (${(err as Error).message})`));
    };
    try {
      if (++count > limits.maxEntries) throw new ImportError(`${file} holds more than ${limits.maxEntries} entries`);
      // tar-stream decodes names as UTF-8 (ustar and PAX alike): bytes that are not become U+FFFD.
      const name = header.name;
      if (name.includes('\uFFFD')) throw new ImportError(`${file}: an entry's name is not valid UTF-8`);
      // "./" in front is how some tar programs write every name: the same place.
      const clean = name.replace(/^(\.\/)+/, '');
      if (clean === '' && header.type === 'directory') {
        stream.resume();
        stream.on('end', () => next());
        return;
      }
      const reason = unsafeNameReason(clean);
      if (reason) throw new ImportError(`${file}: unsafe entry name ${show(name)} (${reason})`);
      const rel = clean.replace(/\/$/, '');
      if (header.type === 'directory') {
        if (files.has(rel)) throw new ImportError(`${file}: entry ${show(name)} appears twice`);
        dirs.add(rel);
        fs.mkdirSync(path.join(dest, rel), { recursive: true });
        stream.resume();
        stream.on('end', () => next());
        return;
      }
      if (header.type !== 'file' && header.type !== 'contiguous-file') {
        throw new ImportError(`${file}: entry ${show(name)} is a ${header.type ?? 'special file'}, not a file (links and devices are refused)`);
      }
      if (files.has(rel) || dirs.has(rel)) throw new ImportError(`${file}: entry ${show(name)} appears twice`);
      const claimed = header.size ?? 0;
      if (claimed > limits.maxEntryBytes) throw new ImportError(`${file}: entry ${show(name)} claims ${claimed} bytes, more than the ${limits.maxEntryBytes} an entry may hold`);
      if (total + claimed > limits.maxTotalBytes) throw new ImportError(`${file}: its entries hold more than ${limits.maxTotalBytes} bytes in all`);
      const target = path.join(dest, rel);
      fs.mkdirSync(path.dirname(target), { recursive: true });
      let seen = 0;
      const counter = new Transform({
        transform(chunk: Buffer, _enc, done) {
          seen += chunk.length;
          if (seen > limits.maxEntryBytes) done(new ImportError(`${file}: entry ${show(name)} holds more than ${limits.maxEntryBytes} bytes`));
          else if (total + seen > limits.maxTotalBytes) done(new ImportError(`${file}: its entries hold more than ${limits.maxTotalBytes} bytes in all`));
          else done(null, chunk);
        },
      });
      files.set(rel, 0);
      // 'wx': never over an existing file (a name twice, or one a directory took).
      pipeline(stream, counter, fs.createWriteStream(target, { flags: 'wx' })).then(
        () => {
          total += seen;
          files.set(rel, seen);
          next();
        },
        fail,
      );
    } catch (err) {
      fail(err);
    }
  });
  try {
    await pipeline(fs.createReadStream(file), zlib.createGunzip(), extract as unknown as Writable);
  } catch (err) {
    if (err instanceof ImportError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new ImportError(`${file} does not exist`);
    throw new ImportError(`${file} is not a readable .tar.gz archive (${(err as Error).message})`);
  }
  return files;
}
