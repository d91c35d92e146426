// Reads a .tar.gz (an export) into memory for tests: entry name → bytes. Test exports are small.
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import tar from 'tar-stream';

/**
 * The archive's entries, every one a regular file (an export holds nothing else). With `withoutTopDir`
 * the names lose their first component (an export's top directory, named after its file).
 */
export async function readTarGz(bytes: Buffer, opts: { withoutTopDir?: boolean } = {}): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const extract = tar.extract();
  const done = new Promise<void>((resolve, reject) => {
    extract.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => chunks.push(c as Buffer));
      stream.on('end', () => {
        assert.equal(header.type, 'file', header.name);
        files.set(opts.withoutTopDir ? header.name.slice(header.name.indexOf('/') + 1) : header.name, Buffer.concat(chunks));
        next();
      });
    });
    extract.on('finish', () => resolve());
    extract.on('error', reject);
  });
  extract.end(zlib.gunzipSync(bytes));
  await done;
  return files;
}
