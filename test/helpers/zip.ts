// Writes .zip archives for tests (the importers' fixtures), including broken and hostile ones: sizes
// that lie, names that climb out of the archive. Deflate or stored entries, no zip64.
import zlib from 'node:zlib';

export interface ZipFileSpec {
  name: string;
  data: string | Buffer;
  /** Store instead of deflate. */
  store?: boolean;
  /** The uncompressed size written in the headers (a lie, when it differs from the data's). */
  claimSize?: number;
  /** Sets the UTF-8 name flag (Slack's exports do not). */
  utf8Flag?: boolean;
  /** A Unix mode in the central directory (made by Unix), e.g. 0o120777 for a symbolic link whose data is its target. */
  unixMode?: number;
}

/** The archive's bytes. */
export function makeZip(files: readonly ZipFileSpec[]): Buffer {
  const local: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const f of files) {
    const data = typeof f.data === 'string' ? Buffer.from(f.data, 'utf8') : f.data;
    const body = f.store ? data : zlib.deflateRawSync(data);
    const name = Buffer.from(f.name, 'utf8');
    const crc = zlib.crc32(data);
    const size = f.claimSize ?? data.length;
    const flags = f.utf8Flag ? 0x0800 : 0;
    const method = f.store ? 0 : 8;
    const header = Buffer.alloc(30);
    header.writeUInt32LE(0x04034b50, 0);
    header.writeUInt16LE(20, 4);
    header.writeUInt16LE(flags, 6);
    header.writeUInt16LE(method, 8);
    header.writeUInt16LE(0, 10); // time
    header.writeUInt16LE(0x21, 12); // date: 1980-01-01
    header.writeUInt32LE(crc, 14);
    header.writeUInt32LE(body.length, 18);
    header.writeUInt32LE(size, 22);
    header.writeUInt16LE(name.length, 26);
    header.writeUInt16LE(0, 28);
    local.push(header, name, body);
    const dir = Buffer.alloc(46);
    dir.writeUInt32LE(0x02014b50, 0);
    dir.writeUInt16LE(f.unixMode === undefined ? 20 : (3 << 8) | 20, 4); // version made by: 3 = Unix
    dir.writeUInt16LE(20, 6);
    dir.writeUInt16LE(flags, 8);
    dir.writeUInt16LE(method, 10);
    dir.writeUInt16LE(0, 12);
    dir.writeUInt16LE(0x21, 14);
    dir.writeUInt32LE(crc, 16);
    dir.writeUInt32LE(body.length, 20);
    dir.writeUInt32LE(size, 24);
    dir.writeUInt16LE(name.length, 28);
    if (f.unixMode !== undefined) dir.writeUInt32LE((f.unixMode << 16) >>> 0, 38);
    dir.writeUInt32LE(offset, 42);
    central.push(dir, name);
    offset += header.length + name.length + body.length;
  }
  const dirBytes = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(dirBytes.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...local, dirBytes, end]);
}

/** A Slack-style export: each key a file name, each value JSON (or raw bytes for uploads). */
export function makeExportZip(files: Record<string, unknown>): Buffer {
  return makeZip(
    Object.entries(files).map(([name, v]) => ({ name, data: Buffer.isBuffer(v) || typeof v === 'string' ? (v as Buffer | string) : JSON.stringify(v) })),
  );
}
