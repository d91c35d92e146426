import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MultipartParser, type MultipartResult } from '../../src/http/multipart';
import { multipart, type Part } from '../helpers/multipart';

let tmpDir: string;
before(() => {
  tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-multipart-'));
});
after(() => fs.rmSync(tmpDir, { recursive: true, force: true }));

/**
 * Feeds `body` the way uWS does: each chunk in an ArrayBuffer that is only valid during write() (here
 * it is scribbled over as soon as write() returns), with a tick between some chunks as the socket
 * would. Any reference the parser kept into a chunk instead of copying it shows up as corruption.
 */
async function feed(body: Buffer, cuts: number[], contentType: string, asBuffers = false): Promise<MultipartResult> {
  const parser = new MultipartParser({ contentType, tmpDir, maxFieldBytes: 1 << 20, maxFileBytes: 64 << 20, flow: () => undefined });
  let at = 0;
  for (const [i, end] of [...cuts, body.length].entries()) {
    if (end <= at) continue;
    if (asBuffers) {
      parser.write(Buffer.from(body.subarray(at, end)));
    } else {
      const chunk = new ArrayBuffer(end - at);
      new Uint8Array(chunk).set(body.subarray(at, end));
      parser.write(chunk);
      new Uint8Array(chunk).fill(0xaa);
    }
    at = end;
    if (i % 3 === 0) await new Promise((r) => setImmediate(r));
  }
  parser.end();
  return parser.done;
}

function randomCuts(length: number, count: number): number[] {
  const cuts = new Set<number>();
  while (cuts.size < count) cuts.add(1 + crypto.randomInt(length - 1));
  return [...cuts].sort((a, b) => a - b);
}

function check(result: MultipartResult, parts: Part[]): void {
  const fields = parts.filter((p) => p.filename === undefined);
  const files = parts.filter((p) => p.filename !== undefined);
  assert.deepEqual(Object.fromEntries(result.fields), Object.fromEntries(fields.map((p) => [p.field, String(p.data)])));
  assert.equal(result.files.length, files.length);
  for (const [i, f] of result.files.entries()) {
    const want = Buffer.from(files[i].data);
    assert.equal(f.filename, files[i].filename);
    assert.equal(f.size, want.length);
    assert.ok(fs.readFileSync(f.path).equals(want), `content of ${f.filename}`);
    fs.rmSync(f.path);
  }
}

describe('MultipartParser', () => {
  const parts: Part[] = [
    { field: 'before', data: 'x'.repeat(3000) + 'é€ end' },
    { field: 'big', filename: 'one.bin', data: crypto.randomBytes(1_500_000) },
    { field: 'middle', data: 'between two files, ' + 'y'.repeat(70_000) },
    { field: 'small', filename: 'two.bin', data: crypto.randomBytes(900) },
    { field: 'third', filename: 'three.bin', data: crypto.randomBytes(600_000) },
    { field: 'after', data: 'last field' },
  ];
  const { body, contentType } = multipart(parts);

  it('keeps fields and files intact when the buffer of each chunk is overwritten after write()', async () => {
    for (let round = 0; round < 12; round++) {
      const cuts = round === 0 ? [] : randomCuts(body.length, [2, 8, 40, 200][round % 4]);
      check(await feed(body, cuts, contentType), parts);
    }
  });

  it('cuts at every boundary and inside every part header', async () => {
    const marks: number[] = [];
    const boundary = body.subarray(0, body.indexOf('\r\n')).toString();
    for (let i = body.indexOf(boundary); i >= 0; i = body.indexOf(boundary, i + 1)) marks.push(i - 1, i, i + 3, i + boundary.length + 20);
    const cuts = [...new Set(marks.filter((m) => m > 0 && m < body.length))].sort((a, b) => a - b);
    check(await feed(body, cuts, contentType), parts);
  });

  it('accepts chunks as Buffers the caller owns', async () => {
    check(await feed(body, randomCuts(body.length, 30), contentType, true), parts);
  });

  it('fails a truncated body and leaves no open file', async () => {
    const parser = new MultipartParser({ contentType, tmpDir, maxFieldBytes: 1 << 20, maxFileBytes: 64 << 20, flow: () => undefined });
    const first = new ArrayBuffer(1_000_000);
    new Uint8Array(first).set(body.subarray(0, first.byteLength));
    parser.write(first);
    parser.end();
    await assert.rejects(parser.done, (e: { code?: string }) => e.code === 'BAD_REQUEST');
    for (const f of parser.tempFiles()) fs.rmSync(f, { force: true });
  });
});
