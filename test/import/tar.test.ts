// src/import/tar.ts on its own: the caps (entries, bytes per file, bytes in all) with small limits,
// and the names tar programs write that are fine ("./" in front, directory entries).
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { makeTempDirs } from '../helpers/cli';
import { unpackTarGz } from '../../src/import/tar';
import { makeTarGz, type TarEntrySpec } from './zulip-fixture';

const tmp = makeTempDirs('parley-tar-');
after(() => tmp.cleanup());

const LIMITS = { maxEntries: 4, maxEntryBytes: 10, maxTotalBytes: 15 };

async function unpack(entries: TarEntrySpec[]) {
  const dir = tmp.make();
  const file = path.join(dir, 'x.tar.gz');
  fs.writeFileSync(file, await makeTarGz(entries));
  const dest = path.join(dir, 'out');
  fs.mkdirSync(dest);
  return { file, dest, run: () => unpackTarGz(file, dest, LIMITS) };
}

describe('unpackTarGz', () => {
  it('unpacks files and directories, "./" names included, and lists the files with their sizes', async () => {
    const u = await unpack([
      { name: './top/', type: 'directory' },
      { name: './top/a.json', data: '{}' },
      { name: 'top/sub/b.txt', data: 'hello' },
    ]);
    assert.deepEqual([...(await u.run())], [
      ['top/a.json', 2],
      ['top/sub/b.txt', 5],
    ]);
    assert.equal(fs.readFileSync(path.join(u.dest, 'top', 'sub', 'b.txt'), 'utf8'), 'hello');
  });

  it('refuses a file larger than the cap, more bytes in all than the cap, and too many entries', async () => {
    const big = await unpack([{ name: 'a', data: 'x'.repeat(11) }]);
    await assert.rejects(big.run(), { message: `${big.file}: entry "a" claims 11 bytes, more than the 10 an entry may hold` });
    const total = await unpack([
      { name: 'a', data: 'x'.repeat(8) },
      { name: 'b', data: 'x'.repeat(8) },
    ]);
    await assert.rejects(total.run(), { message: `${total.file}: its entries hold more than 15 bytes in all` });
    const many = await unpack(['a', 'b', 'c', 'd', 'e'].map((name) => ({ name, data: '' })));
    await assert.rejects(many.run(), { message: `${many.file} holds more than 4 entries` });
  });

  it('refuses a file where a directory entry was', async () => {
    const clash = await unpack([
      { name: 'a/', type: 'directory' },
      { name: 'a', data: 'x' },
    ]);
    await assert.rejects(clash.run(), { message: `${clash.file}: entry "a" appears twice` });
  });
});
