// multipart/form-data through busboy, streamed: plain fields become form values exactly like
// urlencoded ones (zulip-js sends every POST as multipart); file parts are written to temporary files
// on disk as they arrive, never gathered in memory. The caller feeds chunks and applies backpressure.
//
// Memory: a 100 MB upload arrives as ~200 socket reads of up to 512 KiB. Copying each into a fresh
// buffer and handing it to an asynchronous write stream left ~30 MB of dead copies waiting for V8's
// GC (the write stream never queued more than one chunk: backpressure was not the problem, garbage
// was). So file bytes are written with fs.writeSync while busboy hands them over, and a chunk given
// as uWS's own ArrayBuffer is copied into one of two reused slabs: busboy is done with a slab as soon
// as write() returns, unless it kept part of it (checked in slabIsFree), in which case the slab is
// left to the GC and a fresh one is taken. A synchronous write of one 512 KiB chunk into the page
// cache takes ~0.2 ms: the event loop is held no longer than by parsing the same chunk.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { errors, JsonableError } from './errors';
import type { UploadedFile } from './route';

export interface MultipartOptions {
  contentType: string;
  /** Where file parts go; null: file parts are drained and dropped. */
  tmpDir: string | null;
  maxFieldBytes: number;
  maxFileBytes: number;
  /**
   * Pauses or resumes the producer for one reason. The producer must stay paused while any reason
   * holds. Only 'parser' is used now that file parts are written synchronously; 'file' stays in the
   * type for callers that track reasons by name.
   */
  flow(reason: 'parser' | 'file', paused: boolean): void;
}

export interface MultipartResult {
  fields: Map<string, string>;
  files: UploadedFile[];
}

const SLAB = 512 * 1024; // uWS hands over at most its receive buffer (512 KiB) per onData
const SPARE_SLABS = 2;

/** The busboy 1.6 internal read by slabIsFree: the file part being parsed, if any. */
interface BusboyInternals {
  _fileStream?: Readable | null;
}

/** A streaming multipart parser: write() chunks, end(), then await done. */
export class MultipartParser {
  readonly done: Promise<MultipartResult>;
  private bb: busboy.Busboy;
  private fields = new Map<string, string>();
  private files: UploadedFile[] = [];
  private fileStreams: Readable[] = [];
  private pendingFiles: Promise<void>[] = [];
  private failure: JsonableError | null = null;
  private spare: Buffer[] = [];

  constructor(private readonly opts: MultipartOptions) {
    let resolve!: (r: MultipartResult) => void;
    let reject!: (e: unknown) => void;
    this.done = new Promise((res, rej) => {
      resolve = res;
      reject = rej;
    });
    this.done.catch(() => undefined); // the caller awaits; avoid an unhandled rejection meanwhile
    try {
      this.bb = busboy({
        headers: { 'content-type': opts.contentType },
        defParamCharset: 'utf8',
        limits: { fieldSize: opts.maxFieldBytes, fileSize: opts.maxFileBytes, parts: 1000, fields: 1000 },
      });
    } catch {
      throw errors.badRequest('Malformed multipart body');
    }
    this.bb.on('field', (name, value, info) => {
      if (info.valueTruncated) this.fail(errors.payloadTooLarge(opts.maxFieldBytes));
      else this.fields.set(name, value);
    });
    this.bb.on('file', (field, stream, info) => this.onFile(field, stream, info));
    this.bb.on('partsLimit', () => this.fail(errors.badRequest('Too many parts in multipart body')));
    this.bb.on('fieldsLimit', () => this.fail(errors.badRequest('Too many fields in multipart body')));
    this.bb.on('error', () => {
      this.fail(errors.badRequest('Malformed multipart body'));
      void Promise.all(this.pendingFiles).then(() => reject(this.failure));
    });
    this.bb.on('close', () => {
      void Promise.all(this.pendingFiles).then(() => {
        if (this.failure) reject(this.failure);
        else resolve({ fields: this.fields, files: this.files });
      });
    });
    this.bb.on('drain', () => opts.flow('parser', false));
  }

  private onFile(field: string, stream: Readable, info: busboy.FileInfo): void {
    this.fileStreams.push(stream);
    let settle!: () => void;
    this.pendingFiles.push(new Promise<void>((res) => (settle = res)));
    let fd: number | null = null;
    const close = () => {
      if (fd !== null) {
        try {
          fs.closeSync(fd);
        } catch {
          // nothing was lost that a write did not already report
        }
      }
      fd = null;
      settle();
    };
    // A destroyed part (malformed body) ends with 'error' and 'close' instead of 'end'.
    stream.on('end', close);
    stream.on('close', close);
    stream.on('error', close);
    if (!this.opts.tmpDir || this.failure) {
      stream.resume();
      return;
    }
    const file: UploadedFile = {
      field,
      filename: info.filename ?? '',
      mimeType: info.mimeType || 'application/octet-stream',
      path: path.join(this.opts.tmpDir, `upload-${crypto.randomBytes(12).toString('hex')}.tmp`),
      size: 0,
    };
    try {
      fd = fs.openSync(file.path, 'wx', 0o600);
    } catch (err) {
      this.writeFailed(err);
      stream.resume();
      return;
    }
    this.files.push(file);
    stream.on('data', (chunk: Buffer) => {
      if (fd === null) return;
      file.size += chunk.length;
      try {
        for (let off = 0; off < chunk.length; ) off += fs.writeSync(fd, chunk, off, chunk.length - off);
      } catch (err) {
        this.writeFailed(err);
        try {
          fs.closeSync(fd);
        } catch {
          // already failing
        }
        fd = null;
      }
    });
    stream.on('limit', () =>
      this.fail(
        errors.badRequest('Uploaded file is larger than the allowed limit of {max} MiB', {
          max: Math.floor(this.opts.maxFileBytes / 1024 / 1024),
        }),
      ),
    );
  }

  private writeFailed(err: unknown): void {
    this.fail(errors.internal());
    console.error('parley: writing upload failed', err);
  }

  private fail(err: JsonableError): void {
    this.failure ??= err;
  }

  /**
   * Feeds one chunk: a Buffer the caller owns, or uWS's ArrayBuffer as onData passed it (valid only
   * during this call; it is copied into a reused slab, so no per-chunk garbage).
   */
  write(chunk: Buffer | ArrayBuffer): void {
    if (chunk instanceof ArrayBuffer) {
      const n = chunk.byteLength;
      let slab = this.spare.pop();
      if (!slab || slab.length < n) slab = Buffer.allocUnsafeSlow(Math.max(SLAB, n));
      slab.set(new Uint8Array(chunk));
      const more = this.bb.write(slab.subarray(0, n));
      if (this.slabIsFree() && this.spare.length < SPARE_SLABS) this.spare.push(slab);
      if (!more) this.opts.flow('parser', true);
      return;
    }
    if (!this.bb.write(chunk)) this.opts.flow('parser', true);
  }

  /**
   * Whether busboy kept no reference into the chunk just written. It keeps one when the write was
   * queued (writableLength), when a file part's stream buffered data instead of emitting it (a part
   * is not flowing until the tick after it starts) and when a plain field continues into the next
   * chunk (its pieces are gathered as views until the part ends). The last is not observable from
   * outside, so a slab is reused only when the chunk ended inside a file part: then no field is open.
   * Header and boundary bytes busboy copies itself.
   */
  private slabIsFree(): boolean {
    if (this.bb.writableLength > 0) return false;
    if (!(this.bb as unknown as BusboyInternals)._fileStream) return false;
    for (const s of this.fileStreams) if (s.readableLength > 0) return false;
    return true;
  }

  end(): void {
    this.bb.end();
  }

  /** Files written so far, to delete when the request ends. */
  tempFiles(): string[] {
    return this.files.map((f) => f.path);
  }
}
